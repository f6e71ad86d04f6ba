"""Judging what ``check`` reads, item by item, each in its own wire format.

A transcript is judged by the requests it recorded: each request is checked and a finding
is reported once, at the first request that shows it. ``agentdbg check`` and replay's
verdict (a recording that *sent* a request the API rejects) both use this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdbg.checker.api import check
from agentdbg.checker.inputs import CheckItem
from agentdbg.checker.request import MISSING


@dataclass
class Judged:
    item: CheckItem
    findings: list
    pairing: Any = None               # the format's pairing (None: chat, the view pairs it)
    notes: list[str] = field(default_factory=list)
    skipped_tools: bool = False


def judge_all(items: list[CheckItem], definitions: list | None, profile: str) -> list[Judged]:
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


