"""Runs read from other tools' records, written as transcripts the proxy's way.

The readers in ``agentdbg.traces`` turn a Claude Code session, a Codex rollout or OpenTelemetry
spans into conversations of exchanges (a native request body, the native reply). The
``Recorder`` writes each conversation as one transcript of the shape the proxy writes for the
same traffic — the header (the first request's messages, its tools in chat form and as
offered), one request event per call (its chat form, and its native body for the Responses
and Anthropic formats), the app's tool results as tool events, each reply, a stop event — so
``check``, ``replay``, ``replay --step``, ``report``, ``diff`` and the pytest plugin read an
imported run as they read a proxied one. The header says where the run was read from
(``source``), which agent held the conversation and which call started it (``agent``,
``started_by``), and what the source did not record (``notes``).

``as_transcript`` is what every command uses on a file that is not a transcript: the file is
recognised by its content, imported into a temporary folder and read from there.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.errors import InputError
from agentdbg.i18n import N_, Msg
from agentdbg.messages import call_name, is_error_result, tool_calls_of
from agentdbg.traces import detect, read_items
from agentdbg.traces.exchange import Called, Ended, Exchange, Item, Thread
from agentdbg.transcript.events import (
    Header,
    ModelError,
    Options,
    Request,
    Response,
    StartedBy,
    Stop,
    Tool,
)
from agentdbg.transcript.redact import Redactor
from agentdbg.transcript.writer import TranscriptWriter, tools_hash
from agentdbg.wire import codec as codecs
from agentdbg.wire.common import strip_wire

USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


@dataclass
class _Conversation:
    number: int
    thread: Thread
    writer: TranscriptWriter | None = None
    requests: int = 0
    last_messages: list[Any] = field(default_factory=list)
    last_reply: dict[str, Any] | None = None
    failed: str | None = None
    chat: _ChatMemo = field(default_factory=lambda: _ChatMemo())
    path: Path | None = None
    written: Written | None = None            # ended: its transcript is complete


@dataclass
class Written:
    """One transcript written: its path, the thread it holds, how many requests."""

    path: Path
    thread: Thread
    number: int
    requests: int


class Recorder:
    """Writes the conversations of a source as transcripts in ``folder`` (``STEM-conversation-N``)."""

    def __init__(self, folder: Path, stem: str, redactor: Redactor | None = None,
                 origin: str | None = None):
        self.folder = folder
        self.stem = stem
        self.redactor = redactor or Redactor()
        self.origin = origin
        self.threads: dict[str, Thread] = {}
        self.conversations: dict[str, _Conversation] = {}

    def add(self, item: Item, findings: list[dict[str, Any]] | None = None) -> _Conversation | None:
        """A thread (remembered), a call (written at once; ``findings``: its checks) or the end
        of a thread (its transcript completed, what was kept for it let go)."""
        if isinstance(item, Thread):
            self.threads[item.key] = item
            return None
        if isinstance(item, Ended):
            self.end(item.key)
            return None
        return self.call(item, findings)

    def end(self, key: str) -> None:
        conv = self.conversations.get(key)
        if conv is None or conv.writer is None:
            return
        _stop(conv)
        conv.written = Written(conv.writer.path, conv.thread, conv.number, conv.requests)
        conv.writer, conv.last_messages, conv.last_reply, conv.chat = None, [], None, _ChatMemo()

    def call(self, called: Called, findings: list[dict[str, Any]] | None = None) -> _Conversation:
        conv = self.conversations.get(called.key)
        if conv is not None and conv.written is not None:
            raise InputError(f"{conv.written.path}: a call after its conversation ended")
        if conv is None:
            thread = self.threads.get(called.key) or Thread(called.key, "chat", "unknown")
            conv = self.conversations[called.key] = _Conversation(len(self.conversations) + 1, thread)
        _record(self, conv, called.exchange, findings)
        return conv

    def number_of(self, key: str) -> int | None:
        conv = self.conversations.get(key)
        return conv.number if conv is not None else None

    def close(self) -> list[Written]:
        """Each conversation's stop event; what was written."""
        for key in self.conversations:
            self.end(key)
        return [c.written for c in self.conversations.values() if c.written is not None]


@dataclass
class _ChatMemo:
    """A conversation's last request in chat form, kept so that the next request — the same
    entries and a few more — converts only its new entries (else each request of a long
    conversation would convert its whole history again: quadratic in its length)."""

    entries: list[Any] = field(default_factory=list)         # the native entries
    chat: list[tuple[int, Any]] = field(default_factory=list)  # (entry index, chat message)


