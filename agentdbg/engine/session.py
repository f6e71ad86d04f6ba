"""The loop as a state machine. No printing, no prompting: drivers observe events.

``Session.step()`` advances exactly one phase and returns an event:

* ``Phase.MODEL``: build the request, (pre-check it), ask the provider, append the
  assistant message. No ``tool_calls`` -> stop ``completed``.
* ``Phase.TOOLS``: resolve approvals, execute the pending calls, append one
  ``role: "tool"`` message per call carrying its ``tool_call_id``.

Limits stop the run with their own reason; a run stopped by a limit is never
presented as an answer. An approval covers exactly one pending call (its turn, id,
name and arguments) and is consumed when that call runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentdbg.engine.actions import UserActions
from agentdbg.engine.executor import ToolExecutor, ToolOutcome
from agentdbg.engine.faults import CallOverride
from agentdbg.engine.phases import Phase, StopReason
from agentdbg.errors import ProviderError
from agentdbg.i18n import N_, Msg
from agentdbg.messages import call_fingerprint, call_name, token_count, tool_calls_of, tool_message
from agentdbg.providers.base import ModelRequest, Provider
from agentdbg.toolspec import ToolSet


@dataclass
class RunConfig:
    model: str = "offline"
    max_turns: int = 8
    max_tool_calls: int = 32
    repeat_limit: int = 3
    timeout: float | None = None          # whole-run wall clock, seconds
    approve: str = "none"                 # all | none | ask
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    send_anyway: bool = False
    stop_on_invalid: bool = True          # False (step mode): a blocked request just pauses


@dataclass
class TurnStats:
    """One model request: what it carried and what it cost."""

    turn: int
    request_messages: int                 # how many messages the request carried
    latency_ms: float = 0.0
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None
    note: str | None = None
    tool_ms: float = 0.0
    message_index: int | None = None      # where the reply was appended
    request: int = 0                      # which request of the run, in time (transcripts)
    calls: int = 0                        # the tool calls the reply asked for

    def to_dict(self) -> dict:
        return dict(self.__dict__)


# -- events -------------------------------------------------------------------
@dataclass
class ModelReplied:
    turn: int
    index: int
    message: dict
    stats: TurnStats


@dataclass
class ToolsExecuted:
    turn: int
    outcomes: list[ToolOutcome]
    indices: list[int]


@dataclass
class ApprovalNeeded:
    calls: list[dict]


@dataclass
class RequestBlocked:
    findings: list


@dataclass
class Stopped:
    reason: StopReason
    detail: str


CANCELLED_BY_USER = Msg(N_("cancelled by the user (Ctrl-C)"))

Event = ModelReplied | ToolsExecuted | ApprovalNeeded | RequestBlocked | Stopped
ApprovalKey = tuple[int, str, str, str]


class Session(UserActions):
    def __init__(self, provider: Provider, toolset: ToolSet, config: RunConfig | None = None,
                 messages: list[dict] | None = None, *,
                 precheck: Callable[[ModelRequest], list] | None = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.provider = provider
        self.toolset = toolset
        self.config = config or RunConfig()
        self.messages: list[dict] = list(messages or [])
        self.precheck = precheck
        self.clock = clock
        self.executor = ToolExecutor(toolset, clock=clock)
        self.phase = Phase.MODEL
        self.pending: list[dict] = []
        self.pending_turn = 0                         # the turn whose reply asked for ``pending``
        self.approvals: dict[ApprovalKey, bool] = {}  # one decision per exact pending call
        self.turns: list[TurnStats] = []               # the turns whose reply is in the history
        self.cut_turns: list[TurnStats] = []           # requests whose reply a rewind/drop cut
        self.model_failure: ProviderError | None = None  # why the last request got no reply
        self.outcomes: list[ToolOutcome] = []
        self.outcome_at: dict[int, ToolOutcome] = {}  # tool message index -> its execution
        self.stop_reason: StopReason | None = None
        self.stop_detail = ""                         # in English (what the transcript records)
        self.stop_msg: Msg | str = ""                 # the same, to show in the chosen language
        self._recent_calls: list[tuple[str, str, str]] = []  # (name, arguments, content), repeated in a row
        self._started = clock()
        self.marks: dict[int, set[str]] = {}          # message index -> {"edited", "injected"}
        self.actions: list[dict] = []                 # the user's edits, drops, rewinds ...
        self.injections: dict[str, CallOverride] = {}  # pending call id -> fault
        self.fails: dict[str, tuple[CallOverride, bool]] = {}  # tool name -> (fault, sticky)
        self.force_send = False                       # one request past the pre-send check
        self.failed_forced = False                    # the request that got no reply was sent so
        self.observers: list[Callable[[str, dict], None]] = []  # e.g. the transcript writer
        #: replay: where a call's recorded result comes from (None: tools run for real)
        self.result_source: Callable[[dict], CallOverride | None] | None = None

    @classmethod
    def for_question(cls, provider: Provider, toolset: ToolSet, question: str,
                     config: RunConfig | None = None, system: str | None = None,
                     **kw: Any) -> Session:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": question})
        return cls(provider, toolset, config, messages, **kw)

    # -- state ---------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    @property
    def usage(self) -> dict:
        total = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        for t in self.turns:
            for key in total:
                value = t.usage.get(key)
                total[key] += token_count(value)
        return total

    @property
    def requests_made(self) -> int:
        """Model requests sent so far, a rewind's included (transcripts number them in time;
        the screen numbers turns as the history has them)."""
        return len(self.turns) + len(self.cut_turns)

    @property
    def tool_calls_made(self) -> int:
        """Calls agentdbg executed (or answered with a fault): what --max-tool-calls limits."""
        return len(self.outcomes)

    @property
    def tool_calls_asked(self) -> int:
        """Every tool call the model's replies asked for, as the report and diff count them
        (also the calls of a recorded app, which agentdbg did not run, and those a limit cut,
        and those of replies a rewind, retry or drop has cut from the history since)."""
        return sum(t.calls for t in [*self.turns, *self.cut_turns])

    def elapsed(self) -> float:
        return self.clock() - self._started

    def answer(self) -> str | None:
        """The final answer, only when the run completed."""
        if self.stop_reason is StopReason.COMPLETED and self.messages:
            content = self.messages[-1].get("content")
            return content if isinstance(content, str) else None
        return None

    def request(self) -> ModelRequest:
        c = self.config
        remaining = None if c.timeout is None else max(0.1, c.timeout - self.elapsed())
        return ModelRequest(messages=self.messages, tools=self.toolset.openai_tools(),
                            tool_choice=c.tool_choice, parallel_tool_calls=c.parallel_tool_calls,
                            temperature=c.temperature, model=c.model, timeout=remaining,
                            turn=len(self.turns) + 1,
                            side_effect_tools=frozenset(t.name for t in self.toolset.tools if t.side_effects))

    def _emit(self, event_type: str, /, **data: Any) -> None:
        for observe in self.observers:
            observe(event_type, data)

    # -- driving -------------------------------------------------------------
    def step(self) -> Event:
        if self.stop_reason is not None:
            return Stopped(self.stop_reason, self.stop_detail)
        if self.config.timeout is not None and self.elapsed() > self.config.timeout:
            return self._stop(StopReason.TIMEOUT, Msg(N_(
                "the run exceeded its wall-clock limit of {limit}s"), {"limit": f"{self.config.timeout:g}"}))
        return self._ask_model() if self.phase is Phase.MODEL else self._run_tools()

    def run(self) -> Iterator[Event]:
        """Step until the run stops, yielding every event."""
        while not self.done:
            event = self.step()
            yield event
            if isinstance(event, ApprovalNeeded):
                raise RuntimeError("approval needed: use approve='all'/'none' or drive step()")

    def go_live(self, provider: Provider, toolset: ToolSet | None = None) -> None:
        """Leave a replay: answer from ``provider`` and run tools for real from here on."""
        self.provider = provider
        self.result_source = None
        if toolset is not None:
            self.toolset = toolset
            self.executor = ToolExecutor(toolset, clock=self.clock, secrets=self.executor.secrets)

    def cancel(self, detail: str | Msg | None = None) -> Stopped:
        return self._stop(StopReason.CANCELLED, detail or CANCELLED_BY_USER)

    # -- approvals -----------------------------------------------------------
    def _approval_key(self, call: dict) -> ApprovalKey:
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        args = fn.get("arguments") if isinstance(fn, dict) else None
        return (self.pending_turn, str(call.get("id")), call_name(call) or "",
                call_fingerprint(call_name(call) or "", args if isinstance(args, str) else repr(args)))

    def needs_approval(self) -> list[dict]:
        """Pending calls of tools with ``approval: always`` that have no decision yet."""
        out = []
        for call in self.pending:
            spec = self.toolset.get(call_name(call) or "")
            if spec and spec.approval == "always" and self._approval_key(call) not in self.approvals:
                out.append(call)
        return out

    def decide(self, call: dict, approved: bool) -> None:
        """Approve or deny exactly this pending call (its turn, id, name and arguments)."""
        if not any(c is call for c in self.pending):
            raise ValueError(f"call {call.get('id')!r} is not pending")
        self.approvals[self._approval_key(call)] = approved

    def _consume_approval(self, call: dict) -> bool:
        return self.approvals.pop(self._approval_key(call), False)

    def _set_pending(self, calls: list[dict], turn: int) -> None:
        self.pending, self.pending_turn = list(calls), turn
        self.approvals.clear()
        self.phase = Phase.TOOLS if calls else Phase.MODEL

    # -- phases --------------------------------------------------------------
    def _ask_model(self) -> Event:
        if len(self.turns) >= self.config.max_turns:
            return self._stop(StopReason.MAX_TURNS, Msg(N_(
                "the model still wanted tools after {n} turns (--max-turns)"), {"n": self.config.max_turns}))
        request = self.request()
        forced, self.force_send = self.force_send, False
        if self.precheck is not None and not forced:
            findings = self.precheck(request)
            if any(f.severity == "error" for f in findings) and not self.config.send_anyway:
                self._emit("blocked", turn=self.requests_made + 1,
                           findings=[f.to_dict() for f in findings])
                if self.config.stop_on_invalid:
                    self._stop(StopReason.INVALID_REQUEST, Msg(N_(
                        "the request breaks the protocol; not sent (use --send-anyway to see what "
                        "the API answers)")))
                return RequestBlocked(findings)
        stats = TurnStats(turn=len(self.turns) + 1, request_messages=len(self.messages),
                          request=self.requests_made + 1)
        self._emit("request", turn=stats.request, messages=self.messages,
                   params={k: v for k, v in request.body().items() if k != "messages"})
        start = self.clock()
        self.model_failure = None
        try:
            reply = self.provider.complete(request)
        except ProviderError as exc:
            stats.latency_ms = round((self.clock() - start) * 1000, 3)
            self.turns.append(stats)
            self.model_failure, self.failed_forced = exc, forced
            self._emit("model_error", turn=stats.request, message=exc.message,
                       status=exc.status, latency_ms=stats.latency_ms)
            if self.config.timeout is not None and self.elapsed() >= self.config.timeout:
                return self._stop(StopReason.TIMEOUT, Msg(N_(
                    "the run exceeded its wall-clock limit of {limit}s during a model request "
                    "({error})"), {"limit": f"{self.config.timeout:g}", "error": exc.message}))
            return self._stop(StopReason.MODEL_ERROR, exc.shown if isinstance(exc.shown, Msg)
                              else exc.message)
        stats.latency_ms = round((self.clock() - start) * 1000, 3) if reply.latency_ms is None \
            else reply.latency_ms
        stats.usage, stats.finish_reason, stats.note = reply.usage, reply.finish_reason, reply.note
        self.turns.append(stats)
        self.messages.append(reply.message)
        stats.message_index = len(self.messages) - 1
        self._emit("response", turn=stats.request, message=reply.message, usage=reply.usage,
                   finish_reason=reply.finish_reason, latency_ms=stats.latency_ms, note=reply.note)
        event = ModelReplied(stats.turn, stats.message_index, reply.message, stats)
        calls = tool_calls_of(reply.message)
        stats.calls = len(calls)
        if calls:
            self._set_pending(calls, stats.turn)
        else:
            self._stop(StopReason.COMPLETED, Msg(N_("the model answered without tool calls")))
        return event

    def _run_tools(self) -> Event:
        limit = self.config.max_tool_calls
        if self.tool_calls_made + len(self.pending) > limit:
            return self._stop(StopReason.MAX_TOOL_CALLS, Msg(N_(
                "executing {n} more call(s) would exceed --max-tool-calls {limit}"),
                {"n": len(self.pending), "limit": limit}))
        undecided = self.needs_approval()
        if undecided and self.config.approve == "ask":
            return ApprovalNeeded(undecided)
        for call in undecided:
            self.decide(call, self.config.approve == "all")
        start = self.clock()
        turn = self.turns[-1].request if self.turns else 0  # 0: calls loaded with a starting state
        outcomes = self.executor.run(self.pending, approved=self._consume_approval,
                                     override=self._override_for)
        if self.turns:  # from the first start to the last end (recorded times in a replay)
            span = (max(o.ended for o in outcomes) - min(o.started for o in outcomes)) if outcomes \
                else self.clock() - start
            self.turns[-1].tool_ms = round(max(0.0, span) * 1000, 3)
        indices = []
        for call, outcome in zip(self.pending, outcomes):
            self.messages.append(tool_message(str(call.get("id")), outcome.content))
            indices.append(len(self.messages) - 1)
            self.outcome_at[indices[-1]] = outcome
            if outcome.injected:
                self.marks.setdefault(indices[-1], set()).add("injected")
            self._emit("tool", turn=turn, index=indices[-1], **outcome.to_dict())
        self.outcomes.extend(outcomes)
        self._set_pending([], 0)
        event = ToolsExecuted(turn, outcomes, indices)
        self._check_repeats(outcomes)
        return event

    def _check_repeats(self, outcomes: list[ToolOutcome]) -> None:
        n = self.config.repeat_limit
        run = self._recent_calls   # the last calls, as long as each is the one before it again
        for o in outcomes:
            call = (o.name, o.arguments or "", o.content)
            if run and not _same_call(run[-1], call):
                run.clear()
            run.append(call)
        if n > 0 and len(run) > n:   # the last n are the same call: a set of them each turn
            del run[:-n]             # was quadratic (the proxy and imports allow 100,000)
        if n > 0 and len(run) == n:
            o = outcomes[-1]
            self._stop(StopReason.REPEATED_CALL, Msg(N_(
                "{name} was called {n} times in a row with the same arguments {arguments} and got "
                "the same result"), {"name": o.name, "n": n, "arguments": o.arguments}))

    def stop(self, reason: StopReason, detail: str | Msg) -> Stopped:
        """End the run with ``reason`` (drivers use it, e.g. replay ending as recorded)."""
        return self._stop(reason, detail)

    def _stop(self, reason: StopReason, detail: str | Msg) -> Stopped:
        if self.stop_reason is None:
            self.stop_reason, self.stop_detail, self.stop_msg = reason, str(detail), detail
            self.phase = Phase.DONE
            self._emit("stop", reason=reason.value, detail=self.stop_detail, messages=self.messages,
                       usage=self.usage)
        return Stopped(reason if self.stop_reason is None else self.stop_reason, self.stop_detail)


def _same_call(a: tuple[str, str, str], b: tuple[str, str, str]) -> bool:
    """The same call again (name, arguments, result): the same result and the same arguments
    once canonical (``call_fingerprint``), parsed only when the texts differ."""
    return a[2] == b[2] and (a[:2] == b[:2] or call_fingerprint(*a[:2]) == call_fingerprint(*b[:2]))
