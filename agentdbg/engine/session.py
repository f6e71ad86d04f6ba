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


class Session:
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
                            temperature=c.temperature, model=c.model, timeout=remaining)

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

    # -- the user's hand on the loop (step mode) ----------------------------------------
    def _fault_for(self, call: dict):
        recorded = self.recorded(call) if self.recorded is not None else None
        if recorded is not None:
            self.injections.pop(str(call.get("id")), None)
            return recorded
        fault = self.injections.pop(str(call.get("id")), None)
        if fault is not None:
            return fault
        name = call_name(call) or ""
        if name in self.fails:
            fault, sticky = self.fails[name]
            if not sticky:
                del self.fails[name]
            return fault
        return None

    def _act(self, action: str, **data) -> None:
        entry = {"action": action, "at_ms": round(self.elapsed() * 1000, 3), **data}
        self.actions.append(entry)
        self._emit("action", **entry)

    def _resume(self) -> None:
        """A change to the history reopens a stopped run."""
        self.stop_reason, self.stop_detail = None, ""
        self._history.clear()
        last = self.messages[-1] if self.messages else None
        calls = tool_calls_of(last) if last is not None else []
        self.pending, self.phase = (list(calls), "tools") if calls else ([], "model")

    def _forget_turns_after(self, index: int) -> None:
        """Turns whose reply was cut stay recorded (they were real requests) but point nowhere."""
        for t in self.turns:
            if t.message_index is not None and t.message_index > index:
                t.message_index = None

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.messages):
            raise IndexError(f"no message {index}; messages are 0..{len(self.messages) - 1}")

    def edit(self, index: int, message: dict) -> None:
        """Replace message ``index``; it is marked as edited in the view and the saved run."""
        self._check_index(index)
        before = self.messages[index]
        self.messages[index] = message
        self.marks.setdefault(index, set()).add("edited")
        self._act("edit", index=index, before=before, after=message)
        if index == len(self.messages) - 1 and self.phase != "done":
            self._resume()

    def drop(self, index: int) -> dict:
        """Remove message ``index`` (e.g. the assistant message, to see the orphan it leaves)."""
        self._check_index(index)
        removed = self.messages.pop(index)
        self.marks = _shift(self.marks, index)
        self.outcome_at = _shift(self.outcome_at, index)
        for t in self.turns:
            if t.message_index is not None and t.message_index >= index:
                t.message_index = None if t.message_index == index else t.message_index - 1
        self._act("drop", index=index, message=removed)
        self._resume()
        return removed

    def rewind(self, index: int) -> int:
        """Keep messages 0..index and continue live from there; returns how many were cut."""
        self._check_index(index)
        cut = len(self.messages) - index - 1
        del self.messages[index + 1:]
        self.marks = {k: v for k, v in self.marks.items() if k <= index}
        self.outcome_at = {k: v for k, v in self.outcome_at.items() if k <= index}
        self._forget_turns_after(index)
        self._act("rewind", index=index, cut=cut)
        self._resume()
        return cut

    def retry(self) -> int:
        """Ask the model again for the last turn: cut back to before the last assistant message."""
        last = max((i for i, m in enumerate(self.messages) if m.get("role") == "assistant"),
                   default=None)
        if last is None:
            raise IndexError("there is no assistant message to retry")
        cut = len(self.messages) - last
        del self.messages[last:]
        self.marks = {k: v for k, v in self.marks.items() if k < last}
        self.outcome_at = {k: v for k, v in self.outcome_at.items() if k < last}
        self._forget_turns_after(last - 1)
        self._act("retry", index=last, cut=cut)
        self._resume()
        return cut

    def inject(self, target: str, fault) -> str:
        """Answer a pending call, or replace a finished result, with ``fault``.

        ``target``: a tool_call_id (or unique prefix), the index of a tool message,
        or the name of a pending tool. Returns what was changed, for the user.
        """
        kind, ref = self._resolve_call(target)
        if kind == "pending":
            self.injections[ref] = fault
            self._act("inject", tool_call_id=ref, fault=fault.describe(), kind=fault.kind,
                      custom=fault.custom, pending=True)
            return f"call {ref} will get the {fault.describe()} fault instead of running"
        message = dict(self.messages[ref])
        name = self._tool_name_of(ref)
        message["content"] = fault.content(name)
        self.messages[ref] = message
        self.marks.setdefault(ref, set()).add("injected")
        self._act("inject", index=ref, tool_call_id=message.get("tool_call_id"),
                  fault=fault.describe(), kind=fault.kind, custom=fault.custom,
                  content=message["content"], pending=False)
        return f"message {ref} now holds the {fault.describe()} fault"

    def fail(self, tool: str, fault, sticky: bool = False) -> None:
        if self.toolset.get(tool) is None:
            raise KeyError(f"no tool {tool!r}; tools: {', '.join(self.toolset.names())}")
        self.fails[tool] = (fault, sticky)
        self._act("fail", tool=tool, fault=fault.describe(), kind=fault.kind, custom=fault.custom,
                  sticky=sticky)

    def send_once(self) -> None:
        """Let the next request past the pre-send check (step mode's 'send')."""
        self.force_send = True
        self._act("send")

    def _tool_name_of(self, index: int) -> str:
        tid = self.messages[index].get("tool_call_id")
        for m in reversed(self.messages[:index]):
            for c in tool_calls_of(m):
                if c.get("id") == tid:
                    return call_name(c) or ""
        return ""

    def _resolve_call(self, target: str) -> tuple[str, Any]:
        if target.isdigit():
            index = int(target)
            self._check_index(index)
            if self.messages[index].get("role") != "tool":
                raise ValueError(f"message {index} is a {self.messages[index].get('role')} "
                                 "message, not a tool result")
            return "finished", index
        pending = {str(c.get("id")): c for c in self.pending}
        by_name = [cid for cid, c in pending.items() if call_name(c) == target]
        if len(by_name) == 1:
            return "pending", by_name[0]
        if len(by_name) > 1:
            raise ValueError(f"{target!r} has {len(by_name)} pending calls; name one by id: "
                             + ", ".join(by_name))
        matches = {cid for cid in pending if cid.startswith(target)}
        finished = {i for i, m in enumerate(self.messages) if m.get("role") == "tool"
                    and str(m.get("tool_call_id", "")).startswith(target)}
        if len(matches) + len(finished) == 1:
            return ("pending", matches.pop()) if matches else ("finished", finished.pop())
        if not matches and not finished:
            raise ValueError(f"no pending call, tool message or call id matches {target!r}")
        raise ValueError(f"{target!r} matches several calls; give more of the id")


def _shift(mapping: dict, removed: int) -> dict:
    """Re-index a message-index mapping after message ``removed`` was deleted."""
    return {(k - 1 if k > removed else k): v for k, v in mapping.items() if k != removed}
