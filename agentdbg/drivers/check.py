"""``agentdbg check``: findings as a view (or one JSON document) and an exit status.

Each document is judged in its own wire format (Chat Completions, the Responses API, the
Anthropic Messages API). A transcript is judged by the requests it recorded: each request is
checked, a finding is reported once (at the first request that shows it), and the model's
final reply is not a request, so a run that legitimately ends on a call is clean.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.checker import check, has_errors, summary
from agentdbg.checker.inputs import CheckItem, load_check_input
from agentdbg.checker.profiles import get_profile
from agentdbg.checker.request import MISSING
from agentdbg.errors import ExitStatus
from agentdbg.messages import utf8_json

SKIPPED = ("tool checks skipped: the input sends no tool definitions, so calls were not checked "
           "against names and schemas (pass --tools tools.yaml)")


@dataclass
class Judged:
    item: CheckItem
    findings: list
    pairing: Any = None               # the format's pairing (None: chat, the view pairs it)
    notes: list[str] = field(default_factory=list)
    skipped_tools: bool = False


def run_check(file: str, tools: Path | None, profile: str, *, json_out: bool, full: bool,
              console_factory, fmt: str | None = None) -> ExitStatus:
    get_profile(profile)
    items = load_check_input(file, fmt)
    definitions = None
    if tools is not None:
        from agentdbg.toolspec import load_tools

        definitions = load_tools(tools, resolve=False).openai_tools()
    results = _judge_all(items, definitions, profile)
    every = [f for r in results for f in r.findings]
    notes = [SKIPPED] if any(r.skipped_tools for r in results) else []
    if json_out:
        doc: dict[str, Any] = {"ok": not has_errors(every),
                               "findings": [_as_dict(r, f) for r in results for f in r.findings]}
        if notes:
            doc["notes"] = notes
        sys.stdout.write(utf8_json(doc) + "\n")
    else:
        _show(console_factory(), results, profile, full, notes)
    return ExitStatus.FINDINGS if has_errors(every) else ExitStatus.OK


def _as_dict(result: Judged, finding) -> dict:
    d = finding.to_dict()
    if result.item.turn is not None:
        d["request"] = result.item.turn
    return d


def _judge_all(items: list[CheckItem], definitions: list | None, profile: str) -> list[Judged]:
    results = []
    reported: set[tuple] = set()      # a transcript: each finding once, at its first request
    for item in items:
        judged = _judge(item, definitions, profile, item.prior)
        if item.turn is not None:
            fresh = []
            for f in judged.findings:
                key = (f.rule, f.index, f.tool_call_id, f.path)
                if key not in reported:
                    reported.add(key)
                    fresh.append(f)
            judged.findings = fresh
        for f in judged.findings:
            f.line = item.line
        results.append(judged)
    return results


def _judge(item: CheckItem, definitions: list | None, profile: str, prior: list | None) -> Judged:
    if item.format == "chat":
        if definitions is not None and item.request.tools is MISSING:
            item.request.tools = definitions
        return Judged(item, check(item.request, profile),
                      skipped_tools=item.request.tools is MISSING and _open_calls_chat(item))
    from agentdbg.checker.formats import analyze_anthropic, analyze_responses

    doc = _with_tools(item, definitions)
    if item.format == "responses":
        findings, pairing = analyze_responses(doc, profile, prior=prior or None)
    else:
        findings, pairing = analyze_anthropic(doc, profile)
    declared = isinstance(doc, dict) and isinstance(doc.get("tools"), list)
    open_calls = any(pairing.answer_of.get(loc) is None for loc in pairing.calls)
    return Judged(item, findings, pairing, list(pairing.notes),
                  skipped_tools=not declared and open_calls)


def _open_calls_chat(item: CheckItem) -> bool:
    from agentdbg.checker.pairing import analyze

    messages = item.request.messages
    pairing = analyze(messages)
    return any((i, j) not in pairing.answer_of
               for i, m in enumerate(messages) if isinstance(m, dict)
               for j, _ in enumerate(m.get("tool_calls") or [] if isinstance(m.get("tool_calls"), list)
                                     else []))


def _with_tools(item: CheckItem, definitions: list | None) -> Any:
    """The native document, with ``--tools`` definitions when it sends none."""
    doc = item.native
    key = "input" if item.format == "responses" else "messages"
    if definitions is None or (isinstance(doc, dict) and "tools" in doc):
        return doc
    from agentdbg.wire import anthropic, responses

    convert = responses.tool_from_chat if item.format == "responses" else anthropic.tool_from_chat
    body = dict(doc) if isinstance(doc, dict) else {key: doc}
    body["tools"] = [convert(t) for t in definitions]
    return body


# -- the view -----------------------------------------------------------------------------

def _show(console, results: list[Judged], profile: str, full: bool, notes: list[str]) -> None:
    from rich.rule import Rule
    from rich.text import Text

    transcript = bool(results) and results[0].item.turn is not None
    shown = 0
    for r in results:
        if transcript and not r.findings:
            continue
        if r.item.line is not None:
            console.print(Rule(f"line {r.item.line}: {summary(r.findings)}", align="left", style="dim"))
        elif transcript:
            console.print(Rule(f"request {r.item.turn}: {summary(r.findings)}", align="left",
                               style="dim"))
        console.print(_view(r, full))
        shown += 1
    if transcript and not shown:
        console.print(_final_view(results[-1], full))
    every = [f for r in results for f in r.findings]
    for note in notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True)
    style = "bold red" if has_errors(every) else "bold yellow" if every else "bold green"
    mark = "✗" if has_errors(every) else "!" if every else "✓"
    judged = f"{len(results)} recorded request(s), " if transcript else ""
    console.print(Text(f"{mark} {summary(every)} ({judged}profile {profile})", style=style))


def _view(r: Judged, full: bool):
    if r.item.format == "chat":
        from agentdbg.render.view import render_messages

        return render_messages(r.item.request.messages, findings=r.findings, full=full)
    from agentdbg.render.wire_view import render_wire

    key = "input" if r.item.format == "responses" else "messages"
    body = r.item.native if isinstance(r.item.native, dict) else {key: r.item.native}
    return render_wire(r.item.format, body, r.pairing, findings=r.findings, full=full,
                       notes=r.notes)


def _final_view(r: Judged, full: bool):
    """A clean transcript: how it ended (its last reply's calls, if any, shown as pending)."""
    if r.item.format != "chat":
        return _view(r, full)
    from agentdbg.messages import tool_calls_of
    from agentdbg.render.view import render_messages

    final = r.item.final or r.item.request.messages
    ends_on_call = bool(final) and isinstance(final[-1], dict) and final[-1].get("role") == \
        "assistant" and bool(tool_calls_of(final[-1]))
    return render_messages(final, full=full, in_progress=ends_on_call)
