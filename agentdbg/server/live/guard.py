"""Who may read the live view: a program or browser on this machine holding the URL's token.

Every request must start its path with the token (``/TOKEN/...``), else a 403: the URL is
said once, to the person who started agentdbg. Before that, the proxy's and serve's own
middleware (``server.guard.LocalOnly``) refuses a ``Host`` that is not this server's address
(a page elsewhere whose name resolves to 127.0.0.1 — DNS rebinding — gets nothing even if it
guessed the token) and any request a browser marks as coming from another site's page.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from agentdbg.server.guard import LocalOnly

FORBIDDEN = b"403 Forbidden: the agentdbg live view answers only its own URL, with its token.\n"


async def forbid(send: Send) -> None:
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(FORBIDDEN)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": FORBIDDEN})


class TokenGate:
    """403 unless the path starts with ``/TOKEN``; the app sees the path without it."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.prefix = app, f"/{token}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        head = path[1:].partition("/")[0]
        if not hmac.compare_digest(("/" + head).encode(), self.prefix.encode()):
            await forbid(send)
            return
        rest = path[len(self.prefix):] or "/"
        raw = scope.get("raw_path")
        inner = {**scope, "path": rest,
                 "raw_path": raw[len(self.prefix):] or b"/" if isinstance(raw, bytes) else raw}
        await self.app(inner, receive, send)


def _error(status: int, message: str) -> dict:
    return {"error": {"message": message, "status": status}}


def guarded(app: ASGIApp, token: str, say: Callable[[str], None] | None = None) -> LocalOnly:
    """The live view's app behind both checks (Host and Origin first, then the token)."""
    from agentdbg.server.guard import LocalOnly
    from agentdbg.textsafe import one_line

    def said(text: str) -> None:
        print(one_line(text), flush=True)
    return LocalOnly(TokenGate(app, token), body_of=_error, say=say or said, what="live view")

