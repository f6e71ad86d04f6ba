"""``agentdbg serve``: a strict local model API answered by the offline model, a script, or a
recorded run — Chat Completions, the Responses API and the Anthropic Messages API, plain and
streaming — so you can test your own loop deterministically with no API key.

Every request is judged first, as the real API judges it: a body that cannot be read gets the
API's JSON 400; a request breaking a protocol rule (under ``--profile``) gets the status and
error body the real API returns for that rule, unless ``--lenient``. Responses are
deterministic: ids derive from the request, so the same request always gets the same bytes.
Built on starlette + uvicorn (server-sent events go out chunk by chunk).
"""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdbg import schemas
from agentdbg.checker.verdict import verdict
from agentdbg.errors import AgentdbgError, ProviderError
from agentdbg.i18n import N_, Msg, _
from agentdbg.providers.base import ModelRequest, Provider
from agentdbg.providers.replay import ReplayDiverged
from agentdbg.server.guard import LocalOnly
from agentdbg.server.net import MAX_BODY, Contained, json_errors, json_response, read_body
from agentdbg.server.served import (
    ResponseStore,
    ServedReplay,
    Stored,
    chain_items,
    chain_messages,
    history_of,
)
from agentdbg.textsafe import one_line
from agentdbg.wire import codec as codecs
from agentdbg.wire.codec import Codec, error_text
from agentdbg.wire.common import OUTPUT_END, strip_wire

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp


