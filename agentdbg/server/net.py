"""Binding and serving: a socket on loopback, uvicorn on it, the URL to print."""

from __future__ import annotations

import socket
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: an error body in the shape of the API being served: ``body_of(status, message)``
BodyOf = Callable[[int, str], dict]

MAX_BODY = 32 * 1024 * 1024   # proxy and serve: a request body larger than this gets a 413


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; one line naming both when that cannot be (a port in
    use or out of range, an address that is not this machine's or not an address)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: a response's headers and body never wait ~40 ms for
    # the client's delayed ACK
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError, TypeError) as exc:
        from agentdbg.errors import ConfigError
        from agentdbg.i18n import N_, Msg

        sock.close()
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(Msg(N_("cannot listen on {host} port {port}: {why}"),
                              {"host": host, "port": port, "why": why})) from None
    sock.listen(2048)  # bursts of clients (and those before the loop starts) wait here, not retry
    sock.set_inheritable(True)
    return sock


def raise_file_limit(most: int = 65536) -> None:
    """Let this process open as many descriptors as it is allowed to (up to ``most``): a server
    holds one per client and, for the proxy, one per upstream connection."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = most if hard == resource.RLIM_INFINITY else min(hard, most)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ImportError, OSError, ValueError):
        pass


def run_app(app: ASGIApp, sock: socket.socket, *, on_ready: Callable[[], object] | None = None
            ) -> None:
    """Serve ``app`` on an already bound socket until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    # the protocol classes (httptools, websockets) and the event loop's module load before the
    # URL is printed: done by the server's start, they delayed the first request by tens of ms
    config.load()
    config.get_loop_factory()
    if on_ready is not None:
        on_ready()
    server.run(sockets=[sock])


class Background:
    """An ASGI app served by uvicorn on a thread of its own (its own event loop)."""

    def __init__(self, app: ASGIApp, sock: socket.socket, name: str) -> None:

        import uvicorn

        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       name=name, daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/v1"


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes | None:
    """The request's body, or None past ``limit`` bytes. An oversized body is read on and dropped
    (up to 4x the limit) so the client, still sending, gets to read the 413."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > 4 * limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > 4 * limit:
            return None
        if size <= limit:
            chunks.append(chunk)
    return b"".join(chunks) if size <= limit else None


def json_response(content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None
                  ) -> JSONResponse:
    """Starlette's ``JSONResponse`` whose text always encodes: a lone surrogate in it (valid in
    JSON, from a request's ``"\\ud800"``) goes out as the ``\\ud800`` escape, never a
    ``UnicodeEncodeError``."""
    from starlette.responses import JSONResponse

    class _Answer(JSONResponse):
        def render(self, content: Any) -> bytes:
            from agentdbg.messages import utf8_json

            return utf8_json(content, allow_nan=False, separators=(",", ":")).encode("utf-8")

    return _Answer(content, status_code=status_code, headers=headers)


def json_errors(body_of: BodyOf, what: str) -> dict[Any, Callable[..., Awaitable[Response]]]:
    """Starlette ``exception_handlers`` that answer in JSON, in the shape ``body_of(status,
    message)`` gives: an unknown path or method (404, 405), and a failure of agentdbg's own code
    (500: ``agentdbg WHAT failed on this request (TypeError)``). Starlette re-raises the
    failure after answering; ``Contained`` ends it there."""
    from starlette.exceptions import HTTPException

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return json_response(body_of(exc.status_code, str(exc.detail)), status_code=exc.status_code,
                             headers=exc.headers)

    async def failed(request: Request, exc: Exception) -> Response:
        return json_response(body_of(500, f"agentdbg {what} failed on this request "
                                          f"({type(exc).__name__})"), status_code=500)

    return {HTTPException: http_error, Exception: failed}


class Contained:
    """An ASGI app whose failures end here: one line through ``say`` (the caller escapes and
    redacts it), never a traceback from the server. A failure before the response started (an
    app without ``json_errors``) is answered with ``body_of(500, …)`` as JSON."""

    def __init__(self, app: ASGIApp, body_of: BodyOf, what: str, say: Callable[[str], None]) -> None:
        self.app, self.body_of, self.what, self.say = app, body_of, what, say
        self.state = getattr(app, "state", None)   # what tests and callers read off the app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)
        try:
            await self.app(scope, receive, sending)
        except Exception as exc:  # noqa: BLE001 - a failure here is one line, never a traceback
            from agentdbg.i18n import _

            said = f"agentdbg {self.what}: " + _("failed on {method} {path}: {error}: {why}").format(
                method=scope.get("method"), path=repr(scope.get("path")), error=type(exc).__name__,
                why=exc)
            self.say(" ".join(said.splitlines()))
            if not started:
                import json

                data = json.dumps(self.body_of(500, f"agentdbg {self.what} failed on this request "
                                                    f"({type(exc).__name__})")).encode()
                await send({"type": "http.response.start", "status": 500,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(data)).encode())]})
                await send({"type": "http.response.body", "body": data})
