"""A transcript read once into turns, calls and the histories the messages went through.

Every command of this package (report, diff, trajectory assertions, export, budget)
reads a transcript through ``read_run``: one streaming pass over the events, linear in
the transcript's size. The messages array is tracked as the requests rebuild it
(``prefix`` + ``append``). While each request only appends, the run stays in one
*history*; a request that changes an earlier message (your edit, drop, rewind or retry,
or an app that rewrites its history, seen through the proxy) starts a new history.
Pairing and checker findings are computed once per history, on its last state.

A *card* is what the report shows as one block: a turn (the messages first sent with
its request, the model's reply, the tool results that answer it), one of your actions,
a blocked request, or the final state when it differs from the last request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agentdbg.messages import loads_json, token_count
from agentdbg.report import adapter
from agentdbg.transcript.events import (
    Action,
    AgentNamed,
    AnyEvent,
    Blocked,
    Header,
    ModelError,
    Request,
    Response,
    Stop,
    Tool,
)
from agentdbg.transcript.reader import Transcript
from agentdbg.wire import codec

SEVERITY_ORDER = {"warning": 1, "error": 2}


@dataclass
class Card:
    kind: str                                   # turn | action | blocked | final
    turn: int | None = None
    sent: list[int] = field(default_factory=list)      # messages first sent with this request
    reply: int | None = None                           # index of the model's reply
    results: list[int] = field(default_factory=list)   # tool messages answering the reply
    request: dict = field(default_factory=dict)        # {"messages": n, "params": {...}}
    response: dict | None = None                       # usage, finish_reason, latency_ms, note
    error: dict | None = None                          # model_error
    tools: dict[str, Tool] = field(default_factory=dict)  # tool_call_id -> tool event
    findings: list[Any] = field(default_factory=list)     # blocked / recorded by the proxy
    action: Action | None = None
    rewritten_from: int | None = None   # this card starts a new history at this index
    #: the turn as the history counts it (what the step-mode screen said); ``turn`` is the
    #: request's number in time, which differs after a rewind, retry or back
    in_history: int | None = None

    @property
    def indices(self) -> list[int]:
        return self.sent + ([self.reply] if self.reply is not None else []) + self.results


@dataclass
class History:
    """One history of the messages array; ``messages`` is its last state."""
    messages: list
    start: int                                  # first index this history shows
    cards: list[Card] = field(default_factory=list)
    marks: dict[int, set] = field(default_factory=dict)
    recorded: list[Any] = field(default_factory=list)  # cross-request findings (proxy)
    findings: list[Any] = field(default_factory=list)
    pairing: Any = None
    pending_last: bool = False                  # its last message's calls never got results

    def findings_at(self) -> dict[Any, list]:
        out: dict[Any, list] = {}
        for f in self.findings:
            out.setdefault(f.index, []).append(f)
        return out


@dataclass
class Call:
    """One tool call the model asked for, with what answered it."""
    turn: int | None
    position: int
    id: str | None
    name: str | None
    arguments: Any                  # as the model sent them (normally a string)
    result: str | None = None       # the tool message content (None: never answered)
    ok: bool | None = None
    error_type: str | None = None
    duration_ms: float | None = None
    injected: bool = False
    message_index: int | None = None   # the assistant message that asked for it
    result_index: int | None = None
    history: int = 0

    @property
    def parsed_arguments(self) -> Any:
        if not isinstance(self.arguments, str):
            return self.arguments
        try:
            return loads_json(self.arguments)
        except ValueError:       # not JSON, or nested too deeply to walk: kept as its text
            return _Unparsed(self.arguments)


@dataclass(frozen=True)
class _Unparsed:
    text: str


@dataclass
class TurnInfo:
    turn: int
    request_messages: int
    usage: dict = field(default_factory=dict)
    latency_ms: float | None = None
    finish_reason: str | None = None
    note: str | None = None
    error: str | None = None
    reply: dict | None = None
    tool_ms: float = 0.0


@dataclass
class Run:
    path: Path
    header: Header
    histories: list[History]
    turns: list[TurnInfo]
    stop: Stop | None
    actions: list[Action]
    blocked: list[Card]
    warnings: list[str]
    last_request: list = field(default_factory=list)
    last_usage: dict = field(default_factory=dict)
    #: actions past ``ACTIONS_SHOWN`` are counted here, not kept (a recording with a million
    #: of them would otherwise cost gigabytes to read and a page nobody can open)
    actions_not_shown: int = 0
    #: the turns of the last history (the replies it holds, or the last request's turn when
    #: it got none), as the step-mode screen counts them; ``len(turns)`` counts every request,
    #: those a rewind or retry cut included
    turns_in_history: int = 0

    # -- summary ---------------------------------------------------------------------------
    @property
    def stop_reason(self) -> str | None:
        return self.stop.reason if self.stop is not None else None

    @property
    def stop_detail(self) -> str:
        return (self.stop.detail or "") if self.stop is not None else ""

    @property
    def final_messages(self) -> list:
        return self.histories[-1].messages if self.histories else []

    @property
    def tools(self) -> list:
        return self.header.tool_list

    @property
    def definitions(self) -> list[dict]:
        """Every tool the run's requests offered: hosted and namespaced ones too when the
        transcript recorded them, else the chat tools."""
        from agentdbg.conversation import definitions_of

        return definitions_of(self.header.tools, self.header.tool_definitions)

    @property
    def model(self) -> str:
        return self.header.model or "?"

    def usage(self) -> dict:
        total = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        estimated = False
        for t in self.turns:
            for key in total:
                value = t.usage.get(key)
                total[key] += token_count(value)
            estimated = estimated or bool(t.usage.get("estimated"))
        return {**total, "estimated": estimated}

    def calls(self, *, inherited: bool = False, latest: bool = False) -> list[Call]:
        """Every call of every reply, in order, with its result where one came.

        ``inherited``: also the calls of assistant messages the run started with (a fork's
        or a proxied conversation's earlier turns), first, with ``turn`` None.
        ``latest``: each result as the run's last history still holding the call's reply has
        it — what the model went on with after an inject, edit or drop in step mode, or a
        result that came only after the history changed (``diff``).
        """
        out: list[Call] = []
        for h_no, h in enumerate(self.histories):
            for card in h.cards:
                if inherited and h_no == 0 and card is h.cards[0]:
                    for i in card.sent:
                        for pos, call in enumerate(_calls_of(h.messages[i])):
                            out.append(_call(card, h, h_no, pos, call, i))
                if card.reply is None:
                    continue
                reply = h.messages[card.reply] if card.reply < len(h.messages) else None
                for pos, call in enumerate(_calls_of(reply)):
                    out.append(_call(card, h, h_no, pos, call, card.reply))
        if latest:
            for c in out:
                self._latest_result(c)
        return out

    def _latest_result(self, c: Call) -> None:
        i = c.message_index
        own = self.histories[c.history]
        if i is None or i >= len(own.messages):
            return
        reply = own.messages[i]
        for h in reversed(self.histories[c.history + 1:]):
            if h.pairing is None or i >= len(h.messages) or h.messages[i] != reply:
                continue
            where = h.pairing.answer_of.get((i, c.position))
            answer = where[0] if where is not None else None
            content = h.messages[answer].get("content") if answer is not None else None
            result = None if answer is None else content if isinstance(content, str) else \
                json.dumps(content, ensure_ascii=False)
            if result != c.result:
                from agentdbg.messages import is_error_result

                c.result, c.result_index = result, None    # (its index is in another history)
                c.ok = None if result is None else not is_error_result(result)
                c.error_type = None
            return

    def findings(self) -> list[Any]:
        """Every finding of every history, and of every blocked request, once."""
        seen: set = set()
        out = []
        for f in [f for h in self.histories for f in h.findings] + \
                 [f for c in self.blocked for f in c.findings]:
            key = (f.rule, f.index, f.tool_call_id, f.message)
            if key not in seen:
                seen.add(key)
                out.append(f)
        return out


def _calls_of(message: Any) -> list:
    if isinstance(message, dict) and message.get("role") == "assistant" and \
            isinstance(message.get("tool_calls"), list):
        return message["tool_calls"]
    return []


def _call(card: Card, h: History, h_no: int, pos: int, call: Any, index: int) -> Call:
    fn = call.get("function") if isinstance(call, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    cid = call.get("id") if isinstance(call, dict) and isinstance(call.get("id"), str) else None
    name = fn.get("name") if isinstance(fn.get("name"), str) else None
    turn = card.turn if index == card.reply else None
    c = Call(turn, pos, cid, name, fn.get("arguments"), message_index=index, history=h_no)
    where = h.pairing.answer_of.get((index, pos)) if h.pairing is not None else None
    answer = where[0] if where is not None else None
    if answer is not None:
        c.result_index = answer
        content = h.messages[answer].get("content")
        c.result = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    event = card.tools.get(cid) if cid else None
    if event is not None:
        if c.result is None and event.content is not None:
            c.result = event.content
        c.ok = event.ok
        c.error_type = event.error_type
        c.duration_ms = _num(event.duration_ms)
        c.injected = bool(event.injected)
    elif c.result is not None:
        from agentdbg.messages import is_error_result

        c.ok = not is_error_result(c.result)
    return c


# -- building ------------------------------------------------------------------------------

#: how many of the user's actions a report keeps and draws; the rest are counted
ACTIONS_SHOWN = 1000


class RunBuilder:
    """Consumes transcript events in order; ``finish()`` returns the Run."""

    def __init__(self, path: Path, header: Header, *, profile: str = "openai", findings: bool = True):
        self.path, self.header, self.profile, self.with_findings = path, header, profile, findings
        self.msgs: list = []          # the current history's messages (last request + reply ...)
        self.last_len = 0             # how many of them the last request carried
        self.history: History | None = None
        self.histories: list[History] = []
        self.card: Card | None = None
        self.turns: list[TurnInfo] = []
        self.stop: Stop | None = None
        self.actions: list[Action] = []
        self.actions_not_shown = 0
        self.blocked: list[Card] = []
        self.marks: dict[int, set] = {}
        self.last_usage: dict = {}
        self.recorded_keys: set = set()
        #: the last request ended on an assistant message with calls, and no reply came after
        #: it: those calls were sent unanswered (an error), not left pending by a stop
        self.sent_unanswered = False
        api = header.api
        #: a Responses / Anthropic run is judged request by request in its own format (as
        #: ``check`` judges it); a Chat Completions run on each history's last state
        self.native: str | None = api if codec.known(api) and not codec.get(api).chat_native \
            else None
        self.native_prior: list = []
        self.native_keys: set = set()
        #: turn numbers as the history counts them: the replies a request carries, plus one
        #: (an app's own recorded history is not the session's: its requests are its turns)
        self.by_time = bool(header.app_driven)
        self.last_in_history: int | None = None   # the last request's turn, as numbered
        self.first_replies = sum(_is_reply(m) for m in header.initial_messages or [])
        self.replies_upto = [0]    # replies among the last request's first i messages
        self.since_request: list[Action | int] = []   # then: results appended, user actions

    def feed(self, event: AnyEvent) -> None:
        if isinstance(event, Request):
            self._on_request(event)
        elif isinstance(event, Response):
            self._on_response(event)
        elif isinstance(event, ModelError):
            self._on_model_error(event)
        elif isinstance(event, Blocked):
            self._on_blocked(event)
        elif isinstance(event, Tool):
            self._on_tool(event)
        elif isinstance(event, Action):
            self._on_action(event)
        elif isinstance(event, Stop):
            self._on_stop(event)
        elif isinstance(event, AgentNamed):
            self.header = msgspec.structs.replace(self.header, agent=event.name)

    # -- events ----------------------------------------------------------------------------
    def _on_request(self, e: Request) -> None:
        prefix = min(e.prefix, self.last_len)
        new = list(e.messages or [])
        turn = e.turn if e.turn is not None else len(self.turns) + 1
        start = self._common_from(prefix, new)
        extends = self.history is not None and start >= len(self.msgs)
        if extends:
            # tool results right after the last reply belong to that turn's card
            i = len(self.msgs)
            while i < len(new) and _is_tool(new[i]) and self.card is not None:
                self.card.results.append(i)
                i += 1
            self.msgs = new
            sent = list(range(i, len(new)))
            card = Card("turn", turn, sent=sent)
        else:
            self._new_history(new, start)
            card = Card("turn", turn, sent=list(range(start, len(new))),
                        rewritten_from=start if self.histories[:-1] else None)
        card.request = {"messages": len(new), "params": e.param_map}
        card.in_history = self.last_in_history = self._in_history(new, prefix, turn)
        self.last_len = len(new)
        self._add(card)
        for d in e.findings or []:   # the proxy's checks of this request
            if isinstance(d, dict) and not adapter.is_checker_rule(str(d.get("rule"))):
                f = adapter.finding_from_dict(d)
                card.findings.append(f)
                key = (len(self.histories), f.rule, f.index, f.tool_call_id)
                if key not in self.recorded_keys:
                    self.recorded_keys.add(key)
                    self.history.recorded.append(f)  # type: ignore[union-attr]
        self.turns.append(TurnInfo(turn, len(new)))
        self.sent_unanswered = bool(new) and bool(_calls_of(new[-1]))
        if self.native is not None and self.with_findings:
            self._judge_native(e, new)

    def _judge_native(self, e: Request, messages: list) -> None:
        """This request's findings in its own format, each once (at its first request)."""
        assert self.native is not None
        params = {**(self.header.api_params or {}), **e.param_map}
        sent = params.get("tools", self.header.tools)
        tools = sent if isinstance(sent, list) and sent else None
        found, native = adapter.check_native(self.native, e.body, messages, tools, params, self.profile,
                                             list(self.native_prior))
        inputs = native.get("input") if isinstance(native, dict) else None
        if isinstance(inputs, list):
            self.native_prior.extend(x for x in inputs if isinstance(x, dict))
        assert self.history is not None
        for f in found:
            key = (len(self.histories), f.rule, f.index, f.tool_call_id)
            if key not in self.native_keys:
                self.native_keys.add(key)
                self.history.recorded.append(f)

    def _on_response(self, e: Response) -> None:
        message = e.message
        output = e.output
        if self.native is not None and isinstance(output, list):
            self.native_prior.extend(x for x in output if isinstance(x, dict))
        info = self._turn_info()
        usage, latency = e.usage or {}, _num(e.latency_ms)
        finish, note = e.finish_reason, e.note
        response = {"usage": usage, "finish_reason": finish, "latency_ms": latency, "note": note}
        if info is not None:
            info.usage, info.latency_ms, info.finish_reason, info.note = usage, latency, finish, note
            info.reply = message
            if info.usage:
                self.last_usage = info.usage
        if self.card is None or self.card.reply is not None:   # a response with no request
            self._add(Card("turn", e.turn))
        assert self.card is not None
        self.card.reply = len(self.msgs)
        self.card.response = response
        self.msgs.append(message)
        self.sent_unanswered = False

    def _on_model_error(self, e: ModelError) -> None:
        info = self._turn_info()
        message, latency = e.message or "model error", _num(e.latency_ms)
        error = {"message": message, "status": e.status, "latency_ms": latency}
        if info is not None:
            info.error, info.latency_ms = message, latency
        if self.card is not None:
            self.card.error = error

    def _on_blocked(self, e: Blocked) -> None:
        card = Card("blocked", e.turn)
        card.in_history = self._numbered(self._replies_now(), e.turn)
        card.findings = [adapter.finding_from_dict(d) for d in e.findings or []]
        self.blocked.append(card)
        self._add(card)

    def _on_tool(self, e: Tool) -> None:
        cid = e.tool_call_id
        target = self._card_with_call(cid) or self.card
        if target is not None and cid is not None:
            target.tools[cid] = e
        if e.injected and e.index is not None:
            self.marks.setdefault(e.index, set()).add("injected")
            if self.history is not None:
                self.history.marks.setdefault(e.index, set()).add("injected")
        if e.index is not None:
            self.since_request.append(e.index)
        info = self._turn_info()
        took = _num(e.duration_ms)
        if info is not None and took is not None:
            info.tool_ms += took

    def _on_action(self, e: Action) -> None:
        self.since_request.append(e)
        shown = len(self.actions) < ACTIONS_SHOWN
        if shown:
            self.actions.append(e)
        else:
            self.actions_not_shown += 1
        kind, index = e.action, e.index
        if index is not None:
            if kind in ("edit", "inject") and not e.pending:
                mark = "edited" if kind == "edit" else "injected"
                self.marks.setdefault(index, set()).add(mark)
                if self.history is not None and index >= len(self.msgs):
                    # a result not yet shown in this history: it appears with the change
                    self.history.marks.setdefault(index, set()).add(mark)
            elif kind == "drop":
                self.marks = {(k - 1 if k > index else k): v for k, v in self.marks.items() if k != index}
            elif kind in ("rewind", "back"):
                self.marks = {k: v for k, v in self.marks.items() if k <= index}
            elif kind == "retry":
                self.marks = {k: v for k, v in self.marks.items() if k < index}
        if shown:
            self._add(Card("action", action=e))

    def _on_stop(self, e: Stop) -> None:
        self.stop = e
        final = e.messages
        if final is None:
            return
        n = len(self.msgs)
        if self.history is not None and len(final) >= n and self._common_from(0, final) >= n:
            i = n
            while i < len(final) and _is_tool(final[i]) and self.card is not None \
                    and self.card.kind == "turn":
                self.card.results.append(i)
                i += 1
            self.msgs.extend(final[n:])
            if i < len(final):
                self._add(Card("final", sent=list(range(i, len(final)))))
            return
        start = self._common_from(0, final) if self.history is not None else 0
        if self.history is not None and start >= len(final) and len(final) == n:
            return
        self._new_history(list(final), start)
        self._add(Card("final", sent=list(range(start, len(final))),
                       rewritten_from=start if self.histories[:-1] else None))

    # -- turn numbers as the history counts them ---------------------------------------------
    def _in_history(self, new: list, prefix: int, number: int | None) -> int | None:
        """The turn request ``new`` asks for: its first ``prefix`` messages are the last
        request's (their replies counted then), the rest are counted now."""
        upto = self.replies_upto
        del upto[prefix + 1:]
        for m in new[prefix:]:
            upto.append(upto[-1] + _is_reply(m))
        self.since_request = []
        return self._numbered(upto[-1], number)

    def _numbered(self, replies: int, number: int | None) -> int | None:
        return number if self.by_time else max(0, replies - self.first_replies) + 1

    def _replies_now(self) -> int:
        """The replies the history holds now (a blocked request carries no messages): the
        last request's, its reply and results, then the user's actions since, re-applied."""
        roles = [_is_reply(m) for m in (self.msgs if self.history is not None
                                        else self.header.initial_messages or [])]
        for change in self.since_request:
            if isinstance(change, int):
                roles.extend([False] * (change + 1 - len(roles)))
                continue
            i = change.index if change.index is not None else -1
            if change.action == "drop" and 0 <= i < len(roles):
                del roles[i]
            elif change.action in ("rewind", "back") and i >= 0:
                del roles[i + 1:]
            elif change.action == "retry" and i >= 0:
                del roles[i:]
            elif change.action == "edit" and 0 <= i < len(roles) and change.after is not None:
                roles[i] = _is_reply(change.after)
        return sum(roles)

    # -- helpers ---------------------------------------------------------------------------
    def _common_from(self, known: int, new: list) -> int:
        """The first index where ``new`` departs from the current history (``known`` agree),
        compared as the API reads them: an app that sends the model's reply back without its
        ``"content": null`` (or re-serialises its arguments) did not change its history."""
        i = known
        limit = min(len(self.msgs), len(new))
        while i < limit and (self.msgs[i] == new[i] or
                             adapter.first_difference(self.msgs[i], new[i]) is None):
            i += 1
        return i

    def _new_history(self, messages: list, start: int) -> None:
        self._close()
        self.card = None
        self.msgs = messages
        self.history = History(messages, start,
                               marks={k: set(v) for k, v in self.marks.items() if k < len(messages)})
        self.histories.append(self.history)

    def _add(self, card: Card) -> None:
        if self.history is None:
            self._new_history(self.msgs, 0)
        assert self.history is not None
        self.history.cards.append(card)
        if card.kind == "turn":
            self.card = card

    def _turn_info(self) -> TurnInfo | None:
        return self.turns[-1] if self.turns else None

    def _card_with_call(self, cid: Any) -> Card | None:
        card = self.card
        if card is None or card.reply is None or card.reply >= len(self.msgs):
            return None
        ids = [c.get("id") for c in _calls_of(self.msgs[card.reply]) if isinstance(c, dict)]
        return card if cid in ids else None

    def _close(self) -> None:
        h = self.history
        if h is None:
            return
        self._recorded_results()
        h.messages = self.msgs
        h.pairing = adapter.pair(h.messages)
        last = h.messages[-1] if h.messages else None
        h.pending_last = bool(_calls_of(last))
        if self.with_findings and self.native is not None:
            h.findings = list(h.recorded)   # judged as each request was sent
        elif self.with_findings:
            found = adapter.check(h.messages, self.header.tools or None, self.profile,
                                  in_progress=h.pending_last and not self.sent_unanswered)
            h.findings = found + h.recorded

    def _recorded_results(self) -> None:
        """Results the session appended that no later request or stop event carried (the
        history was rewritten, or the transcript ends): rebuilt from their tool events."""
        card = self.card
        if card is None or card.reply is None or card.reply != len(self.msgs) - 1 or \
                self.history is None or card not in self.history.cards:
            return
        from agentdbg.messages import tool_message

        for call in _calls_of(self.msgs[card.reply]):
            cid = call.get("id") if isinstance(call, dict) else None
            event = card.tools.get(cid) if isinstance(cid, str) else None
            if event is not None and event.content is not None:
                card.results.append(len(self.msgs))
                self.msgs.append(tool_message(str(event.tool_call_id), event.content))

    def finish(self, warnings: list[str]) -> Run:
        if self.history is None:
            self._new_history(self.msgs, 0)
        self._close()
        h = self.histories[-1]
        last = h.messages[-1] if h.messages else None
        if self.with_findings and self.stop is not None and self.stop.reason == "completed" and \
                isinstance(last, dict) and last.get("role") == "assistant" and \
                not last.get("tool_calls") and adapter.no_text(last):
            h.findings.append(adapter.empty_answer_finding(len(h.messages) - 1, last))
        return Run(self.path, self.header, self.histories, self.turns, self.stop, self.actions,
                   self.blocked, warnings, self.msgs[:self.last_len], self.last_usage,
                   self.actions_not_shown, self._turns_in(h.messages))

    def _turns_in(self, messages: list) -> int:
        """The turns of the last history as step mode numbered them: the replies it holds, or
        the last request's turn when that got none (a model error after a drop: turn 1)."""
        if self.by_time:
            return len(self.turns)
        held = max(0, sum(_is_reply(m) for m in messages) - self.first_replies)
        if any(isinstance(change, Action) for change in self.since_request):
            return held       # a rewind or drop since the last request: its turn is gone
        return max(held, self.last_in_history or 0)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _num(value: Any) -> float | None:
    """A recorded duration; None for anything else (``NaN``, ``Infinity``, ``1e400`` …)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if number and 0 <= value < 1e12 else None


def _is_reply(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") == "assistant"


def _is_tool(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") == "tool"


def read_run(source: str | os.PathLike[str] | Run | Transcript, *, profile: str = "openai",
             findings: bool = True) -> Run:
    """A transcript path (streamed) or an already loaded ``Transcript`` as a ``Run``."""
    from agentdbg.transcript import read_transcript

    if isinstance(source, Run):
        return source
    if isinstance(source, Transcript):
        return _from_events(Path(source.path), source.header, source.events, list(source.warnings),
                            profile, findings)
    warnings: list[str] = []
    header, stream = read_transcript(source, warnings)
    return _from_events(Path(source), header, (event for _, event in stream), warnings, profile,
                        findings)


def _from_events(path: Path, header: Header, events: Iterable[AnyEvent], warnings: list[str],
                 profile: str, findings: bool) -> Run:
    builder = RunBuilder(path, header, profile=profile, findings=findings)
    for event in events:
        builder.feed(event)
    return builder.finish(warnings)
