"""``agentdbg report --handout``: a lesson's recording as a handout for students.

One section per phase of the loop, each printed on a page of its own: what happened and what
comes next (step mode's narration), the ``messages`` array at that point with the new messages
marked, and what changed since the phase before (new messages, messages cut or replaced). The
exercises the teacher wrote in the lesson file close it. The recording is replayed in-process
(no network, no tool runs), so the phases are exactly the ones step mode showed; the page is
self-contained like the report (no scripts, no network).
"""

from __future__ import annotations

import json
import os
from typing import Any

from agentdbg.i18n import _
from agentdbg.report.html import CSS, esc, foot_html, page

HANDOUT_CSS = CSS + """
.phase{break-after:page;page-break-after:always;background:#fff;border:1px solid #d9dde3;
border-radius:6px;padding:10px 14px;margin:14px 0}
.phase:last-of-type{break-after:auto;page-break-after:auto}
.narration{font-size:15px;margin:6px 0 10px}.changed{color:#8250df;margin:6px 0}
.msg.new .idx{color:#1a7f37;font-weight:700}ol.exercises li{margin:6px 0}
@media print{body{background:#fff}main{max-width:none;padding:0}.phase{border:none;margin:0}}
"""
SHOWN = 400    # characters of a content shown on paper


def render_handout(path: str | os.PathLike[str], *, exercises: list[str] | None = None,
                   title: str | None = None) -> str:
    """The handout page of the recording at ``path`` (in the chosen language)."""
    phases, question = lesson_phases(path)
    heading = title or question or _("Handout")
    asked = _("Question: {question}").format(question=question)
    parts = [f"<header><h1>{esc(heading)}</h1><p>{esc(asked)}</p></header>"]
    for number, phase in enumerate(phases, 1):
        parts.append(_phase(number, phase))
    if exercises:
        items = "".join(f"<li>{esc(e)}</li>" for e in exercises)
        parts.append("<section class=\"phase\" id=\"exercises\"><h2>" + esc(_("Exercises"))
                     + f'</h2><ol class="exercises">{items}</ol></section>')
    parts.append(foot_html())
    return page(esc(heading), "".join(parts), css=HANDOUT_CSS)


def lesson_phases(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], str]:
    """Each phase of the recording replayed: its title, narration, messages and what changed.
    A request the pre-send check blocked (step mode, or the proxy's --block-invalid) is a
    phase of its own, where the recording has it: before the ``send`` that sent it anyway,
    or the edit that fixed the history."""
    from agentdbg.checker import check_model_request
    from agentdbg.engine.replaying import ActionReplayed, Replay, replay_session
    from agentdbg.repl.explain import join_sentences, narrate

    session, model = replay_session(path, precheck=check_model_request, judged=False)
    session.config.stop_on_invalid = False
    question = str(model.header.question or "")
    replay = Replay(session, model)
    faults = [m.tr() for m in replay.setup()]   # set up, as live: no phase
    said = [_("Before the first request: {said}.").format(said=f) for f in faults]
    phases = [_snapshot(_("The question"), join_sentences([*said, narrate(session, None)]), [],
                        session.messages)]
    batch: list = []
    waiting: list = []        # what the last sync passed and no phase shows yet
    for event in replay.steps():
        if replay.just_passed is not batch:
            batch, waiting = replay.just_passed, list(replay.just_passed)
        action = event.action if isinstance(event, ActionReplayed) else None
        phases.extend(_blocked_before(session, waiting, action, phases[-1]["messages"]))
        before = phases[-1]["messages"]
        last: Any = event
        if isinstance(event, ActionReplayed):   # its own entry, of the actions one sync applied
            applied = replay.just_applied
            at = len(session.actions) - len(applied) + next(
                (k for k, a in enumerate(applied) if a is event.action), len(applied) - 1)
            last = session.actions[at] if 0 <= at < len(session.actions) else None
        phases.append(_snapshot(_title(event, session), narrate(session, last), before,
                                session.messages))
    if replay.just_passed is not batch:       # the last sync: a blocked request, then the end
        waiting = list(replay.just_passed)
    phases.extend(_blocked_before(session, waiting, None, phases[-1]["messages"]))
    return phases, question


