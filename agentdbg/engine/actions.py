"""The user's hand on the loop (step mode, replays): edit, drop, rewind, retry, inject, fail.

A mixin of ``Session``: every change is plain state (messages, marks, pending
injections and fails) plus an ``action`` event for the transcript, and a change to
the history reopens a stopped run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentdbg.engine.faults import CallOverride, InPlaceOf, effect
from agentdbg.engine.phases import Phase, StopReason
from agentdbg.i18n import Msg
from agentdbg.messages import call_name, tool_calls_of
from agentdbg.toolspec import ToolSet


class UserActions:
    # the state of ``Session`` these actions change
    messages: list[dict]
    marks: dict[int, set[str]]
    outcome_at: dict[int, Any]
    turns: list[Any]
    cut_turns: list[Any]
    model_failure: Any
    actions: list[dict]
    pending: list[dict]
    phase: Phase
    stop_reason: StopReason | None
    stop_detail: str
    stop_msg: Any
    injections: dict[str, CallOverride]
    fails: dict[str, tuple[CallOverride, bool]]
    force_send: bool
    failed_forced: bool
    toolset: ToolSet
    result_source: Callable[[dict], CallOverride | None] | None
    _recent_calls: list[tuple[str, str, str]]

    elapsed: Callable[[], float]
    _emit: Callable[..., None]
    _set_pending: Callable[[list[dict], int], None]

    def _override_for(self, call: dict) -> CallOverride | None:
        """What answers ``call`` instead of its tool: a recorded result, an injected fault.

        In a replay the user's own fault wins over the recorded result (the recording is stale
        from there); it is made from that result, and the recorded one is used up all the same.
        A recorded result that was itself an injection is the recorded fault re-applied."""
        recorded = self.result_source(call) if self.result_source is not None else None
        fault = self._fault_for(call)
        if recorded is not None and (fault is None or recorded.injected):
            return recorded
        if fault is not None and recorded is not None:
            return InPlaceOf(fault, recorded.content(call_name(call) or ""))
        return fault

    def _fault_for(self, call: dict) -> CallOverride | None:
        """The fault waiting for ``call`` (``inject`` on it, else ``fail`` on its tool), used up."""
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

    def _act(self, action: str, **data: object) -> None:
        entry = {"action": action, "at_ms": round(self.elapsed() * 1000, 3), **data}
        self.actions.append(entry)
        self._emit("action", **entry)

    def resume(self) -> None:
        """Reopen the run from its messages: the last message decides the pending phase."""
        self.stop_reason, self.stop_detail, self.stop_msg = None, "", ""
        self.model_failure = None
        self._recent_calls.clear()
        self._follow_history()
        last = len(self.messages) - 1
        calls = tool_calls_of(self.messages[last]) if self.messages else []
        turn = next((t.turn for t in self.turns if t.message_index == last), 0)
        self._set_pending(list(calls), turn)

    def _forget_turns_after(self, index: int) -> None:
        """Turns whose reply was cut point nowhere (``_follow_history`` moves them out)."""
        for t in self.turns:
            if t.message_index is not None and t.message_index > index:
                t.message_index = None

    def _follow_history(self) -> None:
        """Turn numbers and usage follow the history: a turn whose reply was cut, or a request
        that got no reply, moves to ``cut_turns`` (it was a real request: the transcript keeps
        it); the turns left are numbered 1, 2 … in the order of their replies."""
        live = [t for t in self.turns
                if t.message_index is not None and t.message_index < len(self.messages)]
        kept = {id(t) for t in live}
        self.cut_turns.extend(t for t in self.turns if id(t) not in kept)
        live.sort(key=lambda t: t.message_index)
        for number, t in enumerate(live, 1):
            t.turn = number
        self.turns = live

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.messages):
            raise IndexError(Msg("no message {index}; messages are 0..{last}",
                                 {"index": index, "last": len(self.messages) - 1}))

    def adopt(self, messages: list[dict]) -> None:
        """Take ``messages`` as the history: what an app sent (replaying a proxy recording,
        where the app, not agentdbg, ran the loop). Marks and executions do not carry over."""
        self.messages = list(messages)
        self.marks, self.outcome_at = {}, {}
        self.stop_reason, self.stop_detail, self.stop_msg = None, "", ""
        self._set_pending([], 0)

    def edit(self, index: int, message: dict) -> None:
        """Replace message ``index``; it is marked as edited in the view and the saved run.

        ``ValueError`` when it is not a message the loop can go on from: an object with a
        role, whose ``tool_calls`` (when a list) are objects — a call that is a number or a
        string could be neither executed nor recorded (the transcript format holds calls)."""
        self._check_index(index)
        problem = message_problem(message)
        if problem is not None:
            raise ValueError(problem)
        before = self.messages[index]
        self.messages[index] = message
        self.marks[index] = (self.marks.get(index, set()) - {"injected"}) | {"edited"}  # yours now
        if index in self.outcome_at:  # the result is now yours: describe what it says, not the run
            self.outcome_at[index] = as_edited(self.outcome_at[index], message)
        self._act("edit", index=index, before=before, after=message)
        fixing = self.stop_reason is StopReason.MODEL_ERROR   # the history the API refused
        if fixing or (index == len(self.messages) - 1 and self.phase is not Phase.DONE):
            self.resume()

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
        self.resume()
        return removed

    def rewind(self, index: int) -> int:
        """Keep messages 0..index and continue live from there; returns how many were cut."""
        self._check_index(index)
        cut = self._cut_after(index)
        self._act("rewind", index=index, cut=cut)
        self.resume()
        return cut

    def back(self, count: int) -> int:
        """Return to the history of ``count`` messages as it was before the last step (step
        mode's ``back``): a rewind that re-runs nothing, recorded as ``back``."""
        if not 0 < count <= len(self.messages):
            raise IndexError(Msg("no message {index}; messages are 0..{last}",
                                 {"index": count - 1, "last": len(self.messages) - 1}))
        cut = self._cut_after(count - 1)
        self._act("back", index=count - 1, cut=cut)
        self.resume()
        return cut

    def _cut_after(self, index: int) -> int:
        cut = len(self.messages) - index - 1
        del self.messages[index + 1:]
        self.marks = {k: v for k, v in self.marks.items() if k <= index}
        self.outcome_at = {k: v for k, v in self.outcome_at.items() if k <= index}
        self._forget_turns_after(index)
        return cut

    def retry(self) -> int:
        """Ask the model again for the last turn: cut back to before the last assistant message.

        After a model error (the last request got no reply) nothing is cut: the run reopens
        and the next step sends that very request again (past the pre-send check when it was
        sent with 'send'); returns 0. A 429 or 5xx may pass this time; a 400 comes back."""
        if self.stop_reason is StopReason.MODEL_ERROR and self.model_failure is not None:
            forced = self.failed_forced
            self._act("retry", index=len(self.messages), cut=0)
            self.resume()
            self.force_send = forced
            return 0
        last = max((i for i, m in enumerate(self.messages) if m.get("role") == "assistant"),
                   default=None)
        if last is None:
            raise IndexError(Msg("there is no assistant message to retry"))
        cut = len(self.messages) - last
        del self.messages[last:]
        self.marks = {k: v for k, v in self.marks.items() if k < last}
        self.outcome_at = {k: v for k, v in self.outcome_at.items() if k < last}
        self._forget_turns_after(last - 1)
        self._act("retry", index=last, cut=cut)
        self.resume()
        return cut

    def inject(self, target: str, fault: Any) -> Msg:
        """Answer a pending call, or replace a finished result, with ``fault``.

        ``target``: a tool_call_id (or unique prefix), the index of a tool message,
        or the name of a pending tool. Returns what was changed, for the user.
        """
        kind, ref = self._resolve_call(target)
        if kind == "pending":
            self.injections[ref] = fault
            self._act("inject", tool_call_id=ref, fault=fault.describe(), kind=fault.kind,
                      custom=fault.custom, pending=True)
            tool = next((call_name(c) or "" for c in self.pending if str(c.get("id")) == ref), "")
            return Msg("call {id} will get the {fault} fault: {effect}",
                       {"id": ref, "fault": fault.describe(),
                        "effect": effect(fault, self.fault_source(tool))})
        message = dict(self.messages[ref])
        name = self._tool_name_of(ref)
        before = message.get("content")
        message["content"] = fault.content(name, before if isinstance(before, str) else None)
        self.messages[ref] = message
        self.marks.setdefault(ref, set()).add("injected")
        self._act("inject", index=ref, tool_call_id=message.get("tool_call_id"),
                  fault=fault.describe(), kind=fault.kind, custom=fault.custom,
                  content=message["content"], pending=False)
        spoiled = effect(fault, "held")
        return Msg("message {index} now holds the {fault} fault: {effect}",
                   {"index": ref, "fault": fault.describe(), "effect": spoiled})

    def fail(self, tool: str, fault: Any, sticky: bool = False) -> Msg:
        """Make the next call of ``tool`` (``sticky``: every call) get ``fault``; returns what
        it will do, for the user."""
        if self.toolset.get(tool) is None:
            raise KeyError(Msg("no tool {name}; tools: {tools}",
                               {"name": repr(tool), "tools": ", ".join(self.toolset.names())}))
        self.fails[tool] = (fault, sticky)
        self._act("fail", tool=tool, fault=fault.describe(), kind=fault.kind, custom=fault.custom,
                  sticky=sticky)
        return self.fail_said(tool, fault, sticky)

    def fail_said(self, tool: str, fault: Any, sticky: bool) -> Msg:
        """What a ``fail`` on ``tool`` does (its confirmation, and a replay's)."""
        values = {"tool": tool, "fault": fault.describe(),
                  "effect": effect(fault, self.fault_source(tool))}
        if sticky:
            return Msg("every call of {tool} will return the {fault} fault: {effect}", values)
        return Msg("the next call of {tool} will return the {fault} fault: {effect}", values)

    def fault_source(self, tool: str) -> str:
        """What a fault made from a result starts from for a call of ``tool`` (``faults.SOURCES``)."""
        if self.result_source is not None:
            return "recorded"
        spec = self.toolset.get(tool)
        return "tool" if spec is not None and not spec.side_effects else "arguments"

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
                raise ValueError(Msg("message {index} is a {role} message, not a tool result",
                                     {"index": index, "role": self.messages[index].get("role")}))
            return "finished", index
        pending = {str(c.get("id")): c for c in self.pending}
        if target in pending:
            return "pending", target
        by_name = [cid for cid, c in pending.items() if call_name(c) == target]
        if len(by_name) == 1:
            return "pending", by_name[0]
        if len(by_name) > 1:
            raise ValueError(Msg("{target} has {n} pending calls; name one by id: {ids}",
                                 {"target": repr(target), "n": len(by_name), "ids": ", ".join(by_name)}))
        exact = [i for i, m in enumerate(self.messages)
                 if m.get("role") == "tool" and m.get("tool_call_id") == target]
        if len(exact) == 1:
            return "finished", exact[0]
        if len(exact) > 1:
            raise ValueError(Msg("{n} tool messages answer {target}; give the message index instead",
                                 {"n": len(exact), "target": repr(target)}))
        matches = {cid for cid in pending if cid.startswith(target)}
        finished = {i for i, m in enumerate(self.messages) if m.get("role") == "tool"
                    and str(m.get("tool_call_id", "")).startswith(target)}
        if len(matches) + len(finished) == 1:
            return ("pending", matches.pop()) if matches else ("finished", finished.pop())
        if not matches and not finished:
            raise ValueError(Msg("no pending call, tool message or call id matches {target}",
                                 {"target": repr(target)}))
        raise ValueError(Msg("{target} matches several calls; give more of the id", {"target": repr(target)}))


def as_edited(outcome: Any, message: dict) -> Any:
    """``outcome`` describing the tool message the user wrote in its place: ok or the error its
    content states; no longer an injected fault nor a handler's exception."""
    from dataclasses import replace

    from agentdbg.engine.results import error_in

    error = error_in(message.get("content"))
    return replace(outcome, ok=error is None, error_type=error[0] if error else None,
                   retryable=error[1] if error else False, injected=False, cause=None,
                   truncated_chars=0, stubbed=False)


def _shift(mapping: dict, removed: int) -> dict:
    """Re-index a message-index mapping after message ``removed`` was deleted."""
    return {(k - 1 if k > removed else k): v for k, v in mapping.items() if k != removed}


def message_problem(message: Any) -> Msg | None:
    """Why ``message`` cannot stand in the history (None: it can); English as ``str()``."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return Msg("a message must be a JSON object with a role")
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        bad = next((i for i, c in enumerate(calls) if not isinstance(c, dict)), None)
        if bad is not None:
            return Msg("tool_calls[{bad}] is not an object; each call is {shape}",
                       {"bad": bad, "shape": '{"id": …, "type": "function", "function": '
                                             '{"name": …, "arguments": "…"}}'})
    return None
