"""Group proxied requests into conversations, and write one transcript per conversation.

A request continues a conversation when it extends that conversation's last request
(the same messages, then more). A request that does not extend any is matched by its
client connection: from the same client, a request that still shares the opening of
the conversation (or one whose first messages were trimmed away) is that
conversation with its history rewritten; a fresh start (no assistant or tool message
yet) is always a new conversation. Two identical runs of the same app, one after the
other or at the same time, are two conversations.

Each conversation is written as a transcript (the format of ``run``), with the app's
tool results recorded as tool events so ``agentdbg replay`` can play it. A transcript
records what was sent: its stop event holds the last request and, when the app ended
on a tool call it never answered (structured output, stop-on-first-tool), says so
instead of judging the run cancelled.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentdbg.agents import starter_role
from agentdbg.checker import Finding
from agentdbg.checker.rules.conversation import ConversationRules
from agentdbg.i18n import N_, _
from agentdbg.messages import call_name, is_error_result, tool_calls_of
from agentdbg.server.proxy import lineage
from agentdbg.server.served import ResponseStore, Stored
from agentdbg.textsafe import one_line
from agentdbg.transcript import Redactor, TranscriptWriter, tools_hash
from agentdbg.transcript.compare import common_prefix
from agentdbg.transcript.events import (
    AgentNamed,
    Blocked,
    Header,
    ModelError,
    Options,
    Request,
    Response,
    StartedBy,
    Stop,
    Tool,
)
from agentdbg.transcript.runs import Claim
from agentdbg.wire import codec as codecs


def _first_user(messages: list) -> int:
    return next((i for i, m in enumerate(messages)
                 if isinstance(m, dict) and m.get("role") == "user"), 0)


def _extends(conv: Conversation, messages: list) -> bool:
    """The request is the conversation's last request, then more."""
    last = conv.last_messages
    return len(messages) > len(last) and common_prefix(last, messages) == len(last)