async def _events(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    """The events one by one, on the event loop (a plain iterator would cost a thread hop each)."""
    for chunk in chunks:
        yield chunk


@dataclass
class Answer:
    status: int
    body: dict | None = None            # JSON to send
    chunks: Any = None                  # or events to stream


def _native_path(message: str, sources: list[str]) -> str:
    """``… first difference at messages[3].content …`` said where the app wrote it:
    ``input[5].content`` (``sources[i]``: where chat message ``i`` came from)."""
    import re

    def native(m: re.Match) -> str:
        i = int(m.group(1))
        source = sources[i] if i < len(sources) else ""
        return f"at {source}" if source.startswith(("input[", "messages[")) else m.group(0)
    return re.sub(r"at messages\[(\d+)\]", native, message, count=1)


class ServeApp:
    """Judge, answer and remember; one request at a time (scripts and replays are stateful)."""

    def __init__(self, provider: Provider, model_name: str = "offline", profile: str = "openai",
                 lenient: bool = False, log: Callable[[str], None] | None = None) -> None:
        self.provider = provider
        self.model_name = model_name
        self.profile = profile
        self.lenient = lenient
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.lock = threading.Lock()
        self.stored = ResponseStore()
        # fc id -> the reasoning item before it in serve's own output (None: it had none)
        self.reasoned: OrderedDict[str, dict | None] = OrderedDict()
        self.skips = schemas.Skips()      # schemas left unchecked (work budget): said once

    def handle(self, wire: Codec, raw: bytes, path: str = "") -> Answer:
        try:   # NaN and Infinity are Python's, not JSON: the real APIs refuse them
            body = json.loads(raw, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return Answer(400, wire.bad_json())
        try:
            with self.lock, schemas.noting_skips(self.skips):
                answer = self._handle(wire, body, path)
            for line in self.skips.take():
                self.log(f"agentdbg serve: {one_line(schemas.skip_text(line))}")
            if answer.status >= 400:  # the app sees the body (the API's words, verbatim); serve's
                self.log("agentdbg serve: " + _(ANSWERED).format(   # terminal says it too
                    api=wire.name, status=answer.status, error=one_line(error_text(answer.body))))
            return answer
        except RecursionError:
            return Answer(400, wire.error(400, "the request is nested too deeply to be read"))
        except Exception as exc:  # noqa: BLE001 - a bug here is one line, never a traceback
            self.log("agentdbg serve: " + _("internal error on a {api} request: {error}: {why}").format(
                api=wire.name, error=type(exc).__name__, why=one_line(str(exc))))
            return Answer(500, wire.error(500, f"agentdbg serve failed on this request "
                                               f"({type(exc).__name__})", type_="server_error"))

    def _handle(self, wire: Codec, body: Any, path: str = "") -> Answer:
        problem = wire.shape_error(body) or wire.definition_error(body)
        if problem is not None:
            return Answer(400, wire.error(400, problem[0], param=problem[1]))
        chain, missing = self._chain(wire, body)
        if missing:
            return Answer(404, wire.error(404, f"Previous response with id '{missing}' not found.",
                                          param="previous_response_id",
                                          code="previous_response_not_found"))
        form = wire.chat_form(body)
        if not self.lenient:
            prior = chain.items if chain else self._reasoning_prior(body)
            rejected = verdict(wire, body, self.profile, prior=prior,
                               model=wire.model_of(path, body))
            if rejected is not None:
                return Answer(*rejected)
        messages, sources = chain_messages(form, chain)
        request = ModelRequest(messages=strip_wire(messages), tools=strip_wire(form.tools),
                               tool_choice=form.tool_choice,
                               parallel_tool_calls=form.parallel_tool_calls,
                               model=str(wire.model_of(path, body) or self.model_name),
                               answer_schema=wire.answer_schema(body))
        try:
            reply = self.provider.complete(request)
        except ReplayDiverged as exc:  # 400, not 409: clients retry a 409
            said = _native_path(exc.message, sources)
            return Answer(400, wire.error(400, said, code="replay_diverged"))
        except ProviderError as exc:  # a script played out is final: 400, which no client retries
            if not exc.retryable:
                return Answer(400, wire.error(400, exc.message, code="model_unavailable"))
            return Answer(500, wire.error(500, exc.message, type_="server_error"))
        except Exception as exc:  # noqa: BLE001 - an odd request must never become a traceback
            self.log("agentdbg serve: " + _("could not answer a {api} request: {error}: {why}").format(
                api=wire.name, error=type(exc).__name__, why=one_line(str(exc))))
            return Answer(400, wire.error(400, f"agentdbg serve could not read this request "
                                               f"({type(exc).__name__})"))
        message = reply.message
        if wire.reasons(body) and not message.get("reasoning_content"):
            # asked to reason: the model's own note is its reasoning (a Responses reasoning item,
            # an Anthropic thinking block), so a loop that drops it is caught as the API would
            message = {**message, "reasoning_content": reply.note or "(no reasoning recorded)"}
        native = wire.answer(message, body, reply.usage, reply.finish_reason, self.model_name)
        if wire.stores and body.get("store") is not False:
            self.stored.put(str(native["id"]), Stored(history_of(messages, sources, message),
                                                 chain_items(body, chain, wire.output(native))))
        self._remember_reasoning(wire.output(native))
        if wire.streams(path, body):
            return Answer(200, chunks=list(wire.stream(native, body)))
        return Answer(200, native)

    def _remember_reasoning(self, output: list) -> None:
        """Which reasoning item each call came with: the API knows its own items by id, and
        names the one a request left out."""
        last = None
        for item in output:
            if item.get("type") == "reasoning":
                last = item
            elif item.get("type") == "function_call" and isinstance(item.get("id"), str):
                self.reasoned[item["id"]] = last    # None: this output had no reasoning item
        while len(self.reasoned) > 10_000:
            self.reasoned.popitem(last=False)

    def _reasoning_prior(self, body: dict) -> list | None:
        items = body.get("input")
        prior: list = []
        for item in items if isinstance(items, list) else []:
            item_id = item.get("id") if isinstance(item, dict) else None
            if isinstance(item_id, str) and item_id in self.reasoned:
                rs = self.reasoned[item_id]
                prior += [rs if rs is not None else {"type": OUTPUT_END}, item]
        return prior or None

    def _chain(self, wire: Codec, body: dict) -> tuple[Stored | None, str | None]:
        prev = wire.continues(body)
        if prev is None:
            return None, None
        chain = self.stored.get(prev)
        return (chain, None) if chain is not None else (None, prev)


#: serve's console line for an error it answered (``error``: the body's message, verbatim)
ANSWERED = N_("answered a {api} request with {status}: {error}")


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def make_app(provider: Provider, model_name: str = "offline", *, profile: str = "openai",
             lenient: bool = False, log: Callable[[str], None] | None = None,
             max_body: int = MAX_BODY, allow_origins: tuple[str, ...] = (),
             allow_hosts: tuple[str, ...] = ()) -> ASGIApp:
    """The starlette app of ``agentdbg serve``. Every answer is JSON that encodes (a lone
    surrogate goes out as its ``\\u`` escape), a body over ``max_body`` bytes gets a 413 in the
    format's own error shape, and a failure of serve's own code is a JSON 500 and one line."""
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    served = ServeApp(provider, model_name, profile, lenient, log)

    async def models(request: Request) -> Response:
        return json_response({"object": "list", "data": [
            {"id": model_name, "object": "model", "created": 0, "owned_by": "agentdbg"}]})

    def endpoint(wire: Codec) -> Callable[[Request], Awaitable[Response]]:
        async def answer(request: Request) -> Response:
            raw = await read_body(request, max_body)
            if raw is None:
                served.log("agentdbg serve: " + _(
                    "answered a {api} request with 413: its body is larger than {limit} bytes").format(
                    api=wire.name, limit=max_body))
                return json_response(wire.error(413, f"request body larger than {max_body} bytes",
                                                code="request_too_large"), status_code=413)
            result = served.handle(wire, raw, request.url.path)
            if result.chunks is not None:
                return StreamingResponse(_events(result.chunks), media_type="text/event-stream")
            return json_response(result.body, status_code=result.status)
        return answer

    routes = [Route("/v1/models", models, methods=["GET"])]
    for wire in codecs.every():
        routes += [Route(path, endpoint(wire), methods=["POST"]) for path in wire.routes()]
    chat = codecs.get("chat")

    def error_of(status: int, message: str) -> dict:   # serve's own errors: the OpenAI shape
        return chat.error(status, message, type_="server_error" if status >= 500
                          else "invalid_request_error")
    app = Starlette(routes=routes, exception_handlers=json_errors(error_of, "serve"))
    app.state.serve = served

    def say(text: str) -> None:
        served.log(one_line(text))
    guarded = LocalOnly(app, body_of=error_of, say=say, what="serve",
                        allow_origins=allow_origins, allow_hosts=allow_hosts)
    return Contained(guarded, error_of, "serve", say)


def serve_provider(offline: bool, replay_file: str | Path | None, script: str | Path | None
                   ) -> tuple[Provider, Msg]:
    chosen = [name for name, on in (("--offline", offline), ("--replay", replay_file),
                                    ("--script", script)) if on]
    if len(chosen) > 1:
        raise AgentdbgError(Msg(N_("choose one of {options} (got {given})"),
                                {"options": "--offline, --replay, --script", "given": ", ".join(chosen)}))
    if replay_file is not None:
        from agentdbg.transcript import is_transcript

        if not is_transcript(replay_file):
            raise AgentdbgError(Msg(N_("{path}: not an agentdbg transcript"), {"path": replay_file}))
        return ServedReplay(replay_file), Msg(N_("the recording {path}"), {"path": replay_file})
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ScriptedModel.from_file(script), Msg(N_("the script {path}"), {"path": script})
    from agentdbg.providers.offline import OfflineModel

    return OfflineModel(), Msg(N_("the offline model"))


def run_serve(*, offline: bool, replay_file: str | Path | None, script: str | Path | None,
              host: str, port: int,
              profile: str = "openai", lenient: bool = False, allow_origins: tuple[str, ...] = (),
              allow_hosts: tuple[str, ...] = ()) -> None:
    from agentdbg.checker.profiles import get_profile
    from agentdbg.server.net import bind, run_app, url_of

    get_profile(profile)
    provider, desc = serve_provider(offline, replay_file, script)
    sock = bind(host, port)
    url = url_of(sock)
    from agentdbg.i18n import tr

    judged = _("requests not checked (--lenient)") if lenient else \
        _("requests checked (profile {profile})").format(profile=profile)

    def ready() -> None:
        print("agentdbg serve: " + _("{model} at {url}").format(model=one_line(tr(desc)), url=url),
              flush=True)
        print(f"  export OPENAI_BASE_URL={url} OPENAI_API_KEY=anything "
              f"ANTHROPIC_BASE_URL={url[:-len('/v1')]}", flush=True)
        print("  " + _("POST {paths}; {judged}").format(
            paths="/v1/chat/completions, /v1/responses, /v1/messages", judged=judged), flush=True)

    run_app(make_app(provider, profile=profile, lenient=lenient, allow_origins=allow_origins,
                     allow_hosts=allow_hosts), sock, on_ready=ready)
    sys.stdout.flush()
