"""OpenTelemetry export of a run, with the GenAI semantic conventions (names in ``semconv``).

One ``invoke_agent`` span for the run (INTERNAL); a ``chat {model}`` span per model
request (CLIENT) with the provider, model, token usage and finish reasons; an
``execute_tool {name}`` span per tool call (INTERNAL) with the tool's name and call id,
and ``error.type`` when it failed. Checker findings become span events on the span of
the message they concern; your step-mode actions become events on the run's span.
Message contents (prompts, replies, arguments, results, tool definitions and
descriptions, finding messages and API errors that may quote them, a model error's text)
are added only with ``content=True``; without it the conversation id is an opaque digest
of the transcript's name (which is made from the question), never the name itself.
Spans are made by the official SDK and sent by its OTLP
exporters: protobuf over HTTP to a URL, or OTLP/JSON lines to a file.

* ``export_transcript(path, otlp_url=..., json_path=..., content=False)``: after the fact,
  timestamps from the transcript (its creation time, each request's latency, each tool's
  recorded start and duration, each action's time).
* ``LiveExporter(header, otlp_url=...)``: an observer ``(event_type, data)`` that ``run``
  and the proxy attach beside the transcript writer, exporting as the run goes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from agentdbg.errors import AgentdbgError
from agentdbg.i18n import N_, Msg
from agentdbg.messages import loads_json
from agentdbg.report import semconv as sc
from agentdbg.report.timeline import Card, History, Run
from agentdbg.transcript.events import to_json_value

DEFAULT_TIMEOUT = 10.0
TRACES_PATH = "/v1/traces"


class ExportError(AgentdbgError):
    """The spans could not be delivered (receiver unreachable, refused, or file not writable)."""


@dataclass
class ExportResult:
    spans: int
    trace_id: str
    destinations: list[str]


# -- shared: attributes ------------------------------------------------------------------------

def provider_name(header: dict) -> str:
    """``gen_ai.provider.name``: a well-known value by the endpoint, else agentdbg's own model."""
    provider = str(header.get("provider") or "")
    if provider in ("offline", "scripted", "replay"):
        return f"agentdbg.{provider}"
    host = urlsplit(str(header.get("base_url") or "")).hostname or ""
    if host in sc.PROVIDERS_BY_HOST:
        return sc.PROVIDERS_BY_HOST[host]
    # another host: the API it was spoken to (a Messages API endpoint speaks Anthropic's)
    from agentdbg.wire import codec

    api = header.get("api")
    return (codec.get(api).provider if codec.known(api) else None) or sc.OPENAI_COMPATIBLE


def server_attributes(header: dict) -> dict:
    parts = urlsplit(str(header.get("base_url") or ""))
    if not parts.hostname:
        return {}
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {sc.SERVER_ADDRESS: parts.hostname, sc.SERVER_PORT: port}


def semconv_message(message: Any) -> dict:
    """A chat message in the conventions' message shape (role + parts)."""
    if not isinstance(message, dict):
        return {"role": "unknown", "parts": [{"type": "text", "content": json.dumps(message, default=str)}]}
    role = str(message.get("role"))
    parts: list[dict] = []
    content = message.get("content")
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": message.get("tool_call_id"),
                      "response": content})
    elif isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        parts.extend({"type": "text", "content": p.get("text")} for p in content
                     if isinstance(p, dict) and isinstance(p.get("text"), str))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        parts.append({"type": "tool_call", "id": call.get("id") if isinstance(call, dict) else None,
                      "name": fn.get("name"), "arguments": _parsed(fn.get("arguments"))})
    return {"role": role, "parts": parts}


