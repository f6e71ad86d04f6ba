"""The proxy's HTTP side (starlette app, httpx upstream client).

Each ``POST /v1/chat/completions`` is checked (the request's own tools and
tool_choice, plus the cross-request rules), shown in the messages view, then
forwarded with the app's own ``Authorization`` header. Responses are relayed
unchanged: plain bodies as received, streams chunk by chunk as they arrive, while
a copy is accumulated to rebuild the assistant message. Other ``/v1/...`` paths
pass through. The ``Authorization`` header is never stored, printed or logged.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from agentdbg.checker import check, has_errors
from agentdbg.server.proxy.conversations import Tracker
from agentdbg.wire.chat import StreamAccumulator

HOP_BY_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
              "trailer", "upgrade", "proxy-authorization", "proxy-connection", "accept-encoding"}


@dataclass
class ProxyOptions:
    upstream: str
    profile: str = "openai"
    block_invalid: bool = False
    full: bool = False
    timeout: float = 600.0


@dataclass
class Decision:
    """What the interceptor decided for one request."""
    action: str = "forward"          # forward | respond | block
    body: dict | None = None         # the body to forward
    reply: dict | None = None        # respond: the assistant message to answer with
    changed: bool = False            # the body was edited: send it re-encoded


def forward_headers(headers) -> dict:
    out = {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}
    out["accept-encoding"] = "identity"  # relay bytes exactly as the upstream sent them
    return out


def relayed_headers(headers) -> dict:
    """The upstream's response headers an app may read (request ids, rate limits ...)."""
    return {k: v for k, v in headers.items()
            if k.lower() not in HOP_BY_HOP | {"content-type", "content-encoding", "date", "server"}}


def blocked_response(findings) -> dict:
    errors = [f for f in findings if f.severity == "error"]
    summary = "; ".join(f"{f.rule} at messages[{f.index}]" if f.index is not None else f.rule
                        for f in errors)
    return {"error": {"message": f"agentdbg proxy blocked this request: {len(errors)} protocol "
                                 f"error(s): {summary}",
                      "type": "invalid_request_error", "param": None, "code": "agentdbg_blocked",
                      "findings": [f.to_dict() for f in findings]}}


