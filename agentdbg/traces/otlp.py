"""OpenTelemetry traces as conversations: one per trace (and agent), spans in time order.

A span is a model call when it records one (``openinference`` first, then ``genai``): its
request (the messages sent, the tools when recorded, the parameters) and its reply. The calls
of one trace are one conversation (and a call in another trace that goes on from a
conversation's last request and reply continues it: an app whose every model call is a trace
of its own); a trace whose calls were made by several agents
(``gen_ai.agent.name`` on the span or an ancestor) holds one conversation per agent, each
linked to the first (and to the tool call that started it, when an ``execute_tool`` ancestor
names it). A request that starts afresh (no assistant or tool message yet) after others starts
a new conversation, as the proxy would see it.

Files: OTLP/JSON Lines (one ``ExportTraceServiceRequest`` per line, as collectors' file
exporters and ``agentdbg export --format otlp-json`` write), one OTLP/JSON document, or an
OTLP protobuf message. ``Assembler`` is also what ``agentdbg collect`` feeds as spans arrive.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdbg.errors import InputError
from agentdbg.i18n import N_, Msg
from agentdbg.traces.exchange import Called, Exchange, Item, Link, Thread
from agentdbg.traces.genai import SECRET_KEY, LlmCall
from agentdbg.traces.genai import read as read_genai
from agentdbg.traces.lines import open_lines
from agentdbg.traces.openinference import read as read_openinference
from agentdbg.traces.spans import OtlpError, Span, from_json, from_protobuf

SOURCE = "otlp"
MAX_DOCUMENT = 256 << 20     # bytes of a file that is one JSON document or one protobuf message
KEPT_SPANS = 200_000         # spans whose ancestry (parent, agent, tool call) is remembered
FOLLOWED = 256               # conversations whose last request a new trace may continue


class Assembler:
    """Spans, batch after batch, as threads and calls."""

    def __init__(self) -> None:
        self.info: OrderedDict[str, tuple[str | None, str | None, str | None]] = OrderedDict()
        self.threads: dict[str, Thread] = {}
        self.current: dict[str, str] = {}          # (trace/agent) -> its current thread's key
        self.roots: dict[str, str] = {}            # trace -> its first thread's key
        self.calls: dict[str, int] = {}            # thread key -> calls so far
        #: the latest conversations' last request + reply: a call in another trace that goes on
        #: from one of them continues it (an app whose every model call is a trace of its own)
        self.history: OrderedDict[str, list[Any]] = OrderedDict()

    def learn(self, spans: list[Span]) -> None:
        """Remember each span's parent, agent and tool call (to find a call's agent later)."""
        for s in spans:
            agent = s.attributes.get("gen_ai.agent.name")
            call = s.attributes.get("gen_ai.tool.call.id")
            self.info[s.span_id] = (s.parent_id, agent if isinstance(agent, str) else None,
                                    call if isinstance(call, str) else None)
            self.info.move_to_end(s.span_id)
        while len(self.info) > KEPT_SPANS:
            self.info.popitem(last=False)

    def feed(self, spans: list[Span]) -> Iterator[Item]:
        self.learn(spans)
        for span in sorted(spans, key=lambda s: (s.start_ns, s.end_ns)):
            call = read_openinference(span) or read_genai(span)
            if call is not None:
                yield from self._call(span, call)

    def _ancestry(self, span: Span) -> tuple[str | None, str | None]:
        """The agent that made the call and the tool call that started that agent's work."""
        agent: str | None = None
        call: str | None = None
        sid: str | None = span.span_id
        hops = 0
        while sid is not None and hops < 64:
            parent, named, tool_call = self.info.get(sid, (None, None, None))
            if agent is None and named is not None:
                agent = named
            elif agent is not None and tool_call is not None and call is None:
                call = tool_call
            sid, hops = parent, hops + 1
        return agent, call

    def _call(self, span: Span, call: LlmCall) -> Iterator[Item]:
        agent, started_by = self._ancestry(span)
        base = span.trace_id if agent is None else f"{span.trace_id}/{agent}"
        key = self.current.get(base)
        if key is not None and self.calls.get(key) and _fresh(call.messages):
            key = None                             # a new question: a new conversation
        if key is None and not _fresh(call.messages):
            key = self._continued(call.messages, agent)
        if key is None:
            n = sum(1 for k in self.threads if k == base or k.startswith(base + "#"))
            key = self.current[base] = base if n == 0 else f"{base}#{n + 1}"
            root = self.roots.setdefault(span.trace_id, key)
            missing = tuple(m for m, known in (("tools", call.tools is not None or (
                call.raw is not None and "tools" in call.raw)), ("params", bool(call.params) or
                call.raw is not None)) if not known)
            thread = Thread(key, "chat", SOURCE, agent=agent, model=call.model, missing=missing,
                            started=span.start_ns / 1e9 if span.start_ns else None,
                            parent=Link(root, started_by) if root != key else None)
            self.threads[key] = thread
            yield thread
        self.calls[key] = self.calls.get(key, 0) + 1
        self.history[key] = [len(call.messages), call.reply]
        self.history.move_to_end(key)
        while len(self.history) > FOLLOWED:
            self.history.popitem(last=False)
        yield Called(key, exchange(span, call))

    def _continued(self, messages: list[dict[str, Any]], agent: str | None) -> str | None:
        """The latest conversation of ``agent`` whose last reply ``messages`` carry after more
        messages than its last request held: the reply's calls (ids a model makes are unique), or
        its text when it made none."""
        for key in reversed(self.history):
            sent, reply = self.history[key]
            if self.threads[key].agent == agent and len(messages) > sent and \
                    isinstance(reply, dict) and _carries(messages[sent:], reply):
                return key
        return None


