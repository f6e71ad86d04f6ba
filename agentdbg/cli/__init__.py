"""The ``agentdbg`` command line: thin commands that parse, build a session and hand it to a driver."""

from __future__ import annotations

import importlib
from types import FrameType

from agentdbg.cli.app import app

# each registers its commands, in --help order
for _module in ("run", "share", "inspect", "servers", "traces", "trust"):
    importlib.import_module(f"agentdbg.cli.{_module}")


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    from agentdbg.errors import Terminated

    raise Terminated()


#: the variable a shell's completion script sets when it asks for completions
COMPLETE_VAR = "_AGENTDBG_COMPLETE"


def main() -> None:
    import os
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    if COMPLETE_VAR in os.environ:  # a shell asking (see 'agentdbg completion'): typer answers
        from typer.completion import completion_init

        completion_init()
    app(prog_name="agentdbg")   # also under `python -m agentdbg`: one name, one completion variable


__all__ = ["app", "main"]
