"""Who may read the live view: a browser on this machine holding the URL's token.

Every request must start its path with the token (``/TOKEN/...``), else 403: the URL is
printed once, to the person who started agentdbg. Its Host header must name this server by
a loopback name and port, else 403 — a page elsewhere whose own name resolves to 127.0.0.1
(DNS rebinding) gets nothing even if it guessed the token; an ``Origin`` header, when the
browser sends one, must be this server's too. The Host/Origin check is a middleware of its
own so it can give way to the one the proxy and serve get (branch ``proxysafe``); the token
check stays here.
"""

from __future__ import annotations

import hmac

FORBIDDEN = b"403 Forbidden: the agentdbg live view answers only its own URL, with its token.\n"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def loopback_origins(port: int) -> set[str]:
    return {f"{name}:{port}" for name in LOOPBACK_NAMES}


async def forbid(send) -> None:
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(FORBIDDEN)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": FORBIDDEN})


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class HostOriginGuard:
    """403 unless Host is one of ``hosts`` and Origin (if any) is ``http://`` one of them."""

    def __init__(self, app, hosts: set[str]):
        self.app, self.hosts = app, {h.lower() for h in hosts}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            host = (_header(scope, b"host") or "").lower()
            origin = _header(scope, b"origin")
            if host not in self.hosts or (origin is not None and
                                          origin.lower() not in {f"http://{h}" for h in self.hosts}):
                await forbid(send)
                return
        await self.app(scope, receive, send)


class TokenGate:
    """403 unless the path starts with ``/TOKEN``; the app sees the path without it."""

    def __init__(self, app, token: str):
        self.app, self.prefix = app, f"/{token}"

    async def __call__(self, scope, receive, send) -> None:
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


def guarded(app, token: str, port: int):
    """The live view's app behind both checks (Host/Origin first, then the token)."""
    return HostOriginGuard(TokenGate(app, token), loopback_origins(port))
