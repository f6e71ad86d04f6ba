"""The proxy's HTTP side: relay bytes, hand everything else to the analyst.

Each ``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` is forwarded
with the app's own headers (its ``Authorization``, ``api-key`` or ``x-api-key`` is never
stored, printed or logged) and the query string; the response is relayed unchanged — a
plain body as received, a stream chunk by chunk as it arrives. Checking, the view and
transcripts happen on the analyst's side, never on the event loop. Other ``/v1/...`` paths
pass through, within the upstream's base path; POSTs agentdbg cannot check are said so once.
"""

from __future__ import annotations

import asyncio
import posixpath
import socket
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit, urlunsplit

from agentdbg.i18n import _
from agentdbg.messages import utf8_json
from agentdbg.server.guard import LocalOnly
from agentdbg.server.net import MAX_BODY, Contained, json_errors, json_response, read_body
from agentdbg.server.proxy.analyst import Exchange, Verdict
from agentdbg.server.proxy.batches import batches
from agentdbg.server.proxy.copies import Budget, Copy
from agentdbg.server.proxy.headers import forward_headers, relayed_headers, secrets_in
from agentdbg.server.proxy.upstream import Answer, PoolTimeout, Upstream, UpstreamError
from agentdbg.transcript.redact import safe_url
from agentdbg.wire import codec as codecs
from agentdbg.wire.codec import Codec

if TYPE_CHECKING:
    import httpx
    from starlette.requests import Request
    from starlette.responses import Response

    from agentdbg.checker.findings import Finding
    from agentdbg.server.proxy.workers import _Analyst

#: a request's headers and body leave in one segment: no ~40 ms delayed-ACK stall per request
NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
IDLE = 32           # idle upstream connections kept for reuse
POOL_WAIT = 10.0    # seconds a request waits for a connection when all of them are busy
URLS_KEPT = 256     # parsed upstream URLs kept (one per path and query the app uses)
SECRETS_KEPT = 4096 # keys the analyst was already given (each is handed over once)


@dataclass
class ProxyOptions:
    upstream: str
    profile: str = "openai"
    block_invalid: bool = False
    full: bool = False
    timeout: float = 600.0
    max_body: int = MAX_BODY
    connections: int = 0            # most upstream connections at once (0: from the file limit)
    secret_headers: tuple[str, ...] = ()     # --secret-header: more headers whose values are keys
    allow_origins: tuple[str, ...] = ()      # --allow-origin: web pages that may use the proxy
    allow_hosts: tuple[str, ...] = ()        # --allow-host: names the proxy answers besides its own


@dataclass
class Failed:
    """No response from the upstream: what the proxy answers instead."""

    status: int
    message: str
    code: str
    error: str = ""                  # the client library's exception, by name


@dataclass
class Decision:
    """What the interceptor decided for one request."""

    action: str = "forward"          # forward | respond | block
    body: dict | None = None         # the body to forward
    reply: dict | None = None        # respond: the assistant message to answer with
    changed: bool = False            # the body was edited: send it re-encoded


def error_body(message: str, type_: str = "invalid_request_error", code: str | None = None,
               **extra: object) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code, **extra}}


def blocked_response(findings: list[Finding], wire: Codec | None = None) -> dict:
    """The 400 ``--block-invalid`` answers, in the format's own error shape."""
    wire = wire or codecs.get("chat")
    errors = [f for f in findings if f.severity == "error"]
    summary = "; ".join(f"{f.rule} at {f.path or f'messages[{f.index}]'}" if f.index is not None
                        else f.rule for f in errors)
    return wire.error(400, f"agentdbg proxy blocked this request: {len(errors)} protocol "
                           f"error(s): {summary}", code="agentdbg_blocked",
                      findings=[f.to_dict() for f in findings])


def inside(base_path: str, rest: str) -> str | None:
    """``rest`` (a request path after /v1, percent-decoded) joined to the upstream's base
    path, or None when it would leave it (``..`` segments, encoded or not)."""
    joined = posixpath.normpath(posixpath.join("/", unquote(rest).lstrip("/")))
    if joined.startswith("/..") or "/../" in joined + "/":
        return None
    return base_path.rstrip("/") + (joined if joined != "/" else "")


