"""Helpers shared by tests in several folders.

They live here, not in ``conftest.py``: there are several ``conftest.py``
files under ``tests/`` and ``from support import ...`` picks whichever was
imported first, so a whole-tree run would break.
"""

import sys
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def scripted(*turns):
    """A scripted model that answers with ``turns`` in order."""
    from agentdbg.providers.scripted import ScriptedModel, parse_turns

    return ScriptedModel(parse_turns(list(turns), "<test>"), "<test>")


class QuietServer(ThreadingHTTPServer):
    """A test's HTTP server: a client that went away mid-answer (BrokenPipe, ConnectionReset) is
    not printed as a traceback into the test run's output; other errors are, as usual."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)
