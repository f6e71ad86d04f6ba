"""Secrets a server was started with, kept out of every message agentdbg or the SDK writes.

``register()`` adds a server's ``McpServerConfig.secret_values()`` (what a ``${VAR}`` put
anywhere, the URL's password, env/header/query values whose names say secret); ``redact()``
replaces them in text agentdbg builds (errors, results, stderr), and a logging filter on the
SDK's and httpx2's loggers does the same for their log records (httpx2 logs every request URL
at INFO).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

MIN_SECRET = 4            # shorter values would blank out ordinary words
MASK = "***"
LOGGER_PREFIXES = ("mcp", "httpx", "httpcore", "client")   # "client": the SDK session's logger

_secrets: set[str] = set()
_ordered: tuple[str, ...] = ()
_lock = threading.Lock()


def register(values: Iterable[str]) -> None:
    global _ordered
    with _lock:
        _secrets.update(v for v in values if len(v) >= MIN_SECRET)
        _ordered = tuple(sorted(_secrets, key=len, reverse=True))   # "Bearer x" before "x"
    _install_filter()


def redact(text: str) -> str:
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not _ordered:
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken record is the logger's business
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


_FILTER = RedactingFilter()


def _install_filter() -> None:
    """On every SDK/httpx2 logger that exists now (they are made when their module is imported)."""
    for name in [n for n in list(logging.root.manager.loggerDict) if n.startswith(LOGGER_PREFIXES)]:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
