"""The offline model's final answer: what the results say, and what it could not do.

In the question's language (Chinese when it has Chinese characters, else English; the
sentences come from the message catalog in that language, whatever ``--lang`` shows), in
whole sentences: each result as a sentence about what was asked for ("北京：temperature 为
24，condition 为 晴。"), a comparison when several results of one tool share a number,
failures once each, the tools it could not call with the parameter it could not fill and
why, the actions it left alone. A greeting, or a question no tool fits, is answered in text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agentdbg.i18n import N_, Msg, in_language, tr
from agentdbg.providers.offline_compare import measured, number, verdict
from agentdbg.providers.offline_history import Conversation, Result, fingerprint, json_object
from agentdbg.providers.offline_labels import Labels, say
from agentdbg.providers.offline_plan import Plan
from agentdbg.providers.offline_report import cut_off, describe, subject_of, unreadable
from agentdbg.providers.offline_schema import ToolDef
from agentdbg.providers.offline_text import language_of

#: a sentence of the answer in the question's language: ``tell(template, **values)``
Tell = Callable[..., str]

_GREETING = re.compile(r"^\s*(?:(?:please\s+)?say\s+(?:hi|hello)|hi|hello|hey|hiya|howdy|greetings|"
                       r"good\s+(?:morning|afternoon|evening)|thanks|thank\s+you|你好|您好|嗨|哈喽|"
                       r"早上好|晚上好|谢谢)(?:\s+(?:there|again|all|everyone))?\s*[!！.。~～,，?？]*\s*$",
                       re.I)

HELD = {
    "negated": N_("I did not call {tool}: the question says not to {word}."),
    "how_to": N_("I did not call {tool}: the question asks how to {word}, not to {word} now; ask "
                 "me to {word} and I will."),
    "conditional": N_("I did not call {tool}: the question asks to {word} only under a condition, "
                      "which the offline model does not judge; ask again without the condition."),
    "failed_side_effect": N_("I did not retry {tool} after {word}: it has side effects and may "
                             "have gone through; check before trying again."),
    "not_asked": N_("I did not call {tool}: it changes something, and the question does not ask "
                    "to {word}."),
}


def greeting(question: str) -> bool:
    return bool(_GREETING.match(question[:200]))


def answer(conv: Conversation, plan: Plan, no_tools: bool, tools: list[ToolDef] | None = None) -> str:
    lang = language_of(conv.question)
    labels = Labels(tools)

    def tell(template: str, **values: Any) -> str:
        return say(lang, template, **values)

    lines: list[str] = [tell("{problem}.", problem=plan.problem)] if plan.problem else []
    results = conv.results
    if not results:
        if greeting(conv.question) and not plan.missing:
            lines.append(_hello([t.name for t in tools or []], tell))
        elif no_tools:
            lines.append(tell("I have no tools for this request, and as the offline model I can "
                             "only answer from tool results."))
        elif not plan.missing and not plan.held and not plan.problem:
            lines.append(tell("I could not match this question to any tool: no tool's required "
                             "parameters could be filled from the question."))
        elif plan.missing or plan.held:
            lines.append(tell("I could not call a tool for this question:"))
    else:
        broken = [r for r in results if unreadable(r)]
        good = [r for r in results if r.error is None and r not in broken]
        done = [r for r in good if _acted(r, labels)]
        found = [r for r in good if r not in done]
        winner = verdict(conv.question, found, lambda r: _named(r, labels, lang), lang)
        lines.extend(describe(r, lang, labels) for r in done)   # what was asked done, first
        if winner:        # the question compared: its answer first, then what each result says
            lines.append(winner)
        elif found:
            lines.append(tell("Here is what I found:"))
        elif not done and not broken:
            lines.append(tell("I could not get the information: every tool call failed."))
        lines.extend(describe(r, lang, labels) for r in found)
        lines.extend(cut_off(r, lang, _named(r, labels, lang), labels) for r in broken)
        if not winner:
            lines.extend(_comparisons(found, tell, labels, lang))
        lines.extend(tell("I could not get {subject} ({tool}): {error}.", subject=_named(r, labels, lang),
                          tool=r.name, error=_error_text(r.error, lang))
                     for r in _latest_failures(results) if r.error is not None)
    seen = set()
    for m in plan.missing:
        if (m.tool, m.param) not in seen:
            seen.add((m.tool, m.param))
            lines.append(tell("I could not call {tool}: required parameter {param} — {reason}.",
                             tool=m.tool, param=m.param, reason=m.reason))
    for h in plan.held:
        lines.append(tr(Msg(HELD[h.kind], {"tool": h.tool, "word": h.detail}), lang))
    return "\n".join(_sentence(line) for line in lines)


def _hello(tools: list[str] | None, tell: Tell) -> str:
    if not tools:
        return tell("Hello! I am agentdbg's offline model; there are no tools here, so I can only "
                   "say hello.")
    shown = ", ".join(tools[:8]) + (", …" if len(tools) > 8 else "")
    return tell("Hello! I am agentdbg's offline model: I answer by calling these tools: {tools}. Ask "
               "me something they can answer.", tools=shown)


def _sentence(line: str) -> str:
    """No doubled full stops where a quoted reason already ended with one."""
    return re.sub(r"([.。])[.。]$", r"\1", line)


def _latest_failures(results: list[Result]) -> list[Result]:
    """The latest failure of each call that never succeeded, once."""
    settled = {fingerprint(r.name, r.arguments) for r in results if r.error is None}
    out: list[Result] = []
    for r in reversed(results):
        fp = fingerprint(r.name, r.arguments)
        if r.error is not None and fp not in settled:
            settled.add(fp)
            out.insert(0, r)
    return out


def _acted(r: Result, labels: Labels) -> bool:
    """A result of a tool with side effects: an action that was done, not something found."""
    tool = labels.tools.get(r.name)
    return tool is not None and tool.side_effects


def _named(r: Result, labels: Labels, lang: str) -> str:
    """A result's subject in a comparison: ``上海``, ``order ORD-2026-001``."""
    args = json_object(r.arguments) or {}
    shown = [(k, v) for k, v in args.items() if isinstance(v, str) and v and len(v) <= 40]
    return labels.argument(r.name, *shown[0], lang)[1] if len(shown) == 1 else subject_of(r)


