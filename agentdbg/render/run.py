"""Renderables for a whole run: header, per-turn view, tool outcomes, footer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from agentdbg.engine.executor import ToolOutcome
from agentdbg.engine.phases import StopReason
from agentdbg.i18n import N_, Join, Msg, _, tr
from agentdbg.render.safe import safe
from agentdbg.render.wrap import cjk
from agentdbg.transcript.events import Action

if TYPE_CHECKING:
    from agentdbg.checker.findings import Finding
    from agentdbg.engine.session import Session

STOP_STYLE = {"completed": "bold green"}


def message_meta(session: Session) -> dict[int, str]:
    """Per message index: usage/latency for replies, duration/error for tool results."""
    meta: dict[int, str] = {}
    for t in session.turns:
        if t.message_index is not None:
            tokens = t.usage.get("total_tokens")
            est = _(" (estimated)") if t.usage.get("estimated") else ""
            meta[t.message_index] = _("turn {turn} · {tokens} tokens{estimated} · {ms} ms · "
                                      "finish_reason={finish}").format(
                turn=t.turn, tokens=tokens, estimated=est, ms=f"{t.latency_ms:.1f}",
                finish=t.finish_reason)
    for index, o in session.outcome_at.items():
        meta[index] = outcome_meta(o)
    for index, marks in getattr(session, "marks", {}).items():
        badge = " · ".join(MARKS.get(m, lambda m=m: f"[{m} by you]")() for m in sorted(marks))
        meta[index] = f"{meta[index]} · {badge}" if index in meta else badge
    return meta


MARKS = {"edited": lambda: _("[edited by you]"), "injected": lambda: _("[injected by you]")}


def outcome_meta(o: ToolOutcome) -> str:
    parts = [_("{ms} ms").format(ms=f"{o.duration_ms:.1f}")]
    if not o.ok:
        parts.append(_("error: {type}{retryable}").format(
            type=o.error_type, retryable=_(" (retryable)") if o.retryable else ""))
    if o.truncated_chars:
        parts.append(_("cut {n} characters").format(n=o.truncated_chars))
    if o.stubbed:
        parts.append(_("fixture (stub)"))
    if o.injected:
        parts.append(_("injected fault"))
    if o.cause and not o.ok:   # the developer's view; the model saw only the error
        parts.append(_("raised {cause}").format(cause=o.cause))
    if o.unchecked:
        parts.append(_("arguments not checked (over the work budget)"))
    return " · ".join(parts)


def action_text(a: Action) -> str:
    """One of your recorded step-mode actions in words (the report's cards, replay's lines)."""
    kind, index, cut = a.action, a.index, a.cut
    if kind == "edit":
        return _("you edited message [{index}]").format(index=index)
    if kind == "drop":
        return _("you dropped message [{index}]").format(index=index)
    if kind == "rewind":
        return _("you rewound to message [{index}] (cut {cut} message(s))").format(index=index, cut=cut)
    if kind == "back":
        return _("you went back to message [{index}], re-running nothing (cut {cut} message(s))"
                 ).format(index=index, cut=cut)
    if kind == "retry" and cut == 0:     # after a model error: nothing cut, the same request
        return _("you sent the request that got no reply again (retry)")
    if kind == "retry":
        return _("you asked the model again (retry): cut {cut} message(s) from [{index}]").format(
            index=index, cut=cut)
    if kind == "inject" and a.pending:
        return _("you injected the fault {fault} into call {call}").format(fault=a.fault,
                                                                          call=a.tool_call_id)
    if kind == "inject":
        return _("you replaced the result [{index}] with the fault {fault}").format(index=index,
                                                                                   fault=a.fault)
    if kind == "fail":
        text = (_("you made every call of {tool} fail with {fault}") if a.sticky else
                _("you made the next call of {tool} fail with {fault}"))
        return text.format(tool=a.tool, fault=a.fault)
    if kind == "send":
        return _("you sent a request the checker had blocked")
    return _("you did {action}").format(action=kind)


def render_denied(o: ToolOutcome) -> RenderableType:
    """Why a side-effecting call was not run in a batch run, and how to let it run."""
    return cjk(_("{tool} ({call}) was not run: it needs approval (approval: always) and a batch "
                 "run denies it; --approve all runs such calls, --step asks you for each").format(
        tool=safe(o.name), call=safe(o.call_id)), style="yellow")


def render_action(a: Action) -> RenderableType:
    """A recorded action, where a replay re-applies it."""
    return Text.assemble(("✎ ", "bold magenta"), (safe(action_text(a)), "magenta"),
                         (_(" (recorded; re-applied here)"), "dim"))


def render_header(model_desc: Any, toolset: Any, offline: bool,
                  title: str = "agentdbg run", compact: bool = False) -> RenderableType:
    """The run's header box; ``compact`` (the presenter view): one line (where the tools come
    from only when that is a warning)."""
    tools = safe(", ".join(toolset.names()))
    source, warning = tools_source(toolset)
    if compact:
        line = Text.assemble((f"{title} · ", "bold"), safe(tr(model_desc)), " · ",
                             (_("tools: "), "bold"), tools)
        if warning:
            line.append_text(Text.assemble(" · ", (_("from: "), "bold"), (safe(source), "yellow")))
        line.no_wrap, line.overflow = True, "ellipsis"
        return Group(line)     # a group: printed on its own, so it keeps to one line
    lines = [cjk(Text.assemble((_("model: "), "bold"), safe(tr(model_desc)))),
             cjk(Text.assemble((_("tools: "), "bold"), tools))]
    if source:
        lines.append(cjk(Text.assemble((_("from: "), "bold"),
                                       (safe(source), "yellow" if warning else ""))))
    if offline:
        lines.append(cjk(_("The offline model is not an LLM: a deterministic planner that fills "
                           "tool parameters from the question and earlier results."), style="dim"))
        lines.append(cjk(_("Use a real endpoint with --model NAME --base-url URL "
                           "(key from OPENAI_API_KEY)."), style="dim"))
    return Panel(Group(*lines), title=title, title_align="left", expand=False)


def tools_source(toolset: Any) -> tuple[str, bool]:
    """Where the run's tools come from, and whether that is a warning (a found tools file not
    trusted: its code does not run)."""
    from agentdbg.paths import same_file
    from agentdbg.toolspec import bundled_tools_path

    trust, path = getattr(toolset, "trust", "named"), str(toolset.path)
    if trust == "recording":
        return _("the recording (recorded results; nothing runs)"), False
    if trust == "sample" or (trust == "named" and same_file(path, bundled_tools_path())):
        return _("agentdbg's sample tools"), False
    if path == "--mcp":
        return "--mcp", False
    if trust == "untrusted":
        return (_("{path}, not trusted: {skipped} (agentdbg trust {path})").format(
            path=path, skipped=tr(Join(tuple(toolset.skipped)))), True)
    shown = {"trusted": N_("{path} (trusted)"), "harmless": N_("{path} (fixtures only)")}
    return _(shown[trust]).format(path=path) if trust in shown else path, False


def render_turn_title(turn: int) -> RenderableType:
    from rich.rule import Rule

    return Rule(_("turn {turn}").format(turn=turn), align="left", style="dim")


def render_note(note: str | None) -> RenderableType:
    """A model's note (recorded in English) in the chosen language."""
    from agentdbg.providers.offline_note import read_note

    return cjk(Text.assemble((_("model note: "), "dim bold"), (safe(read_note(note or "")), "dim")))


