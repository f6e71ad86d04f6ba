"""Renderables for a whole run: header, per-turn view, tool outcomes, footer."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from agentdbg.engine.executor import ToolOutcome
from agentdbg.engine.phases import StopReason
from agentdbg.render.safe import safe
from agentdbg.transcript.events import Action

STOP_STYLE = {"completed": "bold green"}


def message_meta(session) -> dict[int, str]:
    """Per message index: usage/latency for replies, duration/error for tool results."""
    meta: dict[int, str] = {}
    for t in session.turns:
        if t.message_index is not None:
            tokens = t.usage.get("total_tokens")
            est = " (estimated)" if t.usage.get("estimated") else ""
            meta[t.message_index] = (f"turn {t.turn} · {tokens} tokens{est} · "
                                     f"{t.latency_ms:.1f} ms · finish_reason={t.finish_reason}")
    for index, o in session.outcome_at.items():
        meta[index] = outcome_meta(o)
    for index, marks in getattr(session, "marks", {}).items():
        badge = " · ".join(f"[{m} by you]" for m in sorted(marks))
        meta[index] = f"{meta[index]} · {badge}" if index in meta else badge
    return meta


def outcome_meta(o: ToolOutcome) -> str:
    parts = [f"{o.duration_ms:.1f} ms"]
    if not o.ok:
        parts.append(f"error: {o.error_type}{' (retryable)' if o.retryable else ''}")
    if o.truncated_chars:
        parts.append(f"cut {o.truncated_chars} characters")
    if o.stubbed:
        parts.append("fixture (stub)")
    if o.injected:
        parts.append("injected fault")
    if o.cause and not o.ok:
        parts.append(f"raised {o.cause}")   # the developer's view; the model saw only the error
    if o.unchecked:
        parts.append("arguments not checked (over the work budget)")
    return " · ".join(parts)


def action_text(a: Action) -> str:
    """One of your recorded step-mode actions in words (the report's cards, replay's lines)."""
    kind = a.action
    index = a.index
    text = {
        "edit": f"you edited message [{index}]",
        "drop": f"you dropped message [{index}]",
        "rewind": f"you rewound to message [{index}] (cut {a.cut} message(s))",
        "retry": f"you asked the model again (retry): cut {a.cut} message(s) from [{index}]",
        "inject": (f"you injected the fault {a.fault} into call {a.tool_call_id}"
                   if a.pending else
                   f"you replaced the result [{index}] with the fault {a.fault}"),
        "fail": (f"you made {'every' if a.sticky else 'the next'} call of {a.tool} "
                 f"fail with {a.fault}"),
        "send": "you sent a request the checker had blocked",
    }.get(kind, f"you did {kind}")
    return text


def render_denied(o: ToolOutcome) -> RenderableType:
    """Why a side-effecting call was not run in a batch run, and how to let it run."""
    return Text(f"{safe(o.name)} ({safe(o.call_id)}) was not run: it needs approval (approval: "
                "always) and a batch run denies it; --approve all runs such calls, --step asks "
                "you for each", style="yellow")


def render_action(a: Action) -> RenderableType:
    """A recorded action, where a replay re-applies it."""
    return Text.assemble(("✎ ", "bold magenta"), (safe(action_text(a)), "magenta"),
                         (" (recorded; re-applied here)", "dim"))


def render_header(model_desc: str, toolset: Any, offline: bool,
                  title: str = "agentdbg run") -> RenderableType:
    lines = [Text.assemble(("model: ", "bold"), safe(model_desc)),
             Text.assemble(("tools: ", "bold"), safe(", ".join(toolset.names())))]
    source, warning = tools_source(toolset)
    if source:
        lines.append(Text.assemble(("from: ", "bold"), (safe(source), "yellow" if warning else "")))
    if offline:
        lines.append(Text("The offline model is not an LLM: a deterministic planner that fills "
                          "tool parameters from the question and earlier results.", style="dim"))
        lines.append(Text("Use a real endpoint with --model NAME --base-url URL "
                          "(key from OPENAI_API_KEY).", style="dim"))
    return Panel(Group(*lines), title=title, title_align="left", expand=False)


def tools_source(toolset: Any) -> tuple[str, bool]:
    """Where the run's tools come from, and whether that is a warning (a found tools file not
    trusted: its code does not run)."""
    from agentdbg.paths import same_file
    from agentdbg.toolspec import bundled_tools_path

    trust, path = getattr(toolset, "trust", "named"), str(toolset.path)
    if trust == "recording":
        return "the recording (recorded results; nothing runs)", False
    if trust == "sample" or (trust == "named" and same_file(path, bundled_tools_path())):
        return "agentdbg's sample tools", False
    if path == "--mcp":
        return "--mcp", False
    if trust == "untrusted":
        return (f"{path}, not trusted: {', '.join(toolset.skipped)} (agentdbg trust {path})",
                True)
    return {"trusted": f"{path} (trusted)", "harmless": f"{path} (fixtures only)"}.get(trust, path), False


def render_turn_title(turn: int) -> RenderableType:
    from rich.rule import Rule

    return Rule(f"turn {turn}", align="left", style="dim")


def render_note(note: str | None) -> RenderableType:
    return Text.assemble(("model note: ", "dim bold"), (safe(note or ""), "dim"))


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


def empty_answer(session) -> bool:
    """The run completed, and the model's final answer has no text."""
    if session.stop_reason is not StopReason.COMPLETED or not session.messages:
        return False
    return no_text(session.messages[-1])


def empty_answer_finding(index: int, message: dict) -> Any:
    """The warning on a final answer with no text (``index``: where it sits)."""
    from agentdbg.checker.findings import make

    content = message.get("content")
    shown = "null" if content is None else json.dumps(content, ensure_ascii=False)[:40]
    return make("empty-final-answer", index,
                f"the model ended the run with an empty answer (content {shown}): the user "
                "gets nothing; check max_tokens, content filters and the last tool results")


def answer_findings(session) -> list:
    """The run's own findings on its final answer (the view shows them on that message)."""
    if not empty_answer(session):
        return []
    return [empty_answer_finding(len(session.messages) - 1, session.messages[-1])]


def render_footer(session, replayed: bool = False) -> list[RenderableType]:
    """The answer (or a plain "no answer"), the stop line and the usage line.

    An empty final answer is a warning, not a clean ``completed``. The stop and usage
    lines are printed with ``soft_wrap=True`` so an error message stays one copyable line
    whatever the terminal width.
    """
    answer = session.answer()
    empty = empty_answer(session)
    head: RenderableType
    if empty:
        head = Text("No answer to show: the model's final message has no text.",
                    style="bold yellow")
    elif answer is not None:
        head = Panel(Text(safe(answer)), title="answer", title_align="left")
    else:
        head = Text("No answer: the run did not complete.", style="bold red")
    reason = session.stop_reason.value if session.stop_reason else "running"
    stop = Text.assemble(("stop: ", "bold"),
                         (reason, "bold yellow" if empty else STOP_STYLE.get(reason, "bold red")),
                         f" — {safe(session.stop_detail)}")
    if empty:
        stop.append(" (warning: the answer is empty)", style="bold yellow")
    u = session.usage
    elapsed = f"{session.elapsed() * 1000:.0f} ms"
    usage = Text(f"usage: {u['prompt_tokens']} prompt + {u['completion_tokens']} completion "
                 f"= {u['total_tokens']} tokens over {len(session.turns)} request(s); "
                 f"{session.tool_calls_asked} tool call(s); "
                 f"{'replayed in ' + elapsed if replayed else elapsed}")
    return [head, stop, usage]