def _carries_last_reply(conv: Conversation, messages: list) -> bool:
    """The request holds the tool calls the model just answered this conversation with (ids a
    model generates are unique), whatever the app cut around them."""
    reply = conv.rules.last_response
    ids = _string_ids(reply)
    if not ids:
        return False
    return any(ids <= _string_ids(m)
               for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def _string_ids(message: object) -> set[str]:
    """The ids of an assistant message's calls that are strings (ids are data: any JSON type)."""
    return {c["id"] for c in tool_calls_of(message)
            if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"]}


def _trimmed_front(conv: Conversation, messages: list) -> bool:
    """The request is the conversation's last request with its first messages cut (a
    history trim), then more: it goes on from where the conversation was."""
    last = conv.last_messages
    for cut in range(1, len(last)):
        rest = last[cut:]
        if len(messages) > len(rest) and common_prefix(rest, messages) == len(rest) and \
                any(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in rest):
            return True
    return False


def _edited(conv: Conversation, messages: list) -> bool:
    """The request goes on from the conversation with its history edited (a framework's trim,
    a ``name`` added): a reply the model gave in it is still there."""
    from agentdbg.checker.rules.edits import continues

    reply = conv.rules.last_response
    before = conv.last_messages + ([reply] if reply else [])
    if not continues(before, messages):
        return False
    # a kept reply says "the same conversation" only with more: the same opening question, or
    # a call the model made in it (its id is unique); two conversations whose model said the
    # same short text ("hello", "OK") are still two
    return _opening(conv.last_messages) == _opening(messages) or \
        any(ids and ids <= _calls_made(before) for ids in map(_string_ids, messages))


def _opening(messages: list) -> object:
    """The content of the first user message (None when there is none)."""
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    return first.get("content") if first is not None else None


def _calls_made(messages: list) -> set[str]:
    return {i for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
            for i in _string_ids(m)}


def _fresh_start(messages: list) -> bool:
    return not any(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in messages)


def _stderr(text: str) -> None:
    print(f"agentdbg proxy: {one_line(text)}", file=sys.stderr, flush=True)


def _write_failure(template: str, number: int, writer: Any) -> str:
    """``template`` (a line with ``{n}``, ``{path}`` and ``{why}``) for a transcript that could
    not be written, in the chosen language."""
    error = writer.error
    why = error.strerror or str(error) or type(error).__name__
    return _(template).format(n=number, path=writer.path, why=why)


USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _readable(usage: object, finish: object) -> tuple[dict, str | None, list[str]]:
    """The usage and finish reason of a response as a transcript holds them (counts are
    numbers, a finish reason is a string), and a note for each value left out."""
    unread = []
    if not isinstance(usage, dict):
        if usage:
            unread.append(f"usage {json.dumps(usage, default=str)[:40]} is not an object: not recorded")
        usage = {}
    for key in USAGE_COUNTS:
        value = usage.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            unread.append(f"usage.{key} {json.dumps(value, default=str)[:40]} is not a number: "
                          "not recorded")
            usage = {k: v for k, v in usage.items() if k != key}
    if finish is not None and not isinstance(finish, str):
        unread.append(f"finish_reason {json.dumps(finish, default=str)[:40]} is not a string: "
                      "not recorded")
        finish = None
    return usage, finish, unread


class Export(Protocol):
    """``proxy --otlp``: given each conversation's writer and header, what to write through
    instead (the writer and an exporter beside it); ``close`` returns its warnings."""

    def __call__(self, writer: TranscriptWriter, header: Header) -> Any: ...

    def close(self) -> list[str]: ...


@dataclass
class Conversation:
    number: int
    client: str | None = None
    writer: TranscriptWriter | None = None
    rules: ConversationRules = field(default_factory=ConversationRules)
    ended_on_call: bool = False
    outputs: list = field(default_factory=list)   # Responses API: output items seen so far
    awaiting: list | None = None   # the messages of a request relayed and not yet answered
    weight: int = 0                # bytes of its latest request: what following it costs
    used: int = 0                  # when the proxy last saw it (a count of requests)
    failed: str | None = None      # the model's error answer to the last request (HTTP 4xx/5xx)
    blocked: list | None = None    # the app's last request, when --block-invalid answered it
    agent: str | None = None       # the agent whose context this is (see ``lineage``)
    started_by: StartedBy | None = None   # the call (or handoff) that started it
    named: str | None = None       # the agent its transcript names so far
    pending_spawns: dict = field(default_factory=dict)   # call id -> (tool, agent, task)
    children: dict = field(default_factory=dict)         # call id -> the conversation it started
    handed_to: Conversation | None = None   # the conversation a handoff went on in
    fresh_edits: list = field(default_factory=list)      # the last request's edits, to record

    @property
    def requests(self) -> int:
        return self.rules.requests

    @property
    def last_messages(self) -> list:
        return self.rules.last_messages


FOLLOWED = 256 << 20   # bytes of requests whose conversations the proxy follows in memory


class Tracker:
    """All conversations seen by one proxy. Used from one thread (the proxy's analyst).

    Following a conversation means holding its latest request; past ``followed`` bytes of them,
    the conversations the app used least recently are ended (their transcripts get their stop
    event, said on the console) and forgotten: a request continuing one starts a new one."""

    def __init__(self, save_dir: Path | None, upstream: str | dict[str, str],
                 export: Export | None = None, followed: int = FOLLOWED, label: str | None = None):
        """``upstream``: one URL, or one per wire format (``proxy -- CMD`` relays each format
        to its own endpoint); ``label``: the run's name, which starts each transcript's file
        name (``LABEL-conversation-N.jsonl``) so a run's conversations are found together."""
        self.save_dir = save_dir
        self.upstream = upstream
        self.label = label
        # proxy --otlp: export(writer, header) is used in the writer's place, fed the same
        # events; export.close() returns warnings
        self.export = export
        self.conversations: list[Conversation] = []
        self.redactor = Redactor()
        self._numbers = itertools.count(1)
        self.stored = ResponseStore()      # Responses API: response id -> what led to it
        self.claims: dict[Path, Claim] = {}  # the transcripts being written, held from retention
        self.say = _stderr                 # one line for the console (the analysis' view)
        self._told: set[int] = set()       # conversations whose transcript failed, said once
        self.followed = followed
        self._clock = itertools.count(1)
        self._ended: list[Conversation] = []   # ended early to bound memory; closed at stop
        #: the name every transcript of this proxy run starts with (the header's ``run``)
        self.run_name = label or "proxy-" + time.strftime("%Y%m%d-%H%M%S")

    def new_from(self, conv: Conversation, messages: list) -> int:
        """The first message of ``messages`` the conversation's previous request did not carry."""
        return common_prefix(conv.last_messages, messages) if conv.requests else 0

    def remember(self, response_id: str, conv: Conversation, history: list, items: list) -> None:
        """A Responses API response, for requests that continue it with previous_response_id."""
        self.stored.put(response_id, Stored(history, items, owner=conv))

    def add_secret(self, secret: str) -> None:
        """A key seen in a header: never written, never shown (kept in memory only)."""
        self.redactor.add(secret)

    def start(self, client: str | None = None) -> Conversation:
        """A new conversation (a request continuing something this proxy never saw)."""
        conv = Conversation(next(self._numbers), client)
        self.conversations.append(conv)
        return conv

    def assign(self, messages: list, client: str | None = None) -> Conversation:
        """The conversation ``messages`` continues, or a new one (a handoff's or a subagent's
        is a child of the call that started it)."""
        if not _fresh_start(messages):      # an agent started with a copy of its parent's history
            forked = lineage.forked(self.conversations, messages)
            if forked is not None:
                conv = self._child(forked, client)
                conv.client = client
                return conv
        best = (self._best(messages, client, _extends)
                or self._best(messages, client, _carries_last_reply)
                or self._best(messages, client, _trimmed_front))
        link = lineage.handoff(best, messages) if best is not None else None
        if best is None and _fresh_start(messages):
            best = self._best(messages, client, lineage.text_step)
            if best is not None:
                best.rules.text_protocol = True
            else:
                link = lineage.spawned(self.conversations, messages)
        elif best is None:
            best = self._best(messages, client, _edited) or self._same_client(messages, client)
        if link is not None:
            best = self._child(link, client)
        if best is None:
            best = Conversation(next(self._numbers), client, agent=lineage.agent_at_start(messages))
            self.conversations.append(best)
        best.client = client
        return best

    def _child(self, link: lineage.Link, client: str | None) -> Conversation:
        parent = link.parent
        conv = Conversation(next(self._numbers), client, agent=link.agent,
                            started_by=StartedBy(conversation=parent.number, call_id=link.call_id,
                                                 tool=link.tool, kind=link.kind))
        if link.call_id is not None:
            parent.children[link.call_id] = conv
        if link.kind == "subagent" and parent.agent is None:
            self._named(parent, starter_role(link.tool))
        if link.kind == "handoff":
            parent.handed_to = conv
            conv.rules.inherited = (parent.last_messages, parent.rules.last_response)
        self.conversations.append(conv)
        return conv

    def parent_of(self, conv: Conversation) -> Conversation | None:
        """The conversation whose call started ``conv`` (None: a root, or one forgotten)."""
        number = conv.started_by.conversation if conv.started_by is not None else None
        return next((c for c in [*self.conversations, *self._ended] if c.number == number), None)

    def _best(self, messages: list, client: str | None,
              fits: Callable[[Conversation, list], bool]) -> Conversation | None:
        """The conversation ``fits`` says this request continues: the same client's first,
        else the most recent one."""
        found = [c for c in reversed(self.conversations) if c.last_messages and fits(c, messages)]
        return next((c for c in found if c.client == client), found[0] if found else None)

    def _same_client(self, messages: list, client: str | None) -> Conversation | None:
        """The latest conversation of ``client``, when ``messages`` rewrites its history."""
        for conv in reversed(self.conversations):
            if conv.client != client:
                continue
            last = conv.last_messages
            return conv if common_prefix(last, messages) > _first_user(last) else None
        return None

    def _written(self, conv: Conversation) -> None:
        """Say once when ``conv``'s transcript could not be written (a full disk, a symlink
        planted in its place): what follows of it is not recorded (named again at stop)."""
        error = getattr(conv.writer, "error", None)
        if error is not None and conv.number not in self._told:
            self._told.add(conv.number)
            self.say(_write_failure(N_("conversation {n}: its transcript {path} could not be written "
                                       "({why}); the rest of this conversation is not recorded"),
                                    conv.number, conv.writer))

    def unwritten(self) -> list[str]:
        """Each conversation whose transcript stops short, and why."""
        return [_write_failure(N_("conversation {n}: its transcript {path} could not be written "
                                  "({why}); its transcript stops before its end"), c.number, c.writer)
                for c in [*self._ended, *self.conversations] if getattr(c.writer, "error", None) is not None]

    def weigh(self, conv: Conversation, size: int, busy: set[int] | None = None) -> None:
        """``conv`` was just used by a request of ``size`` bytes; end the conversations used
        least recently while all of them weigh more than ``followed`` (never one with a request
        in flight: ``awaiting``, or numbered in ``busy``)."""
        conv.weight, conv.used = size, next(self._clock)
        total = sum(c.weight for c in self.conversations)
        while total > self.followed:
            idle = [c for c in self.conversations if c is not conv and c.awaiting is None
                    and c.number not in (busy or ())]
            if not idle:
                return
            oldest = min(idle, key=lambda c: c.used)
            total -= oldest.weight
            self._set_aside(oldest)

    def _set_aside(self, conv: Conversation) -> None:
        self.conversations.remove(conv)
        self.stored.forget(conv)
        if conv.writer is not None:
            self._end(conv, " (ended early: the proxy follows at most "
                            f"{self.followed >> 20} MB of conversations in memory)")
            self._ended.append(conv)
        self.say(_("conversation {n} ended early to bound the proxy's memory (its transcript is "
                   "complete up to here); a request that continues it starts a new conversation")
                 .format(n=conv.number))

    def check(self, conv: Conversation, messages: list) -> list[Finding]:
        return conv.rules.check(messages)

    def record_request(self, conv: Conversation, body: dict, findings: list[Finding],
                       messages: list | None = None, *, wire: str = "chat",
                       tools: list | None = None) -> None:
        """``messages``/``tools``: the chat form (Responses, Anthropic: ``body`` is native and
        is recorded as sent, under ``body``)."""
        messages = messages if messages is not None else body.get("messages") or []
        if conv.writer is None:
            conv.writer = self._open(conv, body, messages, wire, tools)
        elif conv.rules.last_response is not None:
            self._tool_events(conv, messages)
            self._name(conv, messages)
        params = {k: v for k, v in body.items()
                  if k not in ("messages", "tools", "input", "instructions", "system")}
        edits = [e.to_dict() for e in conv.rules.edits] or None
        conv.writer.write(Request(turn=conv.requests + 1, params=params, prefix=0, append=[],
                                  messages=messages, findings=[f.to_dict() for f in findings],
                                  edits=edits, body=None if codecs.get(wire).chat_native else body))
        conv.awaiting = list(messages)
        conv.blocked = None
        self._written(conv)

    def record_response(self, conv: Conversation, messages: list, reply: dict | None, *,
                        usage: dict | None, finish: str | None, latency_ms: float,
                        error: str | None = None, status: int | None = None,
                        stream_shape: list[str] | None = None, native: dict | None = None) -> None:
        """``native``: a Responses API response as received (its id and output items are
        recorded, so a request continuing it can be judged from the transcript)."""
        conv.rules.saw_response(messages, reply)
        conv.pending_spawns.update(lineage.spawns_in(reply))
        conv.ended_on_call = bool(reply and tool_calls_of(reply))
        conv.awaiting = None
        conv.failed = None if reply is not None else \
            f"the model answered HTTP {status}: {error}" if status is not None else error
        if conv.writer is None:
            return
        if reply is None:
            conv.writer.write(ModelError(turn=conv.requests, message=error, status=status,
                                         latency_ms=latency_ms))
        else:
            usage, finish, unread = _readable(usage, finish)
            conv.writer.write(Response(
                turn=conv.requests, message=reply, usage=usage, finish_reason=finish,
                latency_ms=latency_ms, note="; ".join([*(stream_shape or []), *unread]) or None,
                id=native.get("id") if native is not None else None,
                output=native.get("output") if native is not None else None))
        self._written(conv)

    def record_blocked(self, conv: Conversation, body: dict, findings: list[Finding],
                       messages: list | None = None, *, wire: str = "chat",
                       tools: list | None = None) -> None:
        messages = messages if messages is not None else body.get("messages") or []
        if conv.writer is None:
            conv.writer = self._open(conv, body, messages, wire, tools)
        conv.writer.write(Blocked(turn=conv.requests + 1, findings=[f.to_dict() for f in findings]))
        # never sent: the app's next request is judged against the last one the model saw
        conv.blocked = messages
        self._written(conv)

    def _name(self, conv: Conversation, messages: list) -> None:
        """The agent the app named on this conversation's last reply, recorded when new."""
        self._named(conv, lineage.own_name(conv, messages))

    @staticmethod
    def _named(conv: Conversation, name: str | None) -> None:
        """``conv`` is ``name``'s context: said in its transcript when new."""
        if name is not None and name != conv.named:
            conv.agent = conv.named = name
            if conv.writer is not None:
                conv.writer.write(AgentNamed(turn=conv.requests, name=name))

    def _tool_events(self, conv: Conversation, messages: list) -> None:
        """The app's tool results, recorded as tool events so replay can play them."""
        # ids are data of any JSON type: only a string id pairs a result with its call
        calls = {c["id"]: c for c in tool_calls_of(conv.rules.last_response)
                 if isinstance(c, dict) and isinstance(c.get("id"), str)}
        for index, m in enumerate(messages):
            if isinstance(m, dict) and m.get("role") == "tool" and \
                    isinstance(m.get("tool_call_id"), str) and m["tool_call_id"] in calls:
                c = calls.pop(m["tool_call_id"])
                fn: dict = c["function"] if isinstance(c.get("function"), dict) else {}
                content = m.get("content") if isinstance(m.get("content"), str) else json.dumps(
                    m.get("content"), ensure_ascii=False)
                assert conv.writer is not None
                conv.writer.write(Tool(turn=conv.requests, index=index, tool_call_id=m["tool_call_id"],
                                       name=call_name(c), arguments=fn.get("arguments"),
                                       content=content, ok=not is_error_result(content),
                                       injected=False, stubbed=False, note="run by the app"))

    def _open(self, conv: Conversation, body: dict, messages: list, wire: str = "chat",
              chat_tools: list | None = None) -> TranscriptWriter:
        from agentdbg.transcript.redact import safe_url
        from agentdbg.transcript.runs import create_run_file, runs_dir

        folder = Path(self.save_dir or runs_dir())
        stem = f"{self.run_name}-conversation-{conv.number}"
        conv.named = conv.agent
        path, fh = create_run_file("", folder, stem)
        if folder not in self.claims:
            self.claims[folder] = Claim(folder)
        # held until its stop event is written (close); without a claim (a full disk) it is
        # still kept, having no stop event until then
        with contextlib.suppress(OSError):
            self.claims[folder].add(path)
        raw_tools = body.get("tools") if chat_tools is None else chat_tools
        tools = raw_tools if isinstance(raw_tools, list) else []
        question = next((m.get("content") for m in messages
                         if isinstance(m, dict) and m.get("role") == "user"), None)
        model = body.get("model") if isinstance(body.get("model"), str) else None
        options = Options(model=model, max_turns=100_000, max_tool_calls=1_000_000,
                          repeat_limit=100_000, send_anyway=True)
        if codecs.get(wire).chat_native:   # what the header's types hold (the body is data)
            if "tool_choice" in body:
                options.tool_choice = body["tool_choice"]
            if isinstance(body.get("parallel_tool_calls"), bool):
                options.parallel_tool_calls = body["parallel_tool_calls"]
            if _number(body.get("temperature")):
                options.temperature = body["temperature"]
        upstream = self.upstream if isinstance(self.upstream, str) else self.upstream.get(wire, "")
        # the first request's messages are kept here, once: that request refers to them
        header = Header(model=model, provider="proxy", base_url=safe_url(upstream),
                        question=question if isinstance(question, str) else None, tools=tools,
                        tools_hash=tools_hash(tools), options=options,
                        initial_messages=list(messages), conversation=conv.number, api=wire,
                        run=self.run_name, agent=conv.agent, started_by=conv.started_by,
                        # every tool the request offered, hosted and namespaced ones too (shown
                        # and counted by the report; "tools" keeps the chat form the engine runs)
                        tool_definitions=[d.to_dict() for d in codecs.get(wire).tools(body)])
        writer = TranscriptWriter(path, header, self.redactor, fh=fh, keep_open=False)
        return self.export(writer, writer.header) if self.export is not None else writer

    def close(self) -> list[Path]:
        """Write each conversation's stop event: what was sent, and how the app left it."""
        paths = [conv.writer.path for conv in self._ended]   # type: ignore[union-attr]
        for conv in self.conversations:
            if conv.writer is None:
                continue
            self._end(conv)
            paths.append(conv.writer.path)
        for claim in self.claims.values():  # every stop event is written: all finished now
            claim.close()
        for warning in self.export.close() if self.export is not None else []:
            print(f"agentdbg: warning: {one_line(warning)}", file=sys.stderr)
        return paths

    def _end(self, conv: Conversation, why: str = "") -> None:
        """Write ``conv``'s stop event and let go of its transcript."""
        if conv.writer is not None:
            rules = conv.rules
            messages = rules.last_messages + [rules.last_response] if rules.last_response \
                else rules.last_messages
            if conv.awaiting is not None:
                reason, detail = "cancelled", (f"the proxy stopped before request "
                                               f"{rules.requests + 1} was answered")
                messages = conv.awaiting
            elif conv.blocked is not None:  # the app went no further than a blocked request
                reason, detail = "invalid_request", N_("the app's last request was blocked "
                                                       "(--block-invalid): it broke a protocol rule")
            elif conv.failed is not None:   # the upstream's error answer ended it (a 400, say)
                reason, detail = "model_error", conv.failed
            elif rules.last_response is None:
                reason, detail = "cancelled", N_("the proxy stopped before the model answered")
            elif conv.ended_on_call and conv.handed_to is not None:
                reason, detail = "completed", (f"handed off to {conv.handed_to.agent or 'another agent'}"
                                               f" (conversation {conv.handed_to.number})")
            elif conv.ended_on_call:
                reason, detail = "completed", N_("the app ended on the model's tool call without "
                                                 "sending its result (e.g. structured output or "
                                                 "stop-on-first-tool)")
            else:
                reason, detail = "completed", "the model answered without tool calls"
            conv.writer.write(Stop(reason=reason, detail=detail + why, messages=messages, usage={},
                                   ended_on_call=conv.ended_on_call and conv.awaiting is None))
            conv.writer.close()
