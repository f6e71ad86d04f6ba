"""Judging what ``check`` reads, item by item, each in its own wire format.

A transcript is judged by the requests it recorded: each request is checked and a finding
is reported once, at the first request that shows it. ``agentdbg check`` and replay's
verdict (a recording that *sent* a request the API rejects) both use this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentdbg.checker.api import checked
from agentdbg.checker.findings import Finding
from agentdbg.checker.inputs import CheckItem
from agentdbg.checker.pairing import Pairing
from agentdbg.checker.request import MISSING
from agentdbg.wire import codec as codecs


def _chat_native(item: CheckItem) -> bool:
    """The item is judged on its chat form (Chat Completions is its own chat form)."""
    return codecs.get(item.format).chat_native


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
    blocked = {k: item for k, item in enumerate(items) if item.recorded is not None}
    if blocked:   # requests the proxy blocked: their recorded findings, the rest judged around
        rest = judge_all([x for x in items if x.recorded is None], definitions, profile)
        others = iter(rest)
        results: list[Judged] = []
        said = {_key(f) for r in rest for f in r.findings}
        for k, item in enumerate(items):
            if k not in blocked:
                results.append(next(others))
                continue
            new = [f for f in item.recorded or [] if _key(f) not in said]   # each defect once
            said.update(_key(f) for f in new)
            results.append(Judged(item, new))
        return results
    for item in items:
        if _chat_native(item) and definitions is not None and item.request.tools is MISSING:
            item.request.tools = definitions
    full: dict[int, Judged] = {}

    def judged(k: int) -> Judged:
        if k not in full:
            full[k] = _judge(items[k], definitions, profile, items[k].prior)
        return full[k]

    shown: dict[int, list] = {}
    reported: set[tuple] = set()
    from agentdbg.checker.profiles import get_profile

    # a rule on the current turn only (Gemini's signatures) is not kept by appending: judge all
    chains = [[k] for k in range(len(items))] if get_profile(profile).signed_calls else _chains(items)
    for chain in chains:
        if items[chain[0]].turn is None:            # not a transcript: every item on its own
            shown[chain[0]] = judged(chain[0]).findings
            continue
        clean = _clean_ends(items[chain[-1]].request.messages)
        ends = [k for k in chain if k == chain[-1] or len(items[k].request.messages) not in clean]
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
            result = Judged(item, [], skipped_tools=_chat_native(item)
                            and item.request.tools is MISSING and _open_calls_chat(item))
        result.findings = sorted(shown.get(k, []), key=lambda f: -1 if f.index is None else f.index)
        for f in result.findings:
            f.line = item.line
        results.append(result)
    return results


def _key(f: Finding) -> tuple:
    return (f.rule, f.index, f.tool_call_id, f.path)


def _first_with(key: tuple, lo: int, hi: int, judged: Callable[[int], Judged]) -> tuple[int, Any]:
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
    if prev.turn is None or item.turn is None or not (_chat_native(prev) and _chat_native(item)):
        return False
    a, b = prev.request, item.request
    if not (isinstance(a.messages, list) and isinstance(b.messages, list)) \
            or len(a.messages) > len(b.messages):
        return False
    same = ("tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")
    if any(getattr(a, name) is not getattr(b, name) and getattr(a, name) != getattr(b, name)
           for name in same):
        return False
    # the list comparison is the same test as ``x is y or x == y`` for each pair, run in C:
    # a 1,000-turn chain costs 500,000 pointer comparisons, not as many Python steps
    return a.messages == b.messages[:len(a.messages)]


def _clean_ends(messages: list) -> set[int]:
    """The lengths ``n`` at which ``messages[:n]`` (an earlier request of the chain) ends
    cleanly: on a user message or a tool result, with no call open at ``n`` answered after
    it. Appending to such a prefix cannot move or repair a finding in it; a result arriving
    late can (it turns a missing response into an interleaved message), so a prefix a late
    result reaches past is judged in full; so is one ending inside a tool block that leaves a
    call of it unanswered (a mismatched result appended to the block explains the missing one
    away, PROTOCOL.md precedence 2). One pass over the chain's longest request."""
    candidates: list[int] = []
    cover = [0] * (len(messages) + 2)     # > 0: a call open at this length is answered later
    open_at: dict = {}                    # call id -> where its earliest still-open call is
    block: set = set()                    # the last tool block's calls it has not answered yet
    for i, m in enumerate(messages):
        if type(m) is not dict:
            break                         # nothing from here on is judged clean
        role, calls = m.get("role"), m.get("tool_calls")
        if role == "assistant" and calls is not None:
            if not isinstance(calls, list) or not all(
                    isinstance(c, dict) and isinstance(c.get("id"), str) for c in calls):
                break
            for c in calls:
                open_at.setdefault(c["id"], i)
            block = {c["id"] for c in calls}
        elif role == "tool":
            tid = m.get("tool_call_id")   # any JSON value: only a string can answer a call
            if isinstance(tid, str):
                block.discard(tid)
            c = open_at.pop(tid, None) if isinstance(tid, str) else None
            if c is not None:             # open at lengths c+1 .. i, answered at i
                cover[c + 1] += 1
                cover[i + 1] -= 1
        if role == "user" or (role == "tool" and not block):
            candidates.append(i + 1)
        if role != "tool" and not (role == "assistant" and calls is not None):
            block = set()
    clean, depth, n = set(), 0, 0
    for end in candidates:
        while n < end:
            n += 1
            depth += cover[n]
        if depth == 0:
            clean.add(end)
    return clean


