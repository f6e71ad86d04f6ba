"""Replaying a recording with the engine: an ordinary ``Session`` whose model is a
``ReplayModel`` and whose tool results come from the recording.

``Replay`` re-applies the recorded user actions (edits, drops, rewinds, injections)
and stops where they happened, so the replay ends as it was recorded; it knows when a
user's own change makes the recorded responses stale, and how to go live from there.
``LiveTools`` re-runs each recorded call with today's tools and compares the results.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentdbg.engine.faults import Fault
from agentdbg.engine.phases import Phase, StopReason
from agentdbg.engine.session import Event, RunConfig, Session
from agentdbg.errors import InputError, located
from agentdbg.i18n import N_, Msg
from agentdbg.messages import loads_json
from agentdbg.providers.base import ModelRequest, Provider
from agentdbg.providers.replay import RecordedResult, ReplayModel
from agentdbg.toolspec import ToolSet
from agentdbg.transcript.compare import describe_difference
from agentdbg.transcript.events import Action, Blocked, Header, Request, Stop, Tool

if TYPE_CHECKING:
    from agentdbg.checker.findings import Finding
    from agentdbg.checker.inputs import CheckItem

RECORDED_OPTIONS = ("model", "max_turns", "max_tool_calls", "repeat_limit", "timeout",
                    "approve", "tool_choice", "parallel_tool_calls", "temperature",
                    "send_anyway", "stop_on_invalid")


def config_from_header(header: Header, **overrides: object) -> RunConfig:
    """The run's options as recorded (``replay --json`` reports them as they were). Replayed
    calls never ask for approval: their results come from the recording."""
    options = header.options.given() if header.options is not None else {}
    config = RunConfig(**{k: options[k] for k in RECORDED_OPTIONS if k in options})  # type: ignore[arg-type]
    for key, value in overrides.items():
        setattr(config, key, value)
    return config


def replay_session(path: str | os.PathLike[str], *,
                   precheck: Callable[[ModelRequest], list[Finding]] | None = None, strict: bool = False,
                   judged: bool = True, **overrides: object) -> tuple[Session, ReplayModel]:
    """The session replaying ``path`` and its model. ``judged``: ``replay_problems`` will be
    asked (the requests it judges are gathered as the replay reads them, in one pass)."""
    from agentdbg.checker.inputs import TranscriptItems

    model = ReplayModel(path)
    model.strict = strict
    if judged:
        model.check_items = TranscriptItems(str(path), model.header)
        model.on_pop = model.check_items.add
    header = model.header
    toolset = ToolSet.from_openai(header.tool_list, header.tools_file or str(path))
    messages = list(header.initial_messages or [])
    session = Session(model, toolset, config_from_header(header, **overrides), messages,
                      precheck=precheck)
    session.result_source = model.recorded_tool
    return session, model


def check_replayable(path: str | os.PathLike[str], *, strict: bool = False) -> None:
    """Play the whole recording once, silently, as batch ``replay`` does: recorded results
    only, nothing run, nothing written. Raises the ``InputError`` naming the line and field
    of the first event that has the wrong types or cannot be re-applied (an edit of a
    message that is not there, a fault on a tool the recording lacks …).

    Step mode shows the recording as it goes, so it checks it whole before it starts."""
    session, model = replay_session(path, strict=strict, judged=False)
    for _ in Replay(session, model).steps():
        pass


def apply_action(session: Session, event: Action) -> None:
    """Re-apply one recorded user action through the same session methods (the event's
    fields each action needs are there: ``Action.problem`` refused it otherwise)."""
    kind = event.action
    fault = Fault(event.kind_ or "custom", event.custom or "")
    index = event.index if event.index is not None else -1
    if kind == "edit" and event.after is not None:
        session.edit(index, event.after)
    elif kind == "drop":
        session.drop(index)
    elif kind == "rewind":
        session.rewind(index)
    elif kind == "back":
        session.back(index + 1)
    elif kind == "retry":
        session.retry()
    elif kind == "inject" and event.pending:
        session.inject(str(event.tool_call_id), fault)
    elif kind == "inject":
        session.inject(str(index), Fault("custom", event.content or ""))
    elif kind == "fail" and event.tool is not None:
        session.fail(event.tool, fault, bool(event.sticky))
    elif kind == "send":
        session.send_once()


@dataclass
class ActionReplayed:
    """A recorded user action (edit, drop, rewind, back, retry, inject, fail, send) just re-applied."""
    action: Action


class Replay:
    """A session playing a recording: recorded actions re-applied, staleness detected."""

    def __init__(self, session: Session, model: ReplayModel):
        self.session = session
        self.model = model
        self.applied = 0           # recorded actions re-applied so far
        self.just_applied: list[Action] = []  # the action events the last sync re-applied
        #: ... and the requests the pre-send check blocked among them, in the recording's order
        #: (a blocked request changed nothing; a handout shows it as a phase of its own)
        self.just_passed: list[Action | Blocked] = []
        self.live = False
        #: a proxy recording: the app drove the loop, so each recorded request *is* the
        #: history (whatever form the app gave it: text tool calls, trimmed, retried, a
        #: second question); the replay plays the model's answers to exactly those requests
        self.app_driven = model.header.app_driven
        self._adopted: Request | None = None       # the app's recorded request adopted last
        self._recorded = list(session.messages)    # ... its messages (at first: the start's)
        self._played = 0                           # replies played before it was adopted

    def sync(self, limit: int | None = None) -> int:
        """Apply the recorded actions and stops that come next (at most ``limit`` actions);
        returns how many actions."""
        applied = 0
        self.just_applied = []
        self.just_passed = []
        while not self.live and (limit is None or applied < limit):
            if self.app_driven:  # the app's tool results sit before its next request
                self.model.next_request_messages()
                self.just_passed.extend(self.model.blocked_passed)
                self.model.blocked_passed.clear()
            event = self.model.peek()
            if self.app_driven and isinstance(event, Request):
                self._adopt_next_request()
                break
            if not isinstance(event, (Action, Stop, Blocked)):
                break
            self.model.pop()
            try:
                if isinstance(event, Action):
                    apply_action(self.session, event)
                    self.just_applied.append(event)
                    self.just_passed.append(event)
                    applied += 1
                elif isinstance(event, Blocked):
                    self.just_passed.append(event)
                elif isinstance(event, Stop) and not self.session.done:
                    self.session.stop(StopReason(event.reason), event.detail or "")
            except (IndexError, KeyError, ValueError) as exc:  # the recording cannot be so
                what = f"{event.action} action" if isinstance(event, Action) else "stop"
                reason = exc.args[0] if exc.args else exc
                raise InputError(located(self.model.path, self.model.line, None,
                                         f"{what} event: {reason}")) from None
        self.applied += applied
        return applied

    def setup(self) -> list[Msg]:
        """Apply the recorded ``fail`` actions that come before the first request (a lesson's
        injections, ``-c 'fail …'``): they set the run up, as live, and are no step of it.
        Returns what each does, as 'fail' said it."""
        out: list[Msg] = []
        while not self.live and self.session.requests_made == 0:
            upcoming = self.model.peek()
            if not isinstance(upcoming, Action) or upcoming.action != "fail" or not self.sync(limit=1):
                break
            a = self.just_applied[0]
            out.append(self.session.fail_said(str(a.tool), Fault(a.kind_ or "custom", a.custom or ""),
                                              bool(a.sticky)))
        return out

    def steps(self) -> Iterator[Event | ActionReplayed]:
        """Step the replay to the end of the recording, yielding each event, and each recorded
        action where it is re-applied."""
        s, model = self.session, self.model
        while True:
            while self.sync(limit=1):   # one by one: a million recorded actions are not held
                yield ActionReplayed(self.just_applied[0])
            if s.stop_reason is not None or model.peek() is None:
                if s.stop_reason is not None and model.peek() is not None:
                    model.diverged = model.diverged or (
                        f"the replay stopped ({s.stop_reason.value}) where the recording goes on")
                if s.stop_reason is None:
                    s.stop(StopReason.CANCELLED, Msg(N_("the recording ends here (it has no stop event)")))
                return
            yield s.step()

    def _adopt_next_request(self) -> None:
        """The app's next request becomes the session's history (it carries the app's own
        results of the previous calls, a retry, or a new question). Once the user changed the
        history (an edit, an injected result …), only what the app added since its previous
        request is appended to the user's history, so the change stays and the recorded
        responses are seen as stale."""
        s = self.session
        event = self.model.next_request()
        if event is None or event is self._adopted:    # already the session's history
            return
        upcoming = list(event.messages or [])
        messages = upcoming
        if len(s.actions) > self.applied:
            messages = self._after_users_history(upcoming) or upcoming
        self._adopted, self._recorded, self._played = event, upcoming, self.model.turns_played
        if self.model.on_app_result is not None and s.phase is Phase.TOOLS:
            for call, result in _app_results(s.pending, messages):
                self.model.on_app_result(call, result)
        if s.stop_reason is not None or s.phase is not Phase.MODEL or s.messages != messages:
            s.adopt(messages)

    def _after_users_history(self, upcoming: list[dict]) -> list[dict] | None:
        """The user's history followed by what the app appended after its previous request and
        the model's reply to it (None: the app rewrote its history instead of appending)."""
        before, seen = self._recorded, self.model._seen
        start = len(before) + self.model.turns_played - self._played     # after the reply, if any
        if len(upcoming) < start or seen(upcoming[:len(before)]) != seen(before) \
                or any(m.get("role") != "assistant" for m in upcoming[len(before):start]):
            return None
        answered = {m.get("tool_call_id") for m in self.session.messages if m.get("role") == "tool"}
        added = [m for m in upcoming[start:]
                 if not (m.get("role") == "tool" and m.get("tool_call_id") in answered)]
        return [*self.session.messages, *added]

    def pause_reason(self) -> Msg | None:
        """Why the next step must not play the recording (None: go on).

        The user's own change (an edit, a drop …) makes the recorded responses answer a
        different history: they are not played unknowingly."""
        if self.live:
            return None
        self.sync()
        s = self.session
        if s.done and self.model.peek() is None:
            return Msg(N_("the recording ends here"))
        user_changed = len(s.actions) > self.applied
        if s.phase is Phase.MODEL and user_changed and not self.model.knowingly:
            diff = self.model.stale(s.request())
            if diff:
                return Msg(N_("the recording is stale from here: your change makes the recorded "
                              "responses answer a different history ({difference}). 'live' "
                              "continues with a live model; 'play' keeps playing the recording "
                              "knowingly."), {"difference": describe_difference(diff)})
        return None

    def go_live(self, provider: Provider, toolset: ToolSet | None) -> None:
        """Stop playing: ``provider`` answers and tools run for real from here on."""
        self.session.go_live(provider, toolset)
        self.live = True


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
        return json.dumps(loads_json(text), ensure_ascii=False, indent=2, sort_keys=True)
    except (TypeError, ValueError):
        return text