def _carries(messages: list[dict[str, Any]], reply: dict[str, Any]) -> bool:
    ids = {c.get("id") for c in reply.get("tool_calls") or [] if isinstance(c, dict)
           and isinstance(c.get("id"), str) and c.get("id")}
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        if ids:
            theirs = {c.get("id") for c in m.get("tool_calls") or [] if isinstance(c, dict)}
            if ids <= theirs:
                return True
        elif reply.get("content") and m.get("content") == reply.get("content"):
            return True
    return False


def _fresh(messages: list[dict[str, Any]]) -> bool:
    return not any(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in messages)


def exchange(span: Span, call: LlmCall) -> Exchange:
    if call.raw is not None:
        body = {k: v for k, v in call.raw.items() if not SECRET_KEY.search(k)}
        body.setdefault("model", call.model or "unknown")
    else:
        body = {"model": call.model or "unknown",
                **{k: v for k, v in call.params.items() if not SECRET_KEY.search(k)},
                "messages": call.messages}
        if call.tools is not None:
            body["tools"] = call.tools
    reply = None
    if call.reply is not None and span.error is None:
        reply = {"object": "chat.completion", "model": call.model,
                 "choices": [{"index": 0, "message": call.reply, "finish_reason": call.finish}],
                 "usage": call.usage}
    error = None if reply is not None else (span.error or "the span records no reply")
    return Exchange(body, reply, latency_ms=span.latency_ms,
                    started=span.start_ns / 1e9 if span.start_ns else None, error=error)


# -- files -------------------------------------------------------------------------------------

def looks_like(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    text = head.lstrip()
    if text[:1] == b"{":
        return b'"resourceSpans"' in head or b'"resource_spans"' in head
    if head[:1] == b"\n":                 # protobuf: field 1 (resource_spans), length-delimited
        try:
            return bool(from_protobuf(_whole(path)))
        except (OtlpError, InputError):
            return False
    return False


def _whole(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT:
            raise InputError(Msg(N_("{path}: a single OTLP document of {size} MB; agentdbg reads "
                                    "one of at most {limit} MB (JSON Lines: any size)"),
                                 {"path": path, "size": size >> 20, "limit": MAX_DOCUMENT >> 20}))
        return path.read_bytes()
    except OSError as exc:
        raise InputError(Msg(N_("{path}: cannot read: {reason}"),
                             {"path": path, "reason": exc.strerror})) from None


def batches(path: Path) -> Iterator[list[Span]]:
    """The file's spans, one export at a time."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16).lstrip()
    if head[:1] != b"{":
        try:
            yield from_protobuf(_whole(path))
        except OtlpError as exc:
            raise InputError(Msg(N_("{where}: {problem}"), {"where": path, "problem": exc.args[0]})) from None
        return
    lines = open_lines(path)
    first = next(lines, b"")
    try:
        doc = json.loads(first)
    except (ValueError, RecursionError):   # one document over several lines
        yield _document(path, _whole(path), None)
        return
    yield _document(path, first, 1, doc)
    for n, raw in enumerate(lines, start=2):
        if raw.strip():
            yield _document(path, raw, n)


def _document(path: Path, raw: bytes, line: int | None, doc: Any = None) -> list[Span]:
    at = f"{path}:{line}" if line else str(path)
    if doc is None:
        try:
            doc = json.loads(raw)
        except RecursionError:
            raise InputError(Msg(N_("{where}: JSON nested too deeply"), {"where": at})) from None
        except ValueError as exc:
            raise InputError(Msg(N_("{where}: invalid JSON: {problem}"),
                                 {"where": at, "problem": getattr(exc, "msg", exc)})) from None
    try:
        return from_json(doc)
    except OtlpError as exc:
        raise InputError(Msg(N_("{where}: {problem}"), {"where": at, "problem": exc.args[0]})) from None


def read(path: Path) -> Iterator[Item]:
    """Two passes: the spans' ancestry first (a parent is exported after its children), then
    the calls, each with the agent it belongs to."""
    assembler = Assembler()
    for spans in batches(path):
        assembler.learn(spans)
    for spans in batches(path):
        yield from assembler.feed(spans)
