"""The ``agentdbg`` program's first lines, before the command line's modules load.

Loading them (typer, click, the chosen command's module) is the first tenth of a second of
every run, and a Ctrl-C then lands in an import: here it ends the run with one line and 130,
not a traceback. A Ctrl-C that lands while Python runs a finalizer or a weakref callback
(an import's module-lock callback, say) is one Python drops after printing "Exception ignored
in: ...", and the command would start anyway, waiting for a second Ctrl-C: the hook installed
here delivers it again. Only ``sys`` and ``agentdbg.errors`` are imported before the hook
is in place; what remains is the console script's own ``import re, sys`` (pip writes it).
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from agentdbg.errors import redeliver_interrupts

        redeliver_interrupts()
        from agentdbg.cli import main as run
    except KeyboardInterrupt:   # the language is not chosen yet: the default's words
        print("agentdbg: interrupted (Ctrl-C)", file=sys.stderr)
        sys.exit(130)
    run()