@dataclass
class LiveTools:
    """Re-executes each recorded call against the current tools and keeps the comparison."""
    toolset: ToolSet
    approve_side_effects: bool = False
    results: list[ToolComparison] = field(default_factory=list)

    def __post_init__(self) -> None:
        from agentdbg.engine.executor import ToolExecutor

        self.executor = ToolExecutor(self.toolset)

    def compare(self, call: dict, recorded: Tool) -> None:
        from agentdbg.messages import call_name

        name = call_name(call) or ""
        spec = self.toolset.get(name)
        cid = str(call.get("id"))
        content = recorded.content or ""
        if recorded.injected:
            self.results.append(ToolComparison(cid, name, content, None,
                                               "injected fault in the recording: not re-run"))
        elif spec is not None and spec.side_effects and not self.approve_side_effects:
            self.results.append(ToolComparison(cid, name, content, None,
                                               "side effects: not re-run without --approve all"))
        else:
            outcome = self.executor.run_one(call, approved=lambda c: self.approve_side_effects)
            self.results.append(ToolComparison(cid, name, content, outcome.content))


def with_live_tools(session: Session, model: ReplayModel, live: LiveTools) -> None:
    """Wrap the recorded-result source so every recorded call is also re-run and compared
    (in an app-driven recording, each result the app sent in its next request)."""
    def source(call: dict) -> RecordedResult | None:
        recorded = model.recorded_tool(call)
        if recorded is not None:
            live.compare(call, recorded.event)
        return recorded
    session.result_source = source
    model.on_app_result = live.compare


