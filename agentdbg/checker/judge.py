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
    """One ``Judged`` per item. A transcript's findings are each reported once, at the first
    request that shows it.

    A transcript's Chat Completions requests usually grow by appending: each is the last
    one plus the reply and its results. A finding in a request that ends cleanly (on a user
    message, or on the results of every call of its last assistant message) stays in every
    request that extends it: appending cannot move or repair what is already there. So a
    run of requests extending one another is checked in full only where it ends, and where
    a request ends otherwise; a finding seen there is traced back to the first request that
    has it by bisection. A 1,000-turn transcript costs a few full checks, not 1,000; the
    result is the same as checking every request (tests/test_judge_chains.py)."""
    for item in items:
        if item.format == "chat" and definitions is not None and item.request.tools is MISSING:
            item.request.tools = definitions
    full: dict[int, Judged] = {}

    def judged(k: int) -> Judged:
        if k not in full:
            full[k] = _judge(items[k], definitions, profile, items[k].prior)
        return full[k]

    shown: dict[int, list] = {}
    reported: set[tuple] = set()
    for chain in _chains(items):
        if items[chain[0]].turn is None:            # not a transcript: every item on its own
            shown[chain[0]] = judged(chain[0]).findings
            continue
        ends = [k for k in chain if k == chain[-1] or not _ends_cleanly(items[k].request.messages)]
        after = chain[0]                             # requests from here on are not yet judged
        for end in ends:
            shown.setdefault(end, [])
            for f in judged(end).findings:
                key = _key(f)
                if key in reported:
                    continue
                reported.add(key)
                first, finding = _first_with(key, after, end, judged)
                shown.setdefault(first, []).append(finding if finding is not None else f)
            after = end + 1
    results = []
    for k, item in enumerate(items):
        if k in full:
            result = full[k]
        else:   # extended cleanly by the next request: its findings were traced from there
            result = Judged(item, [], skipped_tools=item.format == "chat"
                            and item.request.tools is MISSING and _open_calls_chat(item))
        result.findings = sorted(shown.get(k, []), key=lambda f: -1 if f.index is None else f.index)
        for f in result.findings:
            f.line = item.line
        results.append(result)
    return results


def _key(f) -> tuple:
    return (f.rule, f.index, f.tool_call_id, f.path)


def _first_with(key: tuple, lo: int, hi: int, judged) -> tuple[int, Any]:
    """The first request in ``lo..hi`` whose findings hold ``key`` (``hi`` holds it; those
    before ``hi`` end cleanly, so once a request has it every later one does)."""
    found = None
    while lo < hi:
        mid = (lo + hi) // 2
        hit = next((f for f in judged(mid).findings if _key(f) == key), None)
        if hit is not None:
            hi, found = mid, hit
        else:
            lo = mid + 1
    return hi, found


def _chains(items: list[CheckItem]) -> list[list[int]]:
    """Consecutive transcript requests, each extending the one before by appending."""
    chains: list[list[int]] = []
    for k, item in enumerate(items):
        if chains and _extends(items[chains[-1][-1]], item):
            chains[-1].append(k)
        else:
            chains.append([k])
    return chains


def _extends(prev: CheckItem, item: CheckItem) -> bool:
    if prev.turn is None or item.turn is None or prev.format != "chat" or item.format != "chat":
        return False
    a, b = prev.request, item.request
    if not (isinstance(a.messages, list) and isinstance(b.messages, list)) \
            or len(a.messages) > len(b.messages):
        return False
    same = ("tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")
    if any(getattr(a, name) is not getattr(b, name) and getattr(a, name) != getattr(b, name)
           for name in same):
        return False
    return all(x is y or x == y for x, y in zip(a.messages, b.messages))


def _ends_cleanly(messages: list) -> bool:
    """Ends on a user message, or on tool results answering every call of the last
    assistant message (nothing appended after it can change a finding before it)."""
    if not messages or type(messages[-1]) is not dict:
        return False
    role = messages[-1].get("role")
    if role == "user":
        return True
    if role != "tool":
        return False
    answered = set()
    for m in reversed(messages):
        if type(m) is not dict:
            return False
        if m.get("role") == "tool":
            answered.add(m.get("tool_call_id"))
            continue
        calls = m.get("tool_calls")
        if m.get("role") != "assistant" or not isinstance(calls, list):
            return False
        return all(isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"] in answered
                   for c in calls)
    return False


def _judge(item: CheckItem, definitions: list | None, profile: str, prior: list | None) -> Judged:
    if item.format == "chat":
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