def outcome_details(outcomes: list[ToolOutcome]) -> list[Text]:
    """The full errors the model did not see (``--debug``): one line each."""
    return [Text.assemble((f"{safe(o.name)} {safe(o.call_id)}: ", "bold"), safe(o.detail or o.note or ""))
            for o in outcomes if o.detail or o.note]


def no_text(message: Any) -> bool:
    """An assistant message with no text to show (content null, "", blanks or empty parts)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict)
                          and isinstance(p.get("text"), str))
    return not (isinstance(content, str) and content.strip())


def empty_answer(session: Session) -> bool:
    """The run completed, and the model's final answer has no text."""
    if session.stop_reason is not StopReason.COMPLETED or not session.messages:
        return False
    return no_text(session.messages[-1])


def empty_answer_finding(index: int, message: dict) -> Finding:
    """The warning on a final answer with no text (``index``: where it sits)."""
    from agentdbg.checker.findings import make

    content = message.get("content")
    shown = "null" if content is None else json.dumps(content, ensure_ascii=False)[:40]
    return make("empty-final-answer", index, Msg(
                "the model ended the run with an empty answer (content {shown}): the user gets "
                "nothing; check max_tokens, content filters and the last tool results",
                {"shown": shown}))


def answer_findings(session: Session) -> list[Finding]:
    """The run's own findings on its final answer (the view shows them on that message)."""
    if not empty_answer(session):
        return []
    return [empty_answer_finding(len(session.messages) - 1, session.messages[-1])]