def _app_results(calls: list[dict], messages: list[dict]) -> Iterator[tuple[dict, Tool]]:
    """Each of ``calls`` with the result the app sent for it in ``messages`` (its last one)."""
    from agentdbg.messages import call_name

    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    for call in calls:
        message = results.get(call.get("id"))
        if message is not None:
            yield call, Tool(tool_call_id=str(call.get("id")), name=call_name(call),
                             content=_result_text(message.get("content")))


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return json.dumps(content, ensure_ascii=False)


# -- the verdict ------------------------------------------------------------------------

def replay_problems(path: str | os.PathLike[str], session: Session, model: ReplayModel, *,
                    profile: str = "openai", live: LiveTools | None = None,
                    strict: bool = False) -> list[str]:
    """What makes a replay fail, the same for ``agentdbg replay``, ``assert_replays`` and the
    pytest plugin: it diverged, it ended differently, or a request the recording *sent*
    breaks the protocol (judged as the API judges it; blocked requests were not sent);
    with ``live`` tools, a result that differs from the recorded one."""
    from agentdbg.transcript.compare import describe_difference, first_difference

    model.drain()    # the recording streamed to its end: its stop event and final messages
    problems = []
    if model.diverged:
        problems.append(N_("diverged: {what}").format(what=model.diverged))
    stopped = session.stop_reason.value if session.stop_reason else None
    recorded_stop = model.recorded_stop.reason if model.recorded_stop is not None else None
    if recorded_stop and recorded_stop != stopped:
        problems.append(N_("stop reason: recorded {recorded}, replayed {now}").format(
            recorded=recorded_stop, now=stopped))
    # the stop event's messages are the recorded end state (later edits are re-applied, not
    # recorded; a stop event without messages leaves nothing to compare)
    last = model.recorded_stop if model.ends_with_stop else None
    if last is not None and last.messages is not None:
        diff = first_difference(model.final_messages(), session.messages, strict=strict)
        if diff:
            problems.append(N_("final messages: {difference}").format(difference=describe_difference(diff)))
    problems.extend(sent_request_problems(path, profile, model.check_items.items(model.warnings)
                                          if model.check_items is not None else None))
    for r in (live.results if live else []):
        if r.differs:
            problems.append(f"live tool {r.name} ({r.call_id}) differs:\n{r.diff()}")
    return problems


def sent_request_problems(path: str | os.PathLike[str], profile: str = "openai",
                          items: list[CheckItem] | None = None) -> list[str]:
    """Error-level findings in the requests the recording sent, each reported once, judged
    in the recording's own wire format (as ``agentdbg check`` judges a transcript). A request
    the checker blocked and the user then sent with ``send`` (a lesson showing the API's 400)
    was broken on purpose: replaying it reproduces the recording, so it is no problem.
    ``items``: the recording's requests as a replay gathered them (else it is streamed
    again, never read whole)."""
    from agentdbg.checker.inputs import transcript_items
    from agentdbg.checker.judge import judge_all

    out = []
    for judged in judge_all(items if items is not None else transcript_items(str(path)), None,
                            profile):
        for f in judged.findings:
            if f.severity == "error" and judged.item.turn is not None \
                    and judged.item.recorded is None \
                    and not judged.item.sent_anyway:      # a blocked request was never sent
                where = f.path or f"message {f.index}"
                out.append(N_("request {turn}: {rule} at {where}: {message}").format(
                    turn=judged.item.turn, rule=f.rule, where=where, message=f.message))
    return out
