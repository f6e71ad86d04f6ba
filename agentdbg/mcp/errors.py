"""The one error an MCP server can cause before any call: it did not start, answer or list tools.

A ``ConfigError`` for the CLI (one line, exit status 2) that also keeps what ``--debug``
shows: the server's stderr (bounded) and the underlying exception.
"""

from __future__ import annotations

from agentdbg.errors import ConfigError
from agentdbg.textsafe import safe


class McpServerError(ConfigError):
    """``MCP server 'name': …`` in one line; ``detail`` and ``stderr`` for ``--debug``."""

    def __init__(self, server: str, message: str, *, detail: str | None = None,
                 stderr: str = ""):
        super().__init__(f"MCP server {server!r}: {one_line(message)}")
        self.server = server
        self.detail = detail
        self.stderr = stderr

    def debug_text(self) -> str:
        """Everything known, for ``--debug`` (already free of terminal escapes)."""
        parts = [self.message]
        if self.detail:
            parts.append(f"detail: {self.detail}")
        if self.stderr:
            parts.append("server stderr (last lines):\n" + self.stderr)
        return "\n".join(parts)


def printable(text: str) -> str:
    """Keep newlines and tabs; show every other control or invisible character as an escape
    (the one rule of ``agentdbg.textsafe``)."""
    return safe(text)


def one_line(text: str, limit: int = 300) -> str:
    """Untrusted text made safe for a one-line message: no newline, no escape, bounded."""
    flat = printable(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
