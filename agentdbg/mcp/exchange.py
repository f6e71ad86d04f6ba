"""A bounded record of the JSON-RPC messages between agentdbg and one MCP server.

The transport's two streams are wrapped: every message is logged in the server's ring
(the last ``SERVER_RING`` messages, for ``--debug`` after a failed start) and, when it
belongs to a tool call, in that call's own ``Exchange`` (for step mode's view of one call).
A message belongs to a call when it is sent from the call's task (the request itself, a
``notifications/cancelled``, a re-list) or answers / reports progress on that request's id.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SERVER_RING = 200         # messages kept per server
CALL_MESSAGES = 64        # messages kept per call
MESSAGE_CHARS = 20_000    # one logged message larger than this is cut

current_exchange: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "agentdbg_mcp_exchange", default=None)


@dataclass
class Exchange:
    """The messages of one call, oldest first; ``dropped`` counts those past the bound."""

    messages: list[dict] = field(default_factory=list)
    dropped: int = 0
    request_id: Any = None

    def add(self, entry: dict) -> None:
        if len(self.messages) < CALL_MESSAGES:
            self.messages.append(entry)
        else:
            self.dropped += 1


class MessageLog:
    """All messages of one server connection (bounded) and the routing to calls."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.epoch = clock()
        self.ring: deque[dict] = deque(maxlen=SERVER_RING)
        self._by_id: dict[Any, Exchange] = {}
        self._lock = threading.Lock()

    def record(self, direction: str, message: Any) -> None:
        """``direction``: "send" (to the server) or "recv"; ``message``: an SDK JSON-RPC model."""
        data = _as_dict(message)
        entry = {"dir": direction, "t": round(self.clock() - self.epoch, 6), "message": _bounded(data)}
        exchange = current_exchange.get() if direction == "send" else None
        with self._lock:
            self.ring.append(entry)
            if exchange is not None:
                if data.get("method") == "tools/call" and "id" in data:
                    exchange.request_id = data["id"]
                    self._by_id[data["id"]] = exchange
                exchange.add(entry)
            elif direction == "recv" and self._by_id:
                target = self._by_id.get(_related_id(data))
                if target is not None:
                    target.add(entry)

    def forget(self, exchange: Exchange) -> None:
        with self._lock:
            self._by_id.pop(exchange.request_id, None)

    def recent(self) -> list[dict]:
        with self._lock:
            return list(self.ring)


def _related_id(data: dict) -> Any:
    if "id" in data and "method" not in data:      # a response or an error
        return data["id"]
    params = data.get("params")
    if not isinstance(params, dict):
        return None
    return params.get("progressToken", params.get("requestId"))


def _as_dict(message: Any) -> dict:
    if isinstance(message, dict):
        return message
    try:
        return message.model_dump(by_alias=True, mode="json", exclude_unset=True)
    except Exception as exc:  # noqa: BLE001 - a log entry must never break the connection
        return {"unloggable": f"{type(message).__name__}: {exc}"}


def _bounded(data: dict) -> dict:
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) <= MESSAGE_CHARS:
        return data
    return {"truncated": text[:MESSAGE_CHARS], "chars": len(text)}


class LoggedReadStream:
    """Wraps the transport's read stream (SDK ``ReadStream`` protocol)."""

    def __init__(self, inner: Any, log: MessageLog):
        self._inner, self._log = inner, log

    def _seen(self, item: Any) -> Any:
        message = getattr(item, "message", None)
        if message is not None:
            self._log.record("recv", message)
        return item

    async def receive(self) -> Any:
        return self._seen(await self._inner.receive())

    def __aiter__(self) -> LoggedReadStream:
        return self

    async def __anext__(self) -> Any:
        return self._seen(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> LoggedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:  # e.g. the SDK's ``last_context``
        return getattr(self._inner, name)


class LoggedWriteStream:
    """Wraps the transport's write stream (SDK ``WriteStream`` protocol)."""

    def __init__(self, inner: Any, log: MessageLog):
        self._inner, self._log = inner, log

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if message is not None:
            self._log.record("send", message)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> LoggedWriteStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