class ProxyApp:
    """The starlette app of ``agentdbg proxy``."""

    def __init__(self, options: ProxyOptions, analyst: _Analyst, intercept: Callable | None = None) -> None:
        import httpx

        self.options = options
        self.analyst = analyst
        self.intercept = intercept
        # the upstream's own query (Azure's ?api-version=...) goes on every request's query,
        # not into its path
        parts = urlsplit(options.upstream)
        self.upstream_query = parts.query
        self.upstream = urlunsplit(parts._replace(query="", fragment="")).rstrip("/")
        self.shown = safe_url(self.upstream)          # for messages: without its credentials
        self.base = httpx.URL(self.upstream)
        # one connection per request in flight (a long stream never holds up another request),
        # up to what the descriptor limit allows; a few idle ones are kept: httpcore's pool slows
        # down as it grows
        self.connections = options.connections or connection_cap()
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(options.timeout, pool=POOL_WAIT),
            transport=httpx.AsyncHTTPTransport(socket_options=NODELAY, limits=httpx.Limits(
                max_connections=self.connections, max_keepalive_connections=IDLE)))
        # the checked endpoints' requests: httptools reads their answers (see ``upstream``)
        self.upstream_client = Upstream(options.timeout, POOL_WAIT, self.connections, IDLE)
        self.copies = Budget()
        self._told: set[str] = set()
        self._urls: dict[tuple[str, bytes, str], httpx.URL] = {}
        every = codecs.every()
        self._key_headers = (*options.secret_headers, *(h for c in every for h in c.secret_headers))
        self._key_params = tuple(p for c in every for p in c.secret_params)
        self._handed: set[str] = set()

    def starlette(self) -> Contained:
        from starlette.applications import Starlette
        from starlette.routing import Route

        methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        routes = []
        for wire in codecs.every():
            handler = self._handler(wire)
            routes += [Route(path, handler, methods=["POST"]) for path in wire.routes()]
            for path in wire.routes():   # parsed now, not on the first request (no query of its own)
                if "{" not in path:
                    self._parsed(path, b"", wire, self.upstream_query)
        app = Starlette(routes=[*routes, Route("/v1/{path:path}", self.passthrough, methods=methods)],
                        exception_handlers=json_errors(_proxy_error, "proxy"))
        app.state.proxy = self
        guarded = LocalOnly(app, body_of=_proxy_error, say=self.analyst.note, what="proxy",
                            allow_origins=self.options.allow_origins,
                            allow_hosts=self.options.allow_hosts)
        return Contained(guarded, _proxy_error, "proxy", self.analyst.note)

    # -- the checked endpoints: chat completions, responses, messages --------------------
    def _handler(self, wire: Codec) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            return await self.exchange(request, wire)
        return handle

    async def exchange(self, request: Request, wire: Codec) -> Response:
        raw = await self._body(request)
        if raw is None:
            return json_response(wire.error(413, f"request body larger than {self.options.max_body} "
                                                "bytes", code="request_too_large"), status_code=413)
        self._remember_keys(request)
        client = f"{request.client.host}:{request.client.port}" if request.client else None
        waits = self.intercept is not None or self.options.block_invalid
        exchange = self.analyst.request(raw, client, want_verdict=waits, wire=wire.name)
        sent = raw
        if waits:
            verdict: Verdict = await asyncio.wrap_future(exchange.verdict)
            if verdict.note is not None:  # not a body of its format: forwarded unchecked
                return await self._forward(request, exchange, raw, wire)
            decision = (await self.intercept(verdict.conversation, verdict.body, verdict.findings,
                                             wire=wire.name)
                        if self.intercept is not None else Decision(body=verdict.body))
            if decision.action == "block" or (self.options.block_invalid and verdict.blocking):
                self.analyst.blocked(exchange)
                return json_response(blocked_response(verdict.findings, wire), status_code=400)
            if decision.action == "respond":
                return self._scripted(exchange, decision.body or verdict.body or {},
                                      decision.reply or {}, wire)
            if decision.changed and decision.body is not None:
                self.analyst.edited(exchange, decision.body)
                sent = utf8_json(decision.body).encode("utf-8")
        return await self._forward(request, exchange, sent, wire)

    async def _body(self, request: Request) -> bytes | None:
        """The body, or None past ``max_body`` (see ``net.read_body``)."""
        return await read_body(request, self.options.max_body)

    def _remember_keys(self, request: Request) -> None:
        for secret in secrets_in(request.headers, self._key_headers):
            self._hand_secret(secret)
        if request.scope.get("query_string"):
            for name in self._key_params:      # Gemini's ?key=
                token = request.query_params.get(name, "")
                if token:
                    self._hand_secret(token)

    def _hand_secret(self, secret: str) -> None:
        """The analyst gets each key once (it keeps every key it was given): the app's key on
        every request was one more job on the analyst's queue per request."""
        if secret in self._handed:
            return
        if len(self._handed) < SECRETS_KEPT:
            self._handed.add(secret)
        self.analyst.add_secret(secret)

    def _query(self, request: Request) -> str:
        """The upstream's query and the request's, as one: a parameter the request sets itself
        replaces the upstream's of that name."""
        own = request.url.query
        if not self.upstream_query or not own:
            return own or self.upstream_query
        names = {name for name, _ in parse_qsl(own, keep_blank_values=True)}
        kept = [piece for piece in self.upstream_query.split("&")
                if piece and unquote_plus(piece.partition("=")[0]) not in names]
        return "&".join([*kept, own])

    async def _forward(self, request: Request, exchange: Exchange, sent: bytes, wire: Codec) -> Response:
        from agentdbg.server.proxy.relayed import Relayed

        start = time.perf_counter()
        resp = await self._post(self._url(request, wire), forward_headers(request.headers), sent)
        if isinstance(resp, Failed):
            self.analyst.upstream_failed(exchange, resp.message, resp.status)
            return json_response(wire.error(resp.status, resp.message, type_="proxy_error",
                                            code=resp.code), status_code=resp.status)
        media = resp.headers.get("content-type", "application/json")
        stream = "text/event-stream" in media
        relay = self._relay(exchange, resp, start, wire.stream_end if stream else None)
        return Relayed(relay, status_code=resp.status_code, media_type=media,
                       headers=relayed_headers(resp.headers))

    def _url(self, request: Request, wire: Codec) -> httpx.URL:
        """The upstream URL of a checked request, parsed once per path and query (httpx's
        ``build_request`` parsed it on every request: the largest part of a tenth of the
        relay's CPU per request)."""

        scope = request.scope
        url = self._urls.get((scope["path"], scope.get("query_string", b""), wire.name))
        if url is None:
            url = self._parsed(scope["path"], scope.get("query_string", b""), wire,
                               self._query(request), request.url.path)
        return url

    def _parsed(self, path: str, raw_query: bytes, wire: Codec, query: str,
                url_path: str | None = None) -> httpx.URL:
        import httpx

        text = wire.upstream_url(self.upstream, url_path or path) + (f"?{query}" if query else "")
        if len(self._urls) >= URLS_KEPT:
            self._urls.clear()
        url = self._urls[(path, raw_query, wire.name)] = httpx.URL(text)
        return url

    async def _post(self, url: httpx.URL, headers: dict[str, str], body: bytes) -> Answer | Failed:
        """As ``_send``, for a checked endpoint's POST (``upstream``'s client)."""
        try:
            return await self.upstream_client.send(url, headers, body)
        except PoolTimeout:
            return self._busy()
        except UpstreamError as exc:
            return self._unreachable(exc)

    def _busy(self) -> Failed:
        return Failed(503, f"agentdbg proxy: all {self.connections} connections to the upstream "
                           f"{self.shown} are busy (waited {POOL_WAIT:g} s); try again",
                      "proxy_connections_busy")

    def _unreachable(self, exc: Exception) -> Failed:
        return Failed(502, f"agentdbg proxy could not reach the upstream {self.shown}: "
                           f"{type(exc).__name__}", "upstream_unreachable", type(exc).__name__)

    async def _send(self, req: httpx.Request) -> httpx.Response | Failed:
        """The upstream's response (its body not read yet), or ``Failed`` when there is none:
        the upstream could not be reached, or every connection is busy."""
        import httpx

        try:
            return await self.client.send(req, stream=True)
        except httpx.PoolTimeout:
            return self._busy()
        except httpx.HTTPError as exc:
            return self._unreachable(exc)

    async def _relay(self, exchange: Exchange, resp: Answer, start: float,
                     ends: tuple[bytes, ...] | None) -> AsyncIterator[bytes]:
        """The upstream's bytes as they arrive, unchanged (compressed or not); the analyst gets a
        bounded copy, handed over before the last chunk goes out so the app's next request
        comes after it. A stream (``ends``: its last event's markers) goes out as it arrives, what
        arrived during the last write joined in one (``batches``); a body holds back its last
        chunk until the upstream has sent all of it."""
        copy = Copy(self.copies)
        held: bytes | None = None
        handed = False
        try:
            # the connection's reads, no re-chunking; a stream's in batches (httpx declares
            # aiter_raw an AsyncIterator: it is an async generator, which aclosing closes)
            raw = cast("AsyncGenerator[bytes, None]", resp.aiter_raw())
            async with aclosing(raw if ends is None else
                                batches(raw)) as chunks:
                async for chunk in chunks:
                    copy.add(chunk)
                    if ends is None:
                        if held is not None:
                            yield held
                        held = chunk
                        continue
                    if not handed and any(end in chunk for end in ends):
                        handed = True
                        self._hand(exchange, resp, copy, start, stream=True)
                    yield chunk  # to the app as it arrives
            if not handed:
                handed = True
                self._hand(exchange, resp, copy, start, stream=ends is not None)
            if held is not None:
                yield held
        finally:
            await resp.aclose()
            if not handed:   # cut short (the app or the upstream went away): what arrived
                self._hand(exchange, resp, copy, start, stream=ends is not None)

    def _hand(self, exchange: Exchange, resp: Answer, copy: Copy, start: float, stream: bool) -> None:
        self.analyst.response(exchange, resp.status_code, copy.release(), _ms(start), stream=stream,
                              received=copy.received, cut_by=copy.cut_by,
                              encoding=resp.headers.get("content-encoding"))

    def _scripted(self, exchange: Exchange, body: dict, reply: dict, wire: Codec) -> Response:
        from starlette.responses import StreamingResponse

        self.analyst.scripted(exchange, body, reply)
        payload = wire.answer(reply, body, None, None)
        if body.get("stream"):
            return StreamingResponse(wire.stream(payload, body), media_type="text/event-stream")
        return json_response(payload)

    # -- everything else ----------------------------------------------------------------
    async def passthrough(self, request: Request) -> Response:
        import httpx
        from starlette.responses import StreamingResponse

        rest = request.url.path[len("/v1"):]
        path = inside(self.base.path, rest)
        if path is None:
            return json_response(error_body("path leaves the upstream's base path"), status_code=400)
        try:
            url = str(self.base.copy_with(path=path, query=self._query(request).encode() or None))
        except (httpx.InvalidURL, ValueError):   # a control character: no URL carries it
            self.analyst.note(_("refused {method} {path}: the path holds a character a URL cannot "
                                "carry").format(method=request.method, path=f"/v1{rest}"))
            return json_response(error_body("path holds a character a URL cannot carry (a "
                                           "control character); not forwarded"), status_code=400)
        self._tell_unchecked(request.method, rest)
        raw = await self._body(request)
        if raw is None:
            return json_response(error_body(f"request body larger than {self.options.max_body} "
                                           "bytes", code="request_too_large"), status_code=413)
        self._remember_keys(request)
        resp = await self._send(self.client.build_request(
            request.method, url, content=raw, headers=forward_headers(request.headers)))
        if isinstance(resp, Failed):
            if resp.status == 502:
                message = f"agentdbg proxy could not reach {self.shown}: {resp.error}"
                return json_response(error_body(message, "proxy_error"), status_code=502)
            self.analyst.note(resp.message)
            return json_response(error_body(resp.message, "proxy_error", resp.code),
                                 status_code=resp.status)
        return StreamingResponse(_passed(resp), status_code=resp.status_code,
                                 media_type=resp.headers.get("content-type"),
                                 headers=relayed_headers(resp.headers))

    def _tell_unchecked(self, method: str, rest: str) -> None:
        if method != "POST" or rest in self._told:
            return
        self._told.add(rest)
        self.analyst.note(_("POST {path} is passed through unchecked: agentdbg checks "
                            "/v1/chat/completions, /v1/responses and /v1/messages").format(path=f"/v1{rest}"))


