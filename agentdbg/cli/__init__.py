"""The ``agentdbg`` command line: thin commands that parse, build a session and hand it to a driver."""

from __future__ import annotations

import importlib

from agentdbg.cli.app import app

# each registers its commands, in --help order
for _module in ("run", "share", "inspect", "servers", "trust"):
    importlib.import_module(f"agentdbg.cli.{_module}")


def _on_sigterm(signum, frame):
    from agentdbg.errors import Terminated

    raise Terminated()


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    app()


__all__ = ["app", "main"]