def _blocked_before(session: Any, waiting: list, action: Any, messages: list) -> list[dict[str, Any]]:
    """The phases of the blocked requests ``waiting`` holds before ``action`` (all of them when
    None), taken out of ``waiting``; ``action`` too."""
    from agentdbg.engine.session import RequestBlocked
    from agentdbg.repl.explain import narrate
    from agentdbg.report.adapter import finding_from_dict
    from agentdbg.transcript.events import Blocked

    out = []
    while waiting:
        item = waiting.pop(0)
        if item is action:
            break
        if isinstance(item, Blocked):
            findings = [finding_from_dict(d) for d in item.findings or []]
            phase = _snapshot(_("The request is blocked (not sent)"),
                              narrate(session, RequestBlocked(findings)), messages, messages)
            phase["findings"] = findings
            out.append(phase)
    return out


def _snapshot(title: str, narration: str, before: list, now: list) -> dict[str, Any]:
    messages = json.loads(json.dumps(now, default=str))    # as it was then, not as it becomes
    return {"title": title, "narration": narration, "messages": messages,
            "changed": _changed(before, messages), "new": _first_new(before, messages)}


def _title(event: Any, session: Any) -> str:
    from agentdbg.engine.phases import StopReason
    from agentdbg.engine.replaying import ActionReplayed
    from agentdbg.engine.session import ModelReplied, RequestBlocked, Stopped, ToolsExecuted
    from agentdbg.render.run import action_text, stop_label

    if isinstance(event, ActionReplayed):
        return action_text(event.action)
    if isinstance(event, ModelReplied):
        return _("The model answers (turn {turn})").format(turn=event.turn)
    if isinstance(event, ToolsExecuted):
        return _("The app runs {n} call(s)").format(n=len(event.outcomes))
    if isinstance(event, RequestBlocked):
        return _("The request is blocked (not sent)")
    status = getattr(session.model_failure, "status", None)
    if isinstance(event, Stopped) and event.reason is StopReason.MODEL_ERROR \
            and isinstance(status, int) and 400 <= status < 500:   # the API said no
        return _("The API rejects the request (HTTP {status}); the loop stops").format(status=status)
    if isinstance(event, Stopped):
        return _("The loop stops: {reason}").format(reason=stop_label(event.reason.value))
    return _("Approval needed")


def _first_new(before: list, now: list) -> int:
    k = 0
    while k < min(len(before), len(now)) and before[k] == now[k]:
        k += 1
    return k


def _changed(before: list, now: list) -> str:
    k = _first_new(before, now)
    said = []
    if k == len(before) - 1:
        said.append(_("message {index} was cut or replaced").format(index=k))
    elif k < len(before):
        said.append(_("messages {first}–{last} were cut or replaced").format(first=k, last=len(before) - 1))
    if k == len(now) - 1:
        said.append(_("new: message {index}").format(index=k))
    elif k < len(now):
        said.append(_("new: messages {first}–{last}").format(first=k, last=len(now) - 1))
    return _("; ").join(said) if said else _("the messages did not change")


def _phase(number: int, phase: dict[str, Any]) -> str:
    from agentdbg.report.html import finding_html

    heading = _("Phase {n}: {title}").format(n=number, title=phase["title"])
    rows = "".join(_message(i, m, i >= phase["new"]) for i, m in enumerate(phase["messages"]))
    found = "".join(finding_html(f, where=True) for f in phase.get("findings", ()))
    return (f'<section class="phase" id="phase-{number}"><h2>{esc(heading)}</h2>{found}'
            f'<p class="narration">{esc(phase["narration"])}</p>'
            f'<p class="changed">{esc(phase["changed"])}</p><div>{rows}</div></section>')


def _message(i: int, m: Any, new: bool) -> str:
    if not isinstance(m, dict):
        return (f'<div class="msg"><span></span><span class="idx">[{i}]</span><span>?</span>'
                f"<pre>{esc(m)}</pre></div>")
    role = str(m["role"]) if isinstance(m.get("role"), str) else "?"
    body = []
    if m.get("tool_call_id") is not None:
        body.append(f"← {m.get('tool_call_id')}")
    content = m.get("content")
    if isinstance(content, str) and content:
        body.append(content if len(content) <= SHOWN else content[:SHOWN] + " …")
    elif content not in (None, ""):
        body.append(json.dumps(content, ensure_ascii=False)[:SHOWN])
    for call in m.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            body.append(f"→ {call.get('id')}  {fn.get('name')}({fn.get('arguments')})")
    cls = f"msg role-{role}" + (" new" if new else "") if role.isidentifier() else "msg"
    mark = "+" if new else ""
    return (f'<div class="{cls}"><span class="new">{mark}</span><span class="idx">[{i}]</span>'
            f'<span class="role">{esc(role)}</span><pre>{esc(chr(10).join(body))}</pre></div>')