def make_app(options: ProxyOptions, tracker: Tracker, view, intercept: Callable | None = None):
    import httpx
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    upstream = options.upstream.rstrip("/")
    client = httpx.AsyncClient(timeout=options.timeout)
    lock = threading.Lock()  # one request at a time through the tracker and the view

    def remember_key(request) -> None:
        auth = request.headers.get("authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else auth
        tracker.add_secret(token)

    async def completions(request):
        raw = await request.body()
        remember_key(request)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            view.note("a request that is not a chat completion body; passed through unchecked")
            return await passthrough(request, raw)
        with lock:
            conv = tracker.assign(body["messages"])
            findings = conv.rules(body["messages"]) + check(body, options.profile)
            view.show_request(conv, body, findings)
        decision = await intercept(conv, body, findings) if intercept else Decision(body=body)
        if decision.action == "block" or (options.block_invalid and has_errors(findings)):
            with lock:
                tracker.record_blocked(conv, body, findings)
                conv.last_messages = list(body["messages"])
            view.note("blocked: answered the app with HTTP 400 listing the findings")
            return JSONResponse(blocked_response(findings), status_code=400)
        body = decision.body or body
        if decision.action == "respond":
            return scripted(conv, body, decision.reply)
        with lock:
            tracker.record_request(conv, body, findings)
        sent = json.dumps(body, ensure_ascii=False).encode("utf-8") if decision.changed else raw
        return await relay(request, conv, body, sent)

    async def relay(request, conv, body, sent: bytes):
        url = upstream + "/chat/completions"
        start = time.perf_counter()
        req = client.build_request("POST", url, content=sent,
                                   headers=forward_headers(request.headers))
        try:
            resp = await client.send(req, stream=True)
        except httpx.HTTPError as exc:
            message = f"agentdbg proxy could not reach the upstream {url}: {type(exc).__name__}"
            with lock:
                tracker.record_response(conv, body["messages"], None, usage=None, finish=None,
                                        latency_ms=0, error=message, status=502)
            view.note(message)
            return JSONResponse({"error": {"message": message, "type": "proxy_error",
                                           "param": None, "code": "upstream_unreachable"}},
                                status_code=502)
        media = resp.headers.get("content-type", "application/json")
        if "text/event-stream" in media:
            return StreamingResponse(stream(conv, body, resp, start), status_code=resp.status_code,
                                     media_type=media, headers=relayed_headers(resp.headers))
        data = await resp.aread()
        await resp.aclose()
        finish_plain(conv, body, resp.status_code, data, start)
        return Response(content=data, status_code=resp.status_code, media_type=media,
                        headers=relayed_headers(resp.headers))

    async def stream(conv, body, resp, start):
        acc = StreamAccumulator()
        try:
            async for chunk in resp.aiter_raw():
                acc.feed(chunk)
                yield chunk  # to the app as it arrives, unchanged
        finally:
            await resp.aclose()
            latency = round((time.perf_counter() - start) * 1000, 3)
            with lock:
                tracker.record_response(conv, body["messages"], acc.message, usage=acc.usage,
                                        finish=acc.finish_reason, latency_ms=latency,
                                        stream_shape=acc.shape())
            view.show_response(conv, body["messages"], acc.message, acc.shape(), latency)

    def finish_plain(conv, body, status: int, data: bytes, start: float) -> None:
        latency = round((time.perf_counter() - start) * 1000, 3)
        reply, usage, finish, error = None, None, None, None
        try:
            doc = json.loads(data)
            choice = (doc.get("choices") or [{}])[0]
            reply, usage, finish = choice.get("message"), doc.get("usage"), choice.get("finish_reason")
            if status >= 400 or reply is None:
                error = str((doc.get("error") or {}).get("message") or doc)[:500]
                reply = None
        except (ValueError, AttributeError, TypeError, IndexError):
            error = f"HTTP {status}: a body that is not a chat completion"
        with lock:
            tracker.record_response(conv, body["messages"], reply, usage=usage, finish=finish,
                                    latency_ms=latency, error=error, status=status)
        if reply is not None:
            view.show_response(conv, body["messages"], reply, [], latency)
        else:
            view.note(f"upstream answered HTTP {status}: {error}")

    def scripted(conv, body, reply: dict):
        from agentdbg.wire.chat import completion_json

        with lock:
            tracker.record_request(conv, body, [])
            tracker.record_response(conv, body["messages"], reply, usage={}, finish=None,
                                    latency_ms=0)
        view.show_response(conv, body["messages"], reply, ["scripted by you, not the upstream"], 0)
        payload = completion_json(reply, body)
        if body.get("stream"):
            from agentdbg.wire.chat import encode_stream

            finish = payload["choices"][0]["finish_reason"]
            return StreamingResponse(encode_stream(reply, completion_id=payload["id"],
                                                   model=payload["model"], created=0,
                                                   finish_reason=finish),
                                     media_type="text/event-stream")
        return JSONResponse(payload)

    async def passthrough(request, raw: bytes | None = None):
        path = request.url.path
        rest = path[len("/v1"):] if path.startswith("/v1") else path
        url = upstream + rest + (f"?{request.url.query}" if request.url.query else "")
        data = raw if raw is not None else await request.body()
        try:
            resp = await client.request(request.method, url, content=data,
                                        headers=forward_headers(request.headers))
        except httpx.HTTPError as exc:
            return JSONResponse({"error": {"message": f"agentdbg proxy could not reach {url}: "
                                                      f"{type(exc).__name__}",
                                           "type": "proxy_error"}}, status_code=502)
        return Response(content=resp.content, status_code=resp.status_code,
                        media_type=resp.headers.get("content-type"),
                        headers=relayed_headers(resp.headers))

    async def other(request):
        return await passthrough(request)

    app = Starlette(routes=[
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/chat/completions", completions, methods=["POST"]),
        Route("/v1/{path:path}", other, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ])
    app.state.client = client
    return app
