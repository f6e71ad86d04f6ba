"""The loop as a state machine. No printing, no prompting: drivers observe events.

``Session.step()`` advances exactly one phase and returns an event:

* phase ``model``: build the request, (pre-check it), ask the provider, append
  the assistant message. No ``tool_calls`` -> stop ``completed``.
* phase ``tools``: resolve approvals, execute the pending calls, append one
  ``role: "tool"`` message per call carrying its ``tool_call_id``.

Limits stop the run with their own reason; a run stopped by a limit is never
presented as an answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from agentdbg.engine.executor import ToolExecutor, ToolOutcome
from agentdbg.engine.history import UserActions
from agentdbg.errors import ExitStatus, ProviderError
from agentdbg.messages import call_fingerprint, call_name, tool_calls_of, tool_message
from agentdbg.providers.base import ModelRequest, Provider
from agentdbg.toolspec import ToolSet


class StopReason(str, Enum):
    COMPLETED = "completed"
    MAX_TURNS = "max_turns"
    MAX_TOOL_CALLS = "max_tool_calls"
    REPEATED_CALL = "repeated_call"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    MODEL_ERROR = "model_error"
    INVALID_REQUEST = "invalid_request"

    @property
    def exit_status(self) -> ExitStatus:
        return ExitStatus.OK if self is StopReason.COMPLETED else ExitStatus[self.name]


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
class TurnRecord:
    turn: int
    request_messages: int                 # how many messages the request carried
    latency_ms: float = 0.0
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None
    note: str | None = None
    tool_ms: float = 0.0
    message_index: int | None = None      # where the reply was appended

    def to_dict(self) -> dict:
        return dict(self.__dict__)


# -- events -------------------------------------------------------------------
@dataclass
class ModelReplied:
    turn: int
    index: int
    message: dict
    record: TurnRecord


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


Event = ModelReplied | ToolsExecuted | ApprovalNeeded | RequestBlocked | Stopped


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
        self.phase = "model"
        self.pending: list[dict] = []
        self.decisions: dict[str, bool] = {}
        self.turns: list[TurnRecord] = []
        self.outcomes: list[ToolOutcome] = []
        self.outcome_at: dict[int, ToolOutcome] = {}  # tool message index -> its execution
        self.stop_reason: StopReason | None = None
        self.stop_detail = ""
        self._history: list[tuple[str, str]] = []  # (fingerprint, content) per executed call
        self._started = clock()
        self.marks: dict[int, set[str]] = {}          # message index -> {"edited", "injected"}
        self.actions: list[dict] = []                 # the user's edits, drops, rewinds ...
        self.injections: dict[str, Any] = {}          # pending call id -> Fault
        self.fails: dict[str, tuple[Any, bool]] = {}  # tool name -> (Fault, sticky)
        self.force_send = False                       # one request past the pre-send check
        self.observers: list[Callable[[str, dict], None]] = []  # e.g. the transcript writer
        self.recorded: Callable[[dict], Any] | None = None  # replay: a call's recorded result

    @classmethod
    def for_question(cls, provider: Provider, toolset: ToolSet, question: str,
                     config: RunConfig | None = None, system: str | None = None, **kw) -> Session:
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
                total[key] += int(t.usage.get(key) or 0)
        return total

    @property
    def tool_calls_made(self) -> int:
        return len(self.outcomes)

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
                            side_effect_tools=frozenset(t.name for t in self.toolset.tools if t.side_effects))

    def _emit(self, event_type: str, /, **data) -> None:
        for observe in self.observers:
            observe(event_type, data)

    # -- driving -------------------------------------------------------------
    def step(self) -> Event:
        if self.done:
            return Stopped(self.stop_reason, self.stop_detail)
        if self.config.timeout is not None and self.elapsed() > self.config.timeout:
            return self._stop(StopReason.TIMEOUT,
                              f"the run exceeded its wall-clock limit of {self.config.timeout:g}s")
        return self._ask_model() if self.phase == "model" else self._run_tools()

    def run(self):
        """Step until the run stops, yielding every event."""
        while not self.done:
            event = self.step()
            yield event
            if isinstance(event, ApprovalNeeded):
                raise RuntimeError("approval needed: use approve='all'/'none' or drive step()")

    def decide(self, call_id: str, approved: bool) -> None:
        self.decisions[call_id] = approved

    def cancel(self, detail: str = "cancelled by the user (Ctrl-C)") -> Stopped:
        return self._stop(StopReason.CANCELLED, detail)

    # -- phases --------------------------------------------------------------
    def _ask_model(self) -> Event:
        if len(self.turns) >= self.config.max_turns:
            return self._stop(StopReason.MAX_TURNS, f"the model still wanted tools after "
                              f"{self.config.max_turns} turns (--max-turns)")
        request = self.request()
        forced, self.force_send = self.force_send, False
        if self.precheck is not None and not forced:
            findings = self.precheck(request)
            if any(f.severity == "error" for f in findings) and not self.config.send_anyway:
                self._emit("blocked", turn=len(self.turns) + 1,
                           findings=[f.to_dict() for f in findings])
                if self.config.stop_on_invalid:
                    self._stop(StopReason.INVALID_REQUEST, "the request breaks the protocol; "
                               "not sent (use --send-anyway to see what the API answers)")
                return RequestBlocked(findings)
        record = TurnRecord(turn=len(self.turns) + 1, request_messages=len(self.messages))
        self._emit("request", turn=record.turn, messages=self.messages,
                   params={k: v for k, v in request.body().items() if k != "messages"})
        start = self.clock()
        try:
            reply = self.provider.complete(request)
        except ProviderError as exc:
            record.latency_ms = round((self.clock() - start) * 1000, 3)
            self.turns.append(record)
            self._emit("model_error", turn=record.turn, message=exc.message,
                       status=exc.status, latency_ms=record.latency_ms)
            if self.config.timeout is not None and self.elapsed() >= self.config.timeout:
                return self._stop(StopReason.TIMEOUT, f"the run exceeded its wall-clock limit of "
                                  f"{self.config.timeout:g}s during a model request ({exc.message})")
            return self._stop(StopReason.MODEL_ERROR, exc.message)
        record.latency_ms = round((self.clock() - start) * 1000, 3)
        record.usage, record.finish_reason, record.note = reply.usage, reply.finish_reason, reply.note
        self.turns.append(record)
        self.messages.append(reply.message)
        record.message_index = len(self.messages) - 1
        self._emit("response", turn=record.turn, message=reply.message, usage=reply.usage,
                   finish_reason=reply.finish_reason, latency_ms=record.latency_ms, note=reply.note)
        event = ModelReplied(record.turn, record.message_index, reply.message, record)
        calls = tool_calls_of(reply.message)
        if calls:
            self.pending, self.phase = list(calls), "tools"
        else:
            self._stop(StopReason.COMPLETED, "the model answered without tool calls")
        return event

    def needs_approval(self) -> list[dict]:
        out = []
        for call in self.pending:
            spec = self.toolset.get(call_name(call) or "")
            if spec and spec.approval == "always" and str(call.get("id")) not in self.decisions:
                out.append(call)
        return out

    def _run_tools(self) -> Event:
        limit = self.config.max_tool_calls
        if self.tool_calls_made + len(self.pending) > limit:
            return self._stop(StopReason.MAX_TOOL_CALLS, f"executing {len(self.pending)} more "
                              f"call(s) would exceed --max-tool-calls {limit}")
        undecided = self.needs_approval()
        if undecided and self.config.approve == "ask":
            return ApprovalNeeded(undecided)
        for call in undecided:
            self.decide(str(call.get("id")), self.config.approve == "all")
        start = self.clock()
        turn = self.turns[-1].turn if self.turns else 0  # 0: calls loaded with a starting state
        outcomes = self.executor.run(self.pending,
                                     approved=lambda c: self.decisions.get(str(c.get("id")), False),
                                     override=self._fault_for)
        if self.turns:
            self.turns[-1].tool_ms = round((self.clock() - start) * 1000, 3)
        indices = []
        for call, outcome in zip(self.pending, outcomes):
            self.messages.append(tool_message(str(call.get("id")), outcome.content))
            indices.append(len(self.messages) - 1)
            self.outcome_at[indices[-1]] = outcome
            if outcome.injected:
                self.marks.setdefault(indices[-1], set()).add("injected")
            self._emit("tool", turn=turn, index=indices[-1], **outcome.to_dict())
        self.outcomes.extend(outcomes)
        self.pending, self.phase = [], "model"
        event = ToolsExecuted(turn, outcomes, indices)
        self._check_repeats(outcomes)
        return event

    def _check_repeats(self, outcomes: list[ToolOutcome]) -> None:
        n = self.config.repeat_limit
        for o in outcomes:
            self._history.append((call_fingerprint(o.name, o.arguments or ""), o.content))
        tail = self._history[-n:]
        if n > 0 and len(tail) == n and len(set(tail)) == 1:
            o = outcomes[-1]
            self._stop(StopReason.REPEATED_CALL, f"{o.name} was called {n} times in a row with "
                       f"the same arguments {o.arguments} and got the same result")

    def stop(self, reason: StopReason, detail: str) -> Stopped:
        """End the run with ``reason`` (drivers use it, e.g. replay ending as recorded)."""
        return self._stop(reason, detail)

    def _stop(self, reason: StopReason, detail: str) -> Stopped:
        if self.stop_reason is None:
            self.stop_reason, self.stop_detail = reason, detail
            self.phase = "done"
            self._emit("stop", reason=reason.value, detail=detail, messages=self.messages,
                       usage=self.usage)
        return Stopped(self.stop_reason, self.stop_detail)