def _comparisons(good: list[Result], tell: Tell, labels: Labels, lang: str) -> list[str]:
    """For two or more results of one tool sharing a numeric field: which is highest, lowest."""
    lines = []
    by_tool: dict[str, list[Result]] = {}
    for r in good:
        if isinstance(r.value, dict):
            by_tool.setdefault(r.name, []).append(r)
    for rows in by_tool.values():
        if len(rows) < 2:
            continue
        first = rows[0].value
        numeric = [k for k, v in first.items()
                   if number(v) and all(number(r.value.get(k)) for r in rows)]
        for key in numeric:
            ranked = sorted(rows, key=lambda r: r.value[key])
            lo, hi = ranked[0], ranked[-1]
            name = labels.field(rows[0].name, key, lang)
            if lo.value[key] == hi.value[key]:
                lines.append(tell("{key} is the same for all of them ({value}).", key=name,
                                 value=measured(hi, key)))
                continue
            lines.append(tell("{key}: highest {hi} ({hv}), lowest {lo} ({lv}).", key=name,
                             hi=_named(hi, labels, lang), hv=measured(hi, key), lo=_named(lo, labels, lang),
                             lv=measured(lo, key)))
    return lines


def _error_text(error: Any, lang: str) -> str:
    """``type — message``; the type alone when the tool gave no message, or when the message
    is in another language than the answer (a sentence is in one language)."""
    message = error.get("message") if isinstance(error, dict) else None
    kind = str(error.get("type")) if isinstance(error, dict) else "error"
    if not isinstance(message, str) or not message.strip() or language_of(message) != lang:
        return kind
    return f"{kind} — {message}"


__all__ = ["answer", "greeting", "in_language", "language_of"]