def chat_of(wire: str, body: dict[str, Any], memo: _ChatMemo | None = None) -> tuple[list[Any], list[Any]]:
    """The request's messages and tools in chat form (what the engine and the rules read)."""
    codec = codecs.get(wire)
    if codec.chat_native:
        tools = body.get("tools")
        return list(body.get("messages") or []), tools if isinstance(tools, list) else []
    entries = body.get(codec.key)
    if memo is None or not codec.entry_local or not isinstance(entries, list):
        form = codec.chat_form(body)
        return strip_wire(form.messages), strip_wire(form.tools)
    same = _same_start(memo.entries, entries)
    rest = codec.chat_form({codec.key: entries[same:]})
    fields = codec.chat_form({k: v for k, v in body.items() if k != codec.key})
    chat = [(i, m) for i, m in memo.chat if i < same] + \
        [(loc[0] + same, m) for loc, m in zip(rest.locs, strip_wire(rest.messages))]
    memo.entries, memo.chat = entries, chat
    return strip_wire(fields.messages) + [m for _, m in chat], strip_wire(fields.tools)


def _same_start(before: list[Any], now: list[Any]) -> int:
    """How many first entries ``now`` shares with ``before`` (the same objects, or equal)."""
    n = 0
    for a, b in zip(before, now):
        if a is not b and a != b:
            break
        n += 1
    return n


def _record(rec: Recorder, conv: _Conversation, ex: Exchange,
            findings: list[dict[str, Any]] | None) -> None:
    wire = conv.thread.wire
    codec = codecs.get(wire)
    messages, tools = chat_of(wire, ex.body, conv.chat)
    if conv.writer is None:
        conv.writer = _open(rec, conv, ex.body, messages, tools)
        conv.path = conv.writer.path
    elif conv.last_reply is not None:
        _tool_events(conv, messages)
    writer = conv.writer
    conv.requests += 1
    params = {k: v for k, v in ex.body.items()
              if k not in ("messages", "tools", "input", "instructions", "system")}
    writer.write(Request(turn=conv.requests, params=params, prefix=0, append=[], messages=messages,
                         findings=findings, body=None if codec.chat_native else ex.body))
    conv.last_messages, conv.last_reply, conv.failed = messages, None, None
    reply = codec.reply(ex.reply) if ex.reply is not None else None
    if reply is None:
        conv.failed = ex.error or f"the recorded reply is not a {codec.label} response"
        writer.write(ModelError(turn=conv.requests, message=conv.failed, latency_ms=ex.latency_ms))
        return
    message = strip_wire(reply.message)
    conv.last_reply = message
    usage = {k: v for k, v in (reply.usage or {}).items()
             if k not in USAGE_COUNTS or (isinstance(v, (int, float)) and not isinstance(v, bool))}
    native = ex.reply if codec.stores else None
    writer.write(Response(turn=conv.requests, message=message, usage=usage,
                          finish_reason=reply.finish_reason if isinstance(reply.finish_reason, str)
                          else None, latency_ms=ex.latency_ms,
                          id=native.get("id") if native else None,
                          output=native.get("output") if native else None))


def _tool_events(conv: _Conversation, messages: list[Any]) -> None:
    """The app's tool results (in this request) for the calls of the last reply."""
    calls = {c["id"]: c for c in tool_calls_of(conv.last_reply)
             if isinstance(c, dict) and isinstance(c.get("id"), str)}
    assert conv.writer is not None
    for index, m in enumerate(messages):
        if isinstance(m, dict) and m.get("role") == "tool" and \
                isinstance(m.get("tool_call_id"), str) and m["tool_call_id"] in calls:
            c = calls.pop(m["tool_call_id"])
            fn = c["function"] if isinstance(c.get("function"), dict) else {}
            content = m.get("content") if isinstance(m.get("content"), str) else json.dumps(
                m.get("content"), ensure_ascii=False)
            conv.writer.write(Tool(turn=conv.requests, index=index, tool_call_id=m["tool_call_id"],
                                   name=call_name(c), arguments=fn.get("arguments"), content=content,
                                   ok=not is_error_result(content), injected=False, stubbed=False,
                                   note="run by the app"))


