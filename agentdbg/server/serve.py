"""``agentdbg serve``: an OpenAI-compatible endpoint answered by the offline model, a
script, or a recorded run, plain and streaming, so you can test your own loop
deterministically with no API key.

Built on starlette + uvicorn (a real async server that streams server-sent events
chunk by chunk). Responses are deterministic: ids and ``created`` derive from the
request, so the same request always gets the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading

from agentdbg.errors import ProviderError
from agentdbg.providers.base import ModelRequest
from agentdbg.wire.chat import encode_stream


def _error(status: int, message: str, type_: str = "invalid_request_error", code=None):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": type_, "param": None, "code": code}},
                        status_code=status)


def completion_json(message: dict, body: dict, raw: bytes, usage: dict | None = None,
                    finish: str | None = None, model_name: str = "offline") -> dict:
    """A chat.completion object; id and created derive from the request (deterministic)."""
    from agentdbg.messages import canonical_json

    digest = hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()[:24]
    return {"id": f"chatcmpl-{digest}", "object": "chat.completion", "created": 0,
            "model": body.get("model") or model_name,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish or ("tool_calls" if message.get("tool_calls")
                                                     else "stop")}],
            "usage": {k: v for k, v in (usage or {}).items() if k != "estimated"}}


def make_app(provider, model_name: str = "offline"):
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    lock = threading.Lock()  # providers (a script, a replay) are stateful: one request at a time

    async def models(request):
        return JSONResponse({"object": "list", "data": [
            {"id": model_name, "object": "model", "created": 0, "owned_by": "agentdbg"}]})

    async def completions(request):
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "'messages' must be an array")
        with lock:
            try:
                reply = provider.complete(ModelRequest.from_body(body))
            except ProviderError as exc:
                status = 409 if exc.message.startswith("replay diverged") else 500
                return _error(status, exc.message, "conflict" if status == 409 else "server_error")
        payload = completion_json(reply.message, body, raw, reply.usage, reply.finish_reason,
                                  model_name)
        if body.get("stream"):
            include_usage = (body.get("stream_options") or {}).get("include_usage")
            chunks = encode_stream(reply.message, completion_id=payload["id"],
                                   model=payload["model"], created=0,
                                   finish_reason=payload["choices"][0]["finish_reason"],
                                   usage=payload["usage"] if include_usage else None)
            return StreamingResponse(chunks, media_type="text/event-stream")
        return JSONResponse(payload)

    return Starlette(routes=[
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/chat/completions", completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ])


def bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # clients that come before the server loop starts wait in the backlog
    sock.set_inheritable(True)
    return sock


def run_app(app, sock: socket.socket, *, on_ready=None) -> None:
    """Serve ``app`` on an already bound socket until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready()
    server.run(sockets=[sock])


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/v1"
