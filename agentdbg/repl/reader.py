"""Where step mode reads its commands: a prompt on a terminal, plain lines from a pipe.

On a terminal, prompt_toolkit's prompt (history, completion, Ctrl-L clears the screen). From
a pipe or a file, each line is read as it is and shown once after the prompt, so a piped
session reads like a typed one (prompt_toolkit would echo every command twice there).
"""

from __future__ import annotations

import sys
from typing import Any


class PipedLines:
    """Commands from a non-terminal stdin, echoed once through the console."""

    def __init__(self, console: Any, stream: Any = None):
        self.console = console
        self.stream = stream if stream is not None else sys.stdin

    def prompt(self, message: str, **_kw: Any) -> str:
        line = self.stream.readline()
        if not line:
            raise EOFError
        line = line.rstrip("\r\n")
        from rich.text import Text

        from agentdbg.render.safe import safe

        self.console.print(Text(message + safe(line)), soft_wrap=True)
        return line


def prompt_session(completer: Any, io: dict, history: bool) -> Any:
    """prompt_toolkit's session with the command history kept in the data folder."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from agentdbg.paths import data_dir

    hist: InMemoryHistory | FileHistory = InMemoryHistory()
    if history:
        try:
            path = data_dir() / "history"
            path.parent.mkdir(parents=True, exist_ok=True)
            hist = FileHistory(str(path))
        except OSError:
            pass
    return PromptSession(history=hist, completer=completer, complete_while_typing=False, **io)


def piped(io: dict) -> bool:
    """Commands come from a pipe or a file, not a person at a terminal."""
    if io.get("input") is not None:
        return False
    try:
        return not sys.stdin.isatty()
    except (AttributeError, ValueError):
        return True