def _parsed(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return loads_json(arguments)
        except ValueError:       # not JSON, or nested too deeply to export: exported as text
            return arguments
    return arguments


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def chat_attributes(header: dict, *, model: str, usage: dict | None, finish_reason: str | None,
                    request_messages: list | None, reply: Any, content: bool, turn: int | None,
                    params: dict | None = None) -> dict:
    attrs: dict[str, Any] = {sc.OPERATION_NAME: sc.OP_CHAT, sc.PROVIDER_NAME: provider_name(header),
                             sc.REQUEST_MODEL: model, **server_attributes(header)}
    if turn is not None:
        attrs[sc.TURN] = turn
    temperature = (params or {}).get("temperature")
    if isinstance(temperature, (int, float)):
        attrs[sc.REQUEST_TEMPERATURE] = float(temperature)
    attrs.update(usage_attributes(usage))
    if finish_reason:
        attrs[sc.RESPONSE_FINISH_REASONS] = [str(finish_reason)]
    if content:
        if request_messages is not None:
            attrs[sc.INPUT_MESSAGES] = _json([semconv_message(m) for m in request_messages])
        if reply is not None:
            attrs[sc.OUTPUT_MESSAGES] = _json([{**semconv_message(reply),
                                                "finish_reason": finish_reason or ""}])
        if header.get("tools"):
            attrs[sc.TOOL_DEFINITIONS] = _json(header["tools"])
    return attrs


def usage_attributes(usage: dict | None) -> dict:
    out: dict[str, Any] = {}
    if not isinstance(usage, dict):
        return out
    if isinstance(usage.get("prompt_tokens"), int):
        out[sc.USAGE_INPUT_TOKENS] = usage["prompt_tokens"]
    if isinstance(usage.get("completion_tokens"), int):
        out[sc.USAGE_OUTPUT_TOKENS] = usage["completion_tokens"]
    for key, attribute in ((sc.CACHE_READ_KEY, sc.USAGE_CACHE_READ_TOKENS),
                           (sc.CACHE_CREATION_KEY, sc.USAGE_CACHE_CREATION_TOKENS)):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[attribute] = value    # included in gen_ai.usage.input_tokens, as the spec says
    if usage.get("estimated"):
        out["agentdbg.usage.estimated"] = True
    return out


def conversation_id(name: str, content: bool) -> str:
    """``gen_ai.conversation.id``: the transcript's name with contents, else an opaque id.

    A run's name is made from its question ("…-my-password-is-hunter2"), so without contents
    it is HMAC-SHA256'd under a random key kept in ``$AGENTDBG_HOME`` (made on first use): a
    run exported live and exported again later get the same id on this machine, and the id
    cannot be reversed or checked against a guessed question."""
    if content:
        return name
    import hashlib
    import hmac

    return "agentdbg-" + hmac.new(_id_key(), name.encode("utf-8", "surrogatepass"),
                                  hashlib.sha256).hexdigest()[:32]


def _id_key() -> bytes:
    import os

    from agentdbg.paths import data_dir

    path = data_dir() / "export-id.key"
    with contextlib.suppress(OSError):
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    key = os.urandom(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
    except FileExistsError:           # another agentdbg made it first: use theirs
        with contextlib.suppress(OSError):
            theirs = path.read_bytes()
            if len(theirs) >= 32:
                return theirs
    except OSError:                   # a home that cannot be written: an id for this export only
        pass
    return key


def tool_attributes(event: dict, *, content: bool, description: str | None = None) -> dict:
    attrs: dict[str, Any] = {sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL, sc.TOOL_TYPE: "function"}
    if isinstance(event.get("name"), str):
        attrs[sc.TOOL_NAME] = event["name"]
    if isinstance(event.get("tool_call_id"), str):
        attrs[sc.TOOL_CALL_ID] = event["tool_call_id"]
    if description and content:          # the tools file's text: content
        attrs[sc.TOOL_DESCRIPTION] = description
    if event.get("ok") is False:
        attrs[sc.ERROR_TYPE] = str(event.get("error_type") or "_OTHER")
    if event.get("injected"):
        attrs[sc.INJECTED] = True
    if content:
        if "arguments" in event:
            args = event["arguments"]
            attrs[sc.TOOL_CALL_ARGUMENTS] = args if isinstance(args, str) else _json(args)
        if isinstance(event.get("content"), str):
            attrs[sc.TOOL_CALL_RESULT] = event["content"]
    return attrs


def finding_attributes(f: Any, content: bool) -> dict:
    """A finding as event attributes. Its message and the API's error text may quote what
    was said (an argument's value, a message's text): without contents the message is the
    rule's own summary and the API error is left out."""
    from agentdbg.checker.findings import RULES

    rule = RULES.get(str(f.rule))
    message = str(f.message) if content else (rule.summary if rule is not None else str(f.rule))
    attrs: dict[str, Any] = {sc.FINDING_RULE: str(f.rule), sc.FINDING_SEVERITY: str(f.severity),
                             sc.FINDING_MESSAGE: message}
    if getattr(f, "api_error", None) and content:
        attrs[sc.FINDING_API_ERROR] = str(f.api_error)
    if isinstance(f.index, int):
        attrs[sc.FINDING_INDEX] = f.index
    if getattr(f, "tool_call_id", None):
        attrs[sc.FINDING_TOOL_CALL_ID] = str(f.tool_call_id)
    return attrs


def action_attributes(a: dict) -> dict:
    attrs: dict[str, Any] = {sc.ACTION: str(a.get("action"))}
    for key in ("index", "tool_call_id", "tool", "fault", "cut", "sticky", "pending"):
        value = a.get(key)
        if isinstance(value, (str, int, bool)):
            attrs[f"agentdbg.action.{key}"] = value
    return attrs


def tool_descriptions(header: dict) -> dict[str, str]:
    out = {}
    for t in header.get("tools") or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and \
                isinstance(fn.get("description"), str):
            out[fn["name"]] = fn["description"]
    return out


# -- the SDK pieces ------------------------------------------------------------------------------

def _provider(processors: list) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from agentdbg import __version__

    provider = TracerProvider(resource=Resource.create({"service.name": "agentdbg",
                                                        "service.version": __version__}))
    for p in processors:
        provider.add_span_processor(p)
    return provider


def _tracer(provider: Any) -> Any:
    from agentdbg import __version__

    return provider.get_tracer(sc.INSTRUMENTATION, __version__, schema_url=sc.SCHEMA_URL)


def require_sdk() -> None:
    """The OpenTelemetry SDK comes with the ``report`` extra; say so in one line if absent."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise ExportError(Msg("OpenTelemetry export needs the SDK: pip install "
                              "'agentdbg-cli[report]'")) from None


def traces_url(url: str, option: str = "--otlp") -> str:
    """A base URL (``http://host:4318``) gets the traces path; a full one is kept. ``option``
    is the one the user gave it with, named in the error."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExportError(Msg(N_("{option} {url}: not an http(s) URL (e.g. http://127.0.0.1:4318)"),
                              {"option": option, "url": repr(url)}))
    return url if parts.path not in ("", "/") else url.rstrip("/") + TRACES_PATH


def connect_problem(url: str, timeout: float) -> Msg | None:
    """Why nothing can be sent to ``url`` (a refused connection, a name that does not resolve,
    no answer), told at once; None when it takes a connection (or an HTTP proxy is in the way)."""
    import socket
    import urllib.request

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(host):
        return None
    try:
        with socket.create_connection((host, port), timeout=min(timeout, 5.0)):
            return None
    except ConnectionRefusedError:
        return Msg("connection refused: nothing listens on {host}:{port} (is the receiver running?)",
                   {"host": host, "port": port})
    except socket.gaierror:
        return Msg("cannot resolve the host {host}", {"host": repr(host)})
    except TimeoutError:
        seconds = f"{min(timeout, 5.0):g}"     # a value, out of the marked call: Babel skips
        return Msg("no answer from {host}:{port} within {seconds}s",   # any f-string in one
                   {"host": host, "port": port, "seconds": seconds})
    except OSError as exc:
        return Msg("cannot connect to {host}:{port}: {why}",
                   {"host": host, "port": port, "why": exc.strerror or exc})


@contextlib.contextmanager
def _quiet_sdk() -> Iterator[list[str]]:
    """The SDK logs delivery failures; keep them (for our one line) instead of printing them."""
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    logger = logging.getLogger("opentelemetry")
    handler, level, propagate = Keep(), logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def deliver(spans: list, *, otlp_url: str | None = None, json_path: Any = None,
            timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Send finished spans to an OTLP/HTTP receiver and/or append them to an OTLP/JSON file."""
    from opentelemetry.sdk.trace.export import SpanExportResult

    done = []
    if otlp_url is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        url = traces_url(otlp_url)
        problem = connect_problem(url, timeout)
        if problem is not None:   # say so now, not after the exporter's retries
            raise ExportError(Msg("{where}: {problem}", {"where": url, "problem": problem}))
        exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
        with _quiet_sdk() as seen:
            result = SpanExportResult.SUCCESS
            for start in range(0, len(spans), 512):
                result = exporter.export(spans[start:start + 512])
                if result is not SpanExportResult.SUCCESS:
                    break
            exporter.shutdown()
        if result is not SpanExportResult.SUCCESS:
            why = " ".join(seen[-1].split()) if seen else "no answer"
            raise ExportError(Msg("{url}: the OTLP receiver did not take the spans ({why})",
                                  {"url": url, "why": why[:200]}))
        done.append(url)
    if json_path is not None:
        from opentelemetry.exporter.otlp.json.file import FileSpanExporter

        try:
            file_exporter = FileSpanExporter(json_path)
        except OSError as exc:
            raise ExportError(Msg("{path}: cannot write: {reason}",
                                  {"path": json_path, "reason": exc.strerror})) from None
        with _quiet_sdk() as seen:
            result = file_exporter.export(spans)
            file_exporter.shutdown()
        if result is not SpanExportResult.SUCCESS:
            raise ExportError(Msg("{path}: writing the spans failed ({why})",
                                  {"path": json_path, "why": " ".join(seen[-1:])[:200]}))
        done.append(str(json_path))
    return done


# -- after the fact: a transcript ------------------------------------------------------------------

def export_transcript(source: Any, *, otlp_url: str | None = None, json_path: Any = None,
                      content: bool = False, profile: str = "openai",
                      timeout: float = DEFAULT_TIMEOUT) -> ExportResult:
    """Build the run's spans from a transcript and deliver them."""
    from agentdbg.report.timeline import read_run

    if otlp_url is None and json_path is None:
        raise ExportError(Msg("nothing to export to: give an OTLP URL or an OTLP/JSON file"))
    if otlp_url is not None:
        traces_url(otlp_url)   # a bad URL is an error before any work
    require_sdk()
    spans = spans_of_run(read_run(source, profile=profile), content=content)
    destinations = deliver(spans, otlp_url=otlp_url, json_path=json_path, timeout=timeout)
    trace_id = format(spans[0].context.trace_id, "032x") if spans else ""
    return ExportResult(len(spans), trace_id, destinations)


def spans_of_run(run: Run, *, content: bool = False) -> list:
    """The finished SDK spans of a run (timestamps from the transcript)."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = _provider([SimpleSpanProcessor(memory)])
    _RunSpans(run, _tracer(provider), content).build()
    provider.shutdown()
    return list(memory.get_finished_spans())


class _RunSpans:
    """Creates every span first, attaches findings, then ends them at their recorded times."""

    def __init__(self, run: Run, tracer: Any, content: bool, parent: Any = None):
        self.run, self.tracer, self.content = run, tracer, content
        self.parent = parent                        # a multi-agent run: the span that started it
        self.base = _created_ns(run)
        self.cursor = self.base
        self.open: list[tuple[Any, int]] = []       # (span, end time)
        self.at_index: dict[int, Any] = {}          # message index -> span that produced it
        self.starts: dict[int, int] = {}            # id(span) -> its start time
        self.tool_span: dict[str, Any] = {}         # tool_call_id -> its execute_tool span
        #: the header's recorded fields, as the attribute builders (also live ones) read them
        self.header: dict = to_json_value(run.header)
        self.descriptions = tool_descriptions(self.header)

    def build(self) -> None:
        from opentelemetry.trace import SpanKind, set_span_in_context

        header = self.header
        agent = {sc.AGENT_NAME: self.run.header.agent} if self.run.header.agent else {}
        name = f"{sc.OP_INVOKE_AGENT} {self.run.header.agent}" if agent else sc.OP_INVOKE_AGENT
        self.agent = self.tracer.start_span(
            name, kind=SpanKind.INTERNAL, start_time=self.base,
            context=set_span_in_context(self.parent) if self.parent is not None else None,
            attributes={sc.OPERATION_NAME: sc.OP_INVOKE_AGENT, sc.PROVIDER_NAME: provider_name(header),
                        sc.REQUEST_MODEL: self.run.model,
                        sc.CONVERSATION_ID: conversation_id(self.run.path.stem, self.content),
                        **agent, **server_attributes(header)})
        for history in self.run.histories:
            for card in history.cards:
                self._card(history, card)
            for f in history.findings:
                span = self.at_index.get(f.index) if isinstance(f.index, int) else None
                when = self.starts.get(id(span), self.cursor) if span is not None else self.cursor
                (span or self.agent).add_event(sc.EVENT_FINDING, finding_attributes(f, self.content),
                                               timestamp=when)
        self._finish_agent()
        for span, end in self.open:
            span.end(end_time=end)
        self.agent.end(end_time=max([self.cursor] + [end for _, end in self.open]))

    def _child(self, name: str, kind: Any, attrs: dict, start: int, end: int) -> Any:
        from opentelemetry.trace import set_span_in_context

        span = self.tracer.start_span(name, context=set_span_in_context(self.agent), kind=kind,
                                      attributes=attrs, start_time=start)
        self.open.append((span, end))
        self.starts[id(span)] = start
        return span

    def _card(self, h: History, card: Card) -> None:
        if card.kind == "action":
            a: dict = to_json_value(card.action) if card.action is not None else {}
            at = a.get("at_ms")
            when = self.base + int(at * 1e6) if _finite(at) else self.cursor
            self.cursor = max(self.cursor, when)
            self.agent.add_event(sc.EVENT_ACTION, action_attributes(a), timestamp=self.cursor)
        elif card.kind == "blocked":
            self.agent.add_event(sc.EVENT_BLOCKED, {sc.TURN: card.turn or 0}, timestamp=self.cursor)
            for f in card.findings:
                self.agent.add_event(sc.EVENT_FINDING, finding_attributes(f, self.content),
                                     timestamp=self.cursor)
        elif card.kind == "turn" and (card.response is not None or card.error is not None):
            self._chat(h, card)
            self._tools(card)
            self._results(h, card)

    def _chat(self, h: History, card: Card) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        r = card.response or {}
        latency = (card.error or {}).get("latency_ms") if card.error else r.get("latency_ms")
        start = self.cursor
        end = start + int(float(latency) * 1e6) if _finite(latency) else start
        n = card.request.get("messages") if card.request else None
        reply = h.messages[card.reply] if card.reply is not None else None
        model = str((card.request.get("params") or {}).get("model") or self.run.model)
        attrs = chat_attributes(self.header, model=model, usage=r.get("usage"),
                                finish_reason=r.get("finish_reason"),
                                request_messages=h.messages[:n] if isinstance(n, int) else None,
                                reply=reply, content=self.content, turn=card.turn,
                                params=card.request.get("params"))
        if card.error:
            attrs[sc.ERROR_TYPE] = str(card.error.get("status") or "model_error")
        span = self._child(f"{sc.OP_CHAT} {model}", SpanKind.CLIENT, attrs, start, end)
        if card.error:
            span.set_status(Status(StatusCode.ERROR, _error_text(card.error, self.content)))
        for i in card.sent + ([card.reply] if card.reply is not None else []):
            self.at_index[i] = span
        for f in card.findings:
            if f.index is None:
                span.add_event(sc.EVENT_FINDING, finding_attributes(f, self.content), timestamp=start)
        self.cursor = end

    def _tools(self, card: Card) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        events = sorted((to_json_value(e) for e in card.tools.values()),
                        key=lambda e: (e.get("started_ms") or 0, e.get("index") or 0))
        last = self.cursor
        for e in events:
            started = e.get("started_ms")
            start = self.base + int(started * 1e6) if _finite(started) else self.cursor
            start = max(start, self.cursor)
            duration = e.get("duration_ms")
            end = start + (int(float(duration) * 1e6) if _finite(duration) else 0)
            name = str(e.get("name") or "?")
            span = self._child(f"{sc.OP_EXECUTE_TOOL} {name}", SpanKind.INTERNAL,
                               tool_attributes(e, content=self.content,
                                               description=self.descriptions.get(name)), start, end)
            if e.get("ok") is False:
                span.set_status(Status(StatusCode.ERROR, str(e.get("error_type") or "")))
            cid = e.get("tool_call_id")
            if isinstance(cid, str):
                self.tool_span[cid] = span
            last = max(last, end)
        self.cursor = last

    def _results(self, h: History, card: Card) -> None:
        """A result message belongs to the tool span that answered its call, else to the turn."""
        chat = self.at_index.get(card.reply) if card.reply is not None else None
        for i in card.results:
            m = h.messages[i] if i < len(h.messages) else None
            cid = m.get("tool_call_id") if isinstance(m, dict) else None
            span = self.tool_span.get(cid) if isinstance(cid, str) else None
            if span is not None or chat is not None:
                self.at_index[i] = span or chat

    def _finish_agent(self) -> None:
        from opentelemetry.trace import Status, StatusCode

        u = self.run.usage()
        self.agent.set_attributes(usage_attributes(u))
        last = next((t for t in reversed(self.run.turns) if t.finish_reason), None)
        if last is not None:
            self.agent.set_attribute(sc.RESPONSE_FINISH_REASONS, [str(last.finish_reason)])
        reason = self.run.stop_reason
        if reason:
            self.agent.set_attribute(sc.STOP_REASON, reason)
        if reason and reason != "completed":
            self.agent.set_attribute(sc.ERROR_TYPE, reason)
            self.agent.set_status(Status(StatusCode.ERROR, _stop_text(reason, self.run.stop_detail,
                                                                     self.content)))


def _finite(value: Any) -> TypeGuard[float]:
    """A recorded time that is a number to compute with (not NaN, Infinity or 1e400: data)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e15


def _error_text(error: dict, content: bool) -> str:
    """A model error's text for a span's status: the endpoint's answer may quote the request,
    so only with contents (``error.type`` says what kind of error it was)."""
    return str(error.get("message") or "")[:500] if content else ""


def _stop_text(reason: str, detail: Any, content: bool) -> str:
    """The run's stop detail; a model error's is the endpoint's text (see ``_error_text``)."""
    if reason == "model_error" and not content:
        return ""
    return str(detail or "")[:500]


def _created_ns(run: Run) -> int:
    created = run.header.created
    if isinstance(created, str):
        for fmt in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z"):
            try:
                return int(datetime.strptime(created, fmt).timestamp() * 1e9)
            except ValueError:
                continue
    try:
        return int(run.path.stat().st_mtime * 1e9)
    except OSError:
        return time.time_ns()


# -- live: an observer beside the transcript writer -------------------------------------------------

class Pipeline:
    """The SDK side of live export: one provider and span exporter that any number of
    runs share (the proxy's conversations), sending spans in batches as they end.
    Delivery failures the SDK logs meanwhile are kept in ``failures``, not printed.
    ``timeout`` None: the standard ``OTEL_EXPORTER_OTLP_TIMEOUT`` (seconds), else 10."""

    def __init__(self, *, otlp_url: str | None = None, json_path: Any = None,
                 timeout: float | None = None):
        require_sdk()
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        processors: list[Any] = []
        if otlp_url is not None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            processors.append(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(otlp_url),
                                                                  timeout=timeout)))
        if json_path is not None:
            from opentelemetry.exporter.otlp.json.file import FileSpanExporter

            try:
                processors.append(SimpleSpanProcessor(FileSpanExporter(json_path)))
            except OSError as exc:
                raise ExportError(Msg("{path}: cannot write: {reason}",
                                  {"path": json_path, "reason": exc.strerror})) from None
        if not processors:
            raise ExportError(Msg("nothing to export to: give an OTLP URL or an OTLP/JSON file"))
        self.destination = traces_url(otlp_url) if otlp_url is not None else str(json_path)
        self.failures: list[str] = []
        self._keep = _keep_sdk_logs(self.failures)
        self.provider = _provider(processors)
        self.tracer = _tracer(self.provider)
        self.closed = False

    def shutdown(self) -> list[str]:
        """Send what is left (waiting up to the timeout) and stop; returns one warning line
        when some spans were not delivered (none when all were)."""
        if not self.closed:
            self.closed = True
            try:
                self.provider.shutdown()
            finally:
                _release_sdk_logs(self._keep)
        if not self.failures:
            return []
        return [f"{self.destination}: not every span was delivered ({self.failures[-1]})"]


_KEEPERS: list[logging.Handler] = []
_SAVED_PROPAGATE: list[bool] = []


def _keep_sdk_logs(into: list[str]) -> logging.Handler:
    """Keep the SDK's warnings (a receiver that refuses, a file that fails) in ``into``
    for as long as a pipeline lives, instead of letting them reach the terminal."""

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            into.append(" ".join(record.getMessage().split())[:300])

    handler = Keep(logging.WARNING)
    logger = logging.getLogger("opentelemetry")
    if not _KEEPERS:
        _SAVED_PROPAGATE[:] = [logger.propagate]
    _KEEPERS.append(handler)
    logger.addHandler(handler)
    logger.propagate = False
    return handler


def _release_sdk_logs(handler: logging.Handler) -> None:
    logger = logging.getLogger("opentelemetry")
    logger.removeHandler(handler)
    if handler in _KEEPERS:
        _KEEPERS.remove(handler)
    if not _KEEPERS and _SAVED_PROPAGATE:
        logger.propagate = _SAVED_PROPAGATE.pop()


class LiveExporter:
    """Export a run as it goes: attach to ``session.observers`` (or call with the proxy's
    events) and ``close()`` at the end. ``header`` is the transcript header's fields.
    ``pipeline``: a shared ``Pipeline`` (closing this run then leaves it open); without
    one the exporter makes its own from ``otlp_url`` / ``json_path``."""

    def __init__(self, header: dict, *, otlp_url: str | None = None, json_path: Any = None,
                 content: bool = False, timeout: float | None = None,
                 clock: Callable[[], int] = time.time_ns,
                 pipeline: Pipeline | None = None, name: str | None = None):
        from opentelemetry.trace import SpanKind

        self.owns = pipeline is None
        self.pipeline = pipeline or Pipeline(otlp_url=otlp_url, json_path=json_path, timeout=timeout)
        self.header, self.content, self.clock = header, content, clock
        self.provider = self.pipeline.provider
        self.tracer = self.pipeline.tracer
        self.descriptions = tool_descriptions(header)
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self.chat: Any = None
        self.messages: list = []
        self.finish: str | None = None
        attrs = {sc.OPERATION_NAME: sc.OP_INVOKE_AGENT, sc.PROVIDER_NAME: provider_name(header),
                 sc.REQUEST_MODEL: str(header.get("model") or "?"), **server_attributes(header)}
        if name:   # the transcript's name, as in export (an opaque id without contents)
            attrs[sc.CONVERSATION_ID] = conversation_id(name, content)
        self.agent = self.tracer.start_span(sc.OP_INVOKE_AGENT, kind=SpanKind.INTERNAL,
                                            start_time=clock(), attributes=attrs)
        self.closed = False

    def feed(self, event_type: str, data: dict, redact: Any = None) -> None:
        """An event as the transcript writer gets it: made lean first (the history is
        dropped unless contents are exported), then redacted with ``redact``."""
        if not self.content and "messages" in data:
            data = {k: v for k, v in data.items() if k != "messages"}
        self(event_type, redact(data) if redact is not None else data)

    def __call__(self, event_type: str, data: dict) -> None:
        handler = getattr(self, "_on_" + event_type, None)
        if handler is not None and not self.closed:
            with _quiet_sdk():
                handler(data)

    def _context(self) -> Any:
        from opentelemetry.trace import set_span_in_context

        return set_span_in_context(self.agent)

    def _on_request(self, d: dict) -> None:
        from opentelemetry.trace import SpanKind

        self._end_chat()
        self.messages = list(d.get("messages") or [])
        params = d.get("params") or {}
        model = str(params.get("model") or self.header.get("model") or "?")
        attrs = chat_attributes(self.header, model=model, usage=None, finish_reason=None,
                                request_messages=self.messages, reply=None, content=self.content,
                                turn=d.get("turn"), params=params)
        self.chat = self.tracer.start_span(f"{sc.OP_CHAT} {model}", context=self._context(),
                                           kind=SpanKind.CLIENT, attributes=attrs, start_time=self.clock())
        for f in d.get("findings") or []:
            if isinstance(f, dict):
                from agentdbg.report.adapter import finding_from_dict

                self.chat.add_event(sc.EVENT_FINDING, finding_attributes(finding_from_dict(f), self.content))

    def _on_response(self, d: dict) -> None:
        if self.chat is None:
            return
        usage: dict = d["usage"] if isinstance(d.get("usage"), dict) else {}
        for key in self.usage:
            if isinstance(usage.get(key), int):
                self.usage[key] += usage[key]
        self.finish = d.get("finish_reason")
        self.chat.set_attributes(usage_attributes(usage))
        if self.finish:
            self.chat.set_attribute(sc.RESPONSE_FINISH_REASONS, [str(self.finish)])
        if self.content and d.get("message") is not None:
            self.chat.set_attribute(sc.OUTPUT_MESSAGES, _json([{**semconv_message(d["message"]),
                                                                "finish_reason": self.finish or ""}]))
        self._end_chat()

    def _on_model_error(self, d: dict) -> None:
        from opentelemetry.trace import Status, StatusCode

        if self.chat is None:
            return
        self.chat.set_attribute(sc.ERROR_TYPE, str(d.get("status") or "model_error"))
        self.chat.set_status(Status(StatusCode.ERROR, _error_text(d, self.content)))
        self._end_chat()

    def _end_chat(self) -> None:
        if self.chat is not None:
            self.chat.end(end_time=self.clock())
            self.chat = None

    def _on_tool(self, d: dict) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        now = self.clock()
        duration = d.get("duration_ms")
        start = now - int(float(duration) * 1e6) if _finite(duration) else now
        name = str(d.get("name") or "?")
        span = self.tracer.start_span(f"{sc.OP_EXECUTE_TOOL} {name}", context=self._context(),
                                      kind=SpanKind.INTERNAL, start_time=start,
                                      attributes=tool_attributes(d, content=self.content,
                                                                 description=self.descriptions.get(name)))
        if d.get("ok") is False:
            span.set_status(Status(StatusCode.ERROR, str(d.get("error_type") or "")))
        span.end(end_time=now)

    def _on_blocked(self, d: dict) -> None:
        from agentdbg.report.adapter import finding_from_dict

        self.agent.add_event(sc.EVENT_BLOCKED, {sc.TURN: d.get("turn") or 0})
        for f in d.get("findings") or []:
            if isinstance(f, dict):
                self.agent.add_event(sc.EVENT_FINDING, finding_attributes(finding_from_dict(f), self.content))

    def _on_action(self, d: dict) -> None:
        self.agent.add_event(sc.EVENT_ACTION, action_attributes(d))

    def _on_stop(self, d: dict) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._end_chat()
        reason = str(d.get("reason") or "")
        self.agent.set_attributes(usage_attributes(self.usage))
        if self.finish:
            self.agent.set_attribute(sc.RESPONSE_FINISH_REASONS, [str(self.finish)])
        self.agent.set_attribute(sc.STOP_REASON, reason)
        if reason != "completed":
            self.agent.set_attribute(sc.ERROR_TYPE, reason)
            self.agent.set_status(Status(StatusCode.ERROR, _stop_text(reason, d.get("detail"),
                                                                     self.content)))
        self._end_run()

    def _end_run(self) -> None:
        if not self.closed:
            self.closed = True
            with _quiet_sdk():
                self._end_chat()
                self.agent.end(end_time=self.clock())

    def close(self) -> list[str]:
        """End the run's span (if no stop came) and, with its own pipeline, send everything
        left to the receiver (waiting up to its timeout). Returns the warnings: a line
        when some spans were not delivered."""
        self._end_run()
        return self.pipeline.shutdown() if self.owns else []