def _open(rec: Recorder, conv: _Conversation, body: dict[str, Any], messages: list[Any],
          tools: list[Any]) -> TranscriptWriter:
    from agentdbg.transcript.runs import create_run_file

    thread, codec = conv.thread, codecs.get(conv.thread.wire)
    path, fh = create_run_file("", rec.folder, f"{rec.stem}-conversation-{conv.number}")
    question = next((m.get("content") for m in messages
                     if isinstance(m, dict) and m.get("role") == "user"), None)
    model = body.get("model") if isinstance(body.get("model"), str) else thread.model
    options = Options(model=model, max_turns=100_000, max_tool_calls=1_000_000,
                      repeat_limit=100_000, send_anyway=True)
    if codec.chat_native:
        if "tool_choice" in body:
            options.tool_choice = body["tool_choice"]
        if isinstance(body.get("parallel_tool_calls"), bool):
            options.parallel_tool_calls = body["parallel_tool_calls"]
    started_by = None
    if thread.parent is not None:
        linked = rec.conversations.get(thread.parent.thread)
        call_id = thread.parent.call_id
        started_by = StartedBy(conversation=linked.number if linked else None, call_id=call_id,
                               tool=_tool_of(linked, call_id) if linked else None,
                               path=str(linked.path) if linked and linked.path else None)
    notes = [n for n in (thread.missing_text(), *thread.notes) if n]
    header = Header(model=model, provider=thread.source, question=question
                    if isinstance(question, str) else None, tools=tools, tools_hash=tools_hash(tools),
                    options=options, initial_messages=list(messages), conversation=conv.number,
                    api=thread.wire, tool_definitions=[d.to_dict() for d in codec.tools(body)],
                    agent=thread.agent, started_by=started_by, source=rec.origin,
                    notes=notes or None)
    return TranscriptWriter(path, header, rec.redactor, fh=fh, keep_open=False)


def _tool_of(conv: _Conversation, call_id: str | None) -> str | None:
    """The tool of the call ``call_id`` in ``conv``'s history so far (None: not there)."""
    if call_id is None:
        return None
    for message in [*conv.last_messages, conv.last_reply]:
        for call in tool_calls_of(message):
            if isinstance(call, dict) and call.get("id") == call_id:
                return call_name(call)
    return None


def _stop(conv: _Conversation) -> None:
    assert conv.writer is not None
    reply = conv.last_reply
    messages = conv.last_messages + [reply] if reply is not None else conv.last_messages
    on_call = bool(reply and tool_calls_of(reply))
    if conv.failed is not None:
        reason, detail = "model_error", conv.failed
    elif on_call:
        reason, detail = "completed", ("the record ends on the model's tool call, with no result "
                                       "sent back")
    else:
        reason, detail = "completed", "the model answered without tool calls"
    conv.writer.write(Stop(reason=reason, detail=detail, messages=messages, usage={},
                           ended_on_call=on_call))
    conv.writer.close()


# -- a whole file at once -----------------------------------------------------------------------

def import_file(path: Path, folder: Path, stem: str | None = None,
                redactor: Redactor | None = None) -> list[Written]:
    """Every conversation of ``path`` (a source ``traces.detect`` knows) written into ``folder``."""
    source = detect(path)
    if source is None:
        raise InputError(Msg(N_("{path}: not a file agentdbg can import (a Claude Code session, "
                                "a Codex CLI rollout or OpenTelemetry traces)"), {"path": path}))
    rec = Recorder(folder, stem or path.stem, redactor, origin=f"{source} {path}")
    try:
        for item in read_items(path, source):
            rec.add(item)
    finally:
        written = rec.close()
    return written


@contextlib.contextmanager
def as_transcript(path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A foreign file as a transcript to read (its first conversation, the main one), and the
    warnings to say (which other conversations it holds). The temporary folder goes after."""
    with tempfile.TemporaryDirectory(prefix="agentdbg-import-") as folder:
        written = import_file(path, Path(folder))
        if not written:
            raise InputError(Msg(N_("{path}: holds no call of a model to read"), {"path": path}))
        warnings = []
        if len(written) > 1:
            others = ", ".join(f"{w.thread.agent or 'conversation'} ({w.requests} request"
                               f"{'s' if w.requests != 1 else ''})" for w in written[1:])
            warnings.append(f"{path} holds {len(written)} conversations; reading the first "
                            f"({written[0].thread.agent or 'main'}); the others: {others} — "
                            "agentdbg import writes each as a transcript")
        yield written[0].path, warnings


def foreign(path: Path) -> str | None:
    """The source ``path`` is (``claude-code``, ``codex``, ``otlp``), None for anything else."""
    return detect(path)


def items_of(path: Path) -> Iterable[Item]:
    source = detect(path)
    return read_items(path, source) if source else []
