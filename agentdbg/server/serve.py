"""``agentdbg serve``: an OpenAI-compatible endpoint answered by the offline model, a
script, or a recorded run, plain and streaming, so you can test your own loop
deterministically with no API key.

Built on starlette + uvicorn (a real async server that streams server-sent events
chunk by chunk). Responses are deterministic: ids and ``created`` derive from the
request, so the same request always gets the same bytes.
"""

from __future__ import annotations

import json
import sys
import threading

from agentdbg.errors import AgentdbgError, ProviderError
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.replay import ReplayDiverged
from agentdbg.textsafe import one_line
from agentdbg.wire.chat import completion_json, encode_stream


def _error(status: int, message: str, type_: str = "invalid_request_error", code=None):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": type_, "param": None, "code": code}},
                        status_code=status)


async def _events(chunks):
    """The events one by one, on the event loop (a plain iterator would cost a thread hop each)."""
    for chunk in chunks:
        yield chunk


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
                status = 409 if isinstance(exc, ReplayDiverged) else 500
                return _error(status, exc.message, "conflict" if status == 409 else "server_error")
        payload = completion_json(reply.message, body, reply.usage, reply.finish_reason,
                                  model_name)
        if body.get("stream"):
            include_usage = (body.get("stream_options") or {}).get("include_usage")
            chunks = encode_stream(reply.message, completion_id=payload["id"],
                                   model=payload["model"], created=0,
                                   finish_reason=payload["choices"][0]["finish_reason"],
                                   usage=payload["usage"] if include_usage else None)
            return StreamingResponse(_events(chunks), media_type="text/event-stream")
        return JSONResponse(payload)

    return Starlette(routes=[
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/chat/completions", completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ])


def serve_provider(offline: bool, replay_file, script):
    chosen = [name for name, on in (("--offline", offline), ("--replay", replay_file),
                                    ("--script", script)) if on]
    if len(chosen) > 1:
        raise AgentdbgError(f"choose one of --offline, --replay, --script (got {', '.join(chosen)})")
    if replay_file is not None:
        from agentdbg.providers.replay import ReplayModel
        from agentdbg.transcript import is_transcript

        if not is_transcript(replay_file):
            raise AgentdbgError(f"{replay_file}: not an agentdbg transcript")
        model = ReplayModel(replay_file)
        return _ServedReplay(model), f"the recording {replay_file}"
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ScriptedModel.from_file(script), f"the script {script}"
    from agentdbg.providers.offline import OfflineModel

    return OfflineModel(), "the offline model"


class _ServedReplay:
    """A recording served to an app: responses in order, skipping tool and action events."""

    name = "replay"

    def __init__(self, model):
        self.model = model

    def complete(self, request):
        while True:  # actions and stops of the recording do not concern an outside app
            event = self.model.peek()
            if event is None or event["type"] not in ("action", "stop", "blocked"):
                break
            self.model.pop()
        return self.model.complete(request)


def run_serve(*, offline: bool, replay_file, script, host: str, port: int) -> None:
    from agentdbg.server.net import bind, run_app, url_of

    provider, desc = serve_provider(offline, replay_file, script)
    sock = bind(host, port)
    url = url_of(sock)

    def ready():
        print(f"agentdbg serve: {one_line(desc)} at {url}", flush=True)
        print(f"  export OPENAI_BASE_URL={url} OPENAI_API_KEY=anything", flush=True)

    run_app(make_app(provider), sock, on_ready=ready)
    sys.stdout.flush()
