"""``agentdbg replay``: play a recording, compare tools live, or fork it.

The replay is an ordinary ``Session`` whose model is ``ReplayModel`` and whose
tool results come from the recording; this driver re-applies the recorded user
actions and stops between steps, so the run ends as it was recorded.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.engine.faults import Fault
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.providers.replay import ReplayModel
from agentdbg.toolspec import ToolSet

RECORDED_OPTIONS = ("model", "max_turns", "max_tool_calls", "repeat_limit", "timeout",
                    "tool_choice", "parallel_tool_calls", "temperature", "send_anyway",
                    "stop_on_invalid")


def config_from_header(header: dict, **overrides) -> RunConfig:
    options = header.get("options") or {}
    config = RunConfig(**{k: options[k] for k in RECORDED_OPTIONS if k in options})
    config.approve = "all"  # nothing runs: results come from the recording
    for key, value in overrides.items():
        setattr(config, key, value)
    return config


def replay_session(path, *, precheck=None, **overrides) -> tuple[Session, ReplayModel]:
    model = ReplayModel(path)
    header = model.header
    toolset = ToolSet.from_openai(header.get("tools") or [], header.get("tools_file") or str(path))
    messages = list(header.get("initial_messages") or [])
    session = Session(model, toolset, config_from_header(header, **overrides), messages,
                      precheck=precheck)
    session.recorded = model.recorded_tool
    return session, model


def apply_action(session: Session, event: dict) -> None:
    """Re-apply one recorded user action through the same session methods."""
    kind = event.get("action")
    fault = Fault(event.get("kind") or "custom", event.get("custom") or "")
    if kind == "edit":
        session.edit(event["index"], event["after"])
    elif kind == "drop":
        session.drop(event["index"])
    elif kind == "rewind":
        session.rewind(event["index"])
    elif kind == "retry":
        session.retry()
    elif kind == "inject" and event.get("pending"):
        session.inject(str(event["tool_call_id"]), fault)
    elif kind == "inject":
        session.inject(str(event["index"]), Fault("custom", event.get("content", "")))
    elif kind == "fail":
        session.fail(event["tool"], fault, bool(event.get("sticky")))
    elif kind == "send":
        session.send_once()


def sync(session: Session, model: ReplayModel) -> int:
    """Apply the recorded actions and stops that come next; returns how many actions."""
    applied = 0
    while True:
        event = model.peek()
        if event is None or event["type"] not in ("action", "stop", "blocked"):
            return applied
        model.pop()
        if event["type"] == "action":
            apply_action(session, event)
            applied += 1
        elif event["type"] == "stop" and not session.done:
            session.stop(StopReason(event["reason"]), event.get("detail") or "")


def steps(session: Session, model: ReplayModel):
    """Step the replay to the end of the recording, yielding each event."""
    while True:
        sync(session, model)
        if session.done or model.peek() is None:
            if session.done and model.peek() is not None:
                model.diverged = model.diverged or (
                    f"the replay stopped ({session.stop_reason.value}) where the recording goes on")
            if not session.done:
                session.stop(StopReason.CANCELLED, "the recording ends here (it has no stop event)")
            return
        yield session.step()


# -- --live-tools ---------------------------------------------------------------------

@dataclass
class ToolComparison:
    call_id: str
    name: str
    recorded: str
    now: str | None          # None: not re-run
    reason: str = ""

    @property
    def differs(self) -> bool:
        return self.now is not None and self.now != self.recorded

    def diff(self) -> str:
        a = _pretty(self.recorded).splitlines()
        b = _pretty(self.now or "").splitlines()
        return "\n".join(difflib.unified_diff(a, b, "recorded", "now", lineterm="", n=1))


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2, sort_keys=True)
    except (TypeError, ValueError):
        return text


@dataclass
class LiveTools:
    """Re-executes each recorded call against the current tools and keeps the comparison."""
    toolset: ToolSet
    approve_side_effects: bool = False
    results: list[ToolComparison] = field(default_factory=list)

    def __post_init__(self):
        from agentdbg.engine.executor import ToolExecutor

        self.executor = ToolExecutor(self.toolset)

    def compare(self, call: dict, recorded: dict) -> None:
        from agentdbg.messages import call_name

        name = call_name(call) or ""
        spec = self.toolset.get(name)
        cid = str(call.get("id"))
        if recorded.get("injected"):
            self.results.append(ToolComparison(cid, name, recorded.get("content", ""), None,
                                               "injected fault in the recording: not re-run"))
        elif spec is not None and spec.side_effects and not self.approve_side_effects:
            self.results.append(ToolComparison(cid, name, recorded.get("content", ""), None,
                                               "side effects: not re-run without --approve all"))
        else:
            outcome = self.executor.run_one(call, approved=lambda c: self.approve_side_effects)
            self.results.append(ToolComparison(cid, name, recorded.get("content", ""),
                                               outcome.content))


def with_live_tools(session: Session, model: ReplayModel, live: LiveTools) -> None:
    """Wrap the recorded-result hook so every recorded call is also re-run and compared."""
    def hook(call: dict):
        recorded = model.recorded_tool(call)
        if recorded is not None:
            live.compare(call, recorded.event)
        return recorded
    session.recorded = hook


def initial_state(path: str) -> list[dict]:
    """A plain messages array (or request body) as a starting state for replay --step."""
    from agentdbg.checker.inputs import load_check_input

    items = load_check_input(path)
    if len(items) != 1:
        from agentdbg.errors import InputError

        raise InputError(f"{path}: {len(items)} documents; a starting state is one messages array")
    return [dict(m) for m in items[0].request.messages]


def parent_info(path: Path, index: int) -> dict:
    return {"path": str(path), "from_index": index}