def render_footer(session: Session, replayed: bool = False) -> list[RenderableType]:
    """The answer (or a plain "no answer"), the stop line and the usage line.

    An empty final answer is a warning, not a clean ``completed``. The stop and usage
    lines are printed with ``soft_wrap=True`` so an error message stays one copyable line
    whatever the terminal width.
    """
    answer = session.answer()
    empty = empty_answer(session)
    head: RenderableType
    if empty:
        head = cjk(_("No answer to show: the model's final message has no text."),
                   style="bold yellow")
    elif answer is not None:
        head = Panel(cjk(safe(answer)), title=_("answer"), title_align="left")
    else:
        head = cjk(_("No answer: the run did not complete."), style="bold red")
    reason = session.stop_reason.value if session.stop_reason else "running"
    stop = Text.assemble((_("stop: "), "bold"),
                         (stop_label(reason), "bold yellow" if empty else STOP_STYLE.get(reason, "bold red")),
                         f" — {safe(stop_text(session))}")
    if empty:
        stop.append(_(" (warning: the answer is empty)"), style="bold yellow")
    elapsed = _("{ms} ms").format(ms=f"{session.elapsed() * 1000:.0f}")
    return [head, stop, Text(usage_said(session, _("replayed in {ms}").format(ms=elapsed)
                                        if replayed else elapsed))]


def usage_said(session: Session, elapsed: str) -> str:
    """The usage line: every request sent, as the report counts them (also those whose
    replies a rewind, retry or drop cut from the history since, said apart), and the tool
    calls their replies asked for."""
    from agentdbg.messages import token_count

    sent = [*session.turns, *session.cut_turns]
    u = {key: sum(token_count(t.usage.get(key)) for t in sent)
         for key in ("prompt_tokens", "completion_tokens", "total_tokens")}
    values = {"prompt": u["prompt_tokens"], "completion": u["completion_tokens"],
              "total": u["total_tokens"], "n": len(sent), "calls": session.tool_calls_asked,
              "elapsed": elapsed, "cut": len(session.cut_turns)}
    if session.cut_turns:
        return _("usage: {prompt} prompt + {completion} completion = {total} tokens over {n} "
                 "request(s), the replies of {cut} of them cut from the history since (rewind, "
                 "retry, drop); {calls} tool call(s); {elapsed}").format(**values)
    return _("usage: {prompt} prompt + {completion} completion = {total} tokens over {n} "
             "request(s); {calls} tool call(s); {elapsed}").format(**values)


#: how a stop reason reads on screen (its value is what transcripts and --json carry)
STOP_LABELS = {"completed": N_("completed"), "max_turns": N_("max_turns"),
               "max_tool_calls": N_("max_tool_calls"), "repeated_call": N_("repeated_call"),
               "timeout": N_("timeout"), "cancelled": N_("cancelled"),
               "model_error": N_("model_error"), "invalid_request": N_("invalid_request"),
               "running": N_("running")}


def stop_label(reason: str) -> str:
    return _(STOP_LABELS[reason]) if reason in STOP_LABELS else reason


def stop_text(session: Session) -> str:
    """Why the run stopped, in the chosen language (a recorded detail: as recorded, or its
    translation when it is one of agentdbg's own sentences)."""
    msg = getattr(session, "stop_msg", "") or session.stop_detail
    return tr(msg) if not isinstance(msg, str) else _(msg) if msg else ""
