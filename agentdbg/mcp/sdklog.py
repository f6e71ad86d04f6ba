"""What the MCP SDK logs, as agentdbg's one-line warnings: never the SDK's tracebacks.

The SDK logs a server's junk with ``logger.exception`` (a line on a stdio server's stdout
that is not JSON-RPC: 34 lines of traceback; an HTTP answer that is not JSON-RPC: 67 lines
before agentdbg's own error). Its loggers get one handler here: each record becomes one
escaped, redacted ``agentdbg: warning: MCP: …`` line on stderr, the same line once. While
servers start the lines are held: a start that fails is agentdbg's one error line alone;
one that succeeds prints what was held.
"""

from __future__ import annotations

import logging
import sys
import threading

from agentdbg.mcp import redact
from agentdbg.textsafe import one_line

ROOTS = ("mcp", "client")          # the SDK's loggers ("client": its session's)
MAX_TEXT = 300


class OneLine(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._said: set[str] = set()
        self._held: list[str] | None = None
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = _line(record)
        except Exception:  # noqa: BLE001 - a broken record is not worth a traceback either
            return
        with self._lock:
            if line in self._said:
                return
            self._said.add(line)
            if self._held is not None:
                self._held.append(line)
                return
        print(line, file=sys.stderr, flush=True)

    def hold(self) -> None:
        with self._lock:
            self._held = []

    def let_go(self, show: bool) -> None:
        """Print what was held (``show``) or drop it (the start failed: its error says it)."""
        with self._lock:
            held, self._held = self._held or [], None
        for line in held if show else ():
            print(line, file=sys.stderr, flush=True)


def _line(record: logging.LogRecord) -> str:
    text = record.getMessage()
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        said = " ".join(ln.strip() for ln in str(exc).splitlines()
                        if ln.strip() and not ln.strip().startswith("For further information"))
        text = f"{text}: {type(exc).__name__}: {said}" if said else f"{text}: {type(exc).__name__}"
    text = redact.redact(text)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + "…"
    return f"agentdbg: warning: MCP: {one_line(text)}"


HANDLER = OneLine()


def install() -> OneLine:
    """Route the SDK's loggers through ``HANDLER`` (idempotent); they no longer reach the
    root logger's last-resort handler, which prints tracebacks."""
    for name in ROOTS:
        logger = logging.getLogger(name)
        if HANDLER not in logger.handlers:
            logger.addHandler(HANDLER)
        logger.propagate = False
    return HANDLER