def _proxy_error(status: int, message: str) -> dict:
    """The proxy's own errors (not the upstream's): the OpenAI error shape."""
    return error_body(message, "proxy_error" if status >= 500 else "invalid_request_error")


async def _passed(resp: httpx.Response) -> AsyncIterator[bytes]:
    """An unchecked response's bytes as they arrive, unchanged; nothing kept."""
    try:
        async for chunk in resp.aiter_raw():
            yield chunk
    finally:
        await resp.aclose()


def connection_cap(reserve: int = 64, most: int = 1024) -> int:
    """How many upstream connections may be open at once: each request in flight holds one, and
    its client another, so half of the descriptors the process may open (less a reserve)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return most
    if soft == resource.RLIM_INFINITY:
        return most
    return max(8, min(most, (soft - reserve) // 2))


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


#: the parts of anyio (which loads each on first use) that httpcore's first connection and a
#: streamed answer use
ANYIO_FIRST_USE = ("connect_tcp", "create_memory_object_stream", "create_task_group", "fail_after",
                   "sleep", "lowlevel", "EndOfStream", "BrokenResourceError", "ClosedResourceError")


def warm_relay() -> None:
    """Load at start what the relay's first request would load: the first upstream connection
    imports anyio's backend, socket and stream modules (anyio loads its parts on first use), a
    relayed answer starlette's streaming response. Done on that request, they added tens of ms to it
    (a few hundred on a loaded machine)."""
    import anyio
    import anyio._backends._asyncio  # anyio's backend, loaded by its first call
    import anyio.streams.stapled
    import anyio.streams.tls
    from starlette.responses import StreamingResponse  # noqa: F401

    import agentdbg.server.proxy.relayed  # noqa: F401  (the relayed answers' response)

    for name in ANYIO_FIRST_USE:
        getattr(anyio, name)


def make_app(options: ProxyOptions, analyst: _Analyst, intercept: Callable | None = None) -> Contained:
    warm_relay()
    return ProxyApp(options, analyst, intercept).starlette()