def _judge(item: CheckItem, definitions: list | None, profile: str, prior: list | None) -> Judged:
    if _chat_native(item):
        findings, ctx = checked(item.request, profile)
        # a clean history (``checker.clean``) answered every call: no pairing is made for it
        return Judged(item, findings, skipped_tools=item.request.tools is MISSING
                      and not ctx.clean and _open_calls_chat(item, ctx.pairing))
    from agentdbg.checker.formats import analyze

    doc = _with_tools(item, definitions)
    findings, pairing = analyze(item.format, doc, profile, prior=prior or None)
    declared = isinstance(doc, dict) and isinstance(doc.get("tools"), list)
    open_calls = any(pairing.answer_of.get(loc) is None for loc in pairing.calls)
    return Judged(item, findings, pairing, list(pairing.notes),
                  skipped_tools=not declared and open_calls)


def _open_calls_chat(item: CheckItem, pairing: Pairing | None = None) -> bool:
    """A call of the item has no result (``pairing``: the item's, when computed already)."""
    from agentdbg.checker.pairing import analyze

    messages = item.request.messages
    pairing = pairing if pairing is not None else analyze(messages)
    return any((i, j) not in pairing.answer_of
               for i, m in enumerate(messages) if isinstance(m, dict)
               for j, _ in enumerate(m.get("tool_calls") or [] if isinstance(m.get("tool_calls"), list)
                                     else []))


def _with_tools(item: CheckItem, definitions: list | None) -> Any:
    """The native document, with ``--tools`` definitions when it sends none."""
    doc = item.native
    codec = codecs.get(item.format)
    key = codec.key
    if definitions is None or (isinstance(doc, dict) and "tools" in doc):
        return doc
    convert = codec.tool_from_chat
    body = dict(doc) if isinstance(doc, dict) else {key: doc}
    body["tools"] = [convert(t) for t in definitions]
    return body




def judge_native_request(fmt: str, body: Any, messages: list, tools: list | None, params: dict,
                         profile: str, prior: list | None = None) -> tuple[list, Any]:
    """A recorded ``responses`` / ``anthropic`` request judged as its API judges it (as
    ``check`` judges a transcript), each finding moved onto the chat message of ``messages``
    (the request's chat form) that holds the native item it concerns. ``body``: the native
    body as the proxy recorded it (None: rebuilt from the chat form).

    Returns the findings and the native body (a Responses body's items are ``prior`` for the
    requests after it)."""
    from agentdbg.checker.formats import analyze
    from agentdbg.checker.inputs import native_of
    from agentdbg.checker.request import CheckRequest

    request = CheckRequest(messages=messages, tools=tools if tools else MISSING,
                           tool_choice=params.get("tool_choice", MISSING),
                           parallel_tool_calls=params.get("parallel_tool_calls", MISSING))
    native = native_of(fmt, body, request, params)
    found = analyze(fmt, native, profile, prior=prior or None)[0]
    form = codecs.get(fmt).chat_form(native)
    import bisect

    offset = len(messages) - len(form.messages)   # messages a stored chain carried before
    starts: list[tuple[int, int]] = []            # (native index, chat index), both rising
    for i, loc in enumerate(form.locs):
        if loc and (not starts or loc[0] > starts[-1][0]):
            starts.append((loc[0], offset + i))
    keys = [k for k, _ in starts]
    for f in found:
        if isinstance(f.index, int) and starts:
            # the chat message holding the item: the last one that starts at or before it
            f.index = starts[max(0, bisect.bisect_right(keys, f.index) - 1)][1]
    return found, native
