"""Pairing and ordering rules: which tool message answers which call, and the precedence rules."""

from __future__ import annotations

from collections.abc import Iterator

from agentdbg.checker.context import Ctx, _calls, _cid
from agentdbg.checker.findings import ERROR, WARNING, Finding, make

PAIRING_TEXT = ("An assistant message with 'tool_calls' must be followed by tool messages responding "
                "to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}")


# -- pairing / ordering --------------------------------------------------------------

def check_pairing(ctx: Ctx) -> Iterator[Finding]:
    msgs = ctx.messages
    seen: dict[str, int] = {}        # call id -> assistant index that introduced it
    claimed: set[int] = set()        # late results already explained by interleaved-message
    i, n = 0, len(msgs)
    while i < n:
        if msgs[i].get("role") == "tool":
            j = i
            while j < n and msgs[j].get("role") == "tool" and j not in claimed:
                j += 1
            if j > i:
                yield _orphan(i, j, msgs)
                i = j
            else:
                i += 1
            continue
        calls = _calls(msgs[i])
        if not calls:
            i += 1
            continue
        ids = [_cid(c) for c in calls]
        yield from _id_reuse(ctx, i, ids, seen)
        i, found = _block(ctx, i, ids, claimed)
        yield from found


def _orphan(i: int, j: int, msgs: list) -> Finding:
    tid = msgs[i].get("tool_call_id")
    extra = f" (and {j - i - 1} more after it)" if j - i > 1 else ""
    return make("orphan-tool-message", i,
                f"tool message{extra} is not a response to a preceding assistant message with "
                "'tool_calls'; append the assistant message that made the call before its result, "
                "or drop the orphan (a history trim may have cut the pair)",
                "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                f"message with 'tool_calls'. (param: messages.[{i}].role)", tid)


def _id_reuse(ctx: Ctx, i: int, ids: list, seen: dict) -> list[Finding]:
    found: list[Finding] = []
    counts: dict[str, int] = {}
    for c in ids:
        if c:
            counts[c] = counts.get(c, 0) + 1
    for cid, k in counts.items():
        if k > 1:
            j = [p for p, c in enumerate(ids) if c == cid][1]
            found.append(make("duplicate-tool-call-id", i,
                       f"id {cid!r} appears {k} times in this tool_calls array; give every call "
                       "its own id (an id-keyed map would collapse these calls)",
                       f"messages.{i}.content.{j}: tool_use ids must be unique", cid))
        elif cid in seen:
            sev = ERROR if ctx.profile.cross_turn_id_reuse_is_error else WARNING
            found.append(make("duplicate-tool-call-id", i,
                       f"id {cid!r} was already used by the tool_calls of message {seen[cid]}; "
                       "reused ids confuse pairing (OpenAI accepts it; Anthropic, MiniMax and "
                       "Zhipu reject it)",
                       f"invalid params, duplicate tool_call id: {cid}", cid, severity=sev))
    for cid in counts:
        seen.setdefault(cid, i)
    return found


def _block(ctx: Ctx, i: int, ids: list, claimed: set) -> tuple[int, list[Finding]]:
    """Check the tool block after assistant ``i``: (the index after the block, findings)."""
    msgs, n = ctx.messages, len(ctx.messages)
    remaining: dict[str, int] = {}
    for c in ids:
        if c:
            remaining[c] = remaining.get(c, 0) + 1
    idless = len(ids) - sum(remaining.values())
    first_answer: dict[str, int] = {}
    positional = ctx.on("results-out-of-order")
    order: list[tuple[int, int]] = []   # (position in tool_calls, tool message index)
    broken = False
    findings: list[Finding] = []
    j = i + 1
    while j < n and msgs[j].get("role") == "tool":
        tid = msgs[j].get("tool_call_id")
        if not isinstance(tid, str) or not tid:
            if idless:      # attributed to the id-less call (reported once as tool-call-missing-id)
                idless -= 1
            else:
                broken = True
                findings.append(make(
                    "tool-message-missing-id", j, "tool message has no tool_call_id; copy the "
                    "exact id of the call it answers",
                    "Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                    f"'tool_call_id'. (param: messages.[{j}].tool_call_id)"))
        elif tid not in remaining and tid not in first_answer:
            broken = True
            findings.append(make(
                "tool-call-id-mismatch", j, f"tool_call_id {tid!r} is not an id of the tool_calls "
                f"in message {i} ({', '.join(repr(c) for c in ids if c) or 'none'}); use the "
                "exact id the model returned",
                f"Invalid parameter: 'tool_call_id' of '{tid}' not found in 'tool_calls' of "
                "previous message.", tid))
        elif remaining[tid] > 0:
            remaining[tid] -= 1
            first_answer.setdefault(tid, j)
            if positional:
                order.append((_position(ids, tid, order), j))
        else:
            findings.append(make(
                "duplicate-tool-response", j, f"second tool message for {tid!r} (first at "
                f"[{first_answer[tid]}]); append each result once",
                f"Invalid parameter: Duplicate value for 'tool_call_id' of '{tid}', in "
                f"messages[{first_answer[tid]}] and messages[{j}].", tid))
        j += 1
    unanswered = [c for c, k in remaining.items() for _ in range(k)]
    if unanswered and not (ctx.in_progress and j == n and j == i + 1):
        findings.extend(_unanswered(ctx, i, j, unanswered, claimed, broken))
    if positional:
        findings.extend(_out_of_order(i, order, ids))
    if len(findings) > 1:
        findings.sort(key=lambda f: (f.index if f.index is not None else -1))
    return j, findings


def _position(ids: list, tid: str, order: list) -> int:
    used = {p for p, _ in order}
    return next(p for p, c in enumerate(ids) if c == tid and p not in used)


def _unanswered(ctx: Ctx, i: int, j: int, unanswered: list, claimed: set,
                broken: bool) -> list[Finding]:
    msgs, n = ctx.messages, len(ctx.messages)
    late: dict[str, int] = {}
    k = j
    while k < n and not _calls(msgs[k]):
        tid = msgs[k].get("tool_call_id") if msgs[k].get("role") == "tool" else None
        if tid in unanswered and tid not in late:
            late[tid] = k
        k += 1
    out = []
    if late:
        claimed.update(late.values())
        ids = ", ".join(late)
        out.append(make(
            "interleaved-message", j, f"this {msgs[j].get('role')} message sits between the "
            f"tool_calls of message {i} and their results ({ids}, at "
            f"{', '.join(f'[{v}]' for v in late.values())}); move it after the results",
            PAIRING_TEXT.format(ids=ids), next(iter(late))))
    if broken:
        return out  # precedence: the mismatch/missing id explains the unanswered call
    for cid in unanswered:
        if cid not in late:
            out.append(make(
                "missing-tool-response", i, f"call {cid!r} has no tool message after it; append "
                f"{{\"role\": \"tool\", \"tool_call_id\": \"{cid}\", ...}} before the next "
                "message (also when the tool failed or was cancelled)",
                PAIRING_TEXT.format(ids=cid) + f" (param: messages.[{i}].role)", cid))
    return out


def _out_of_order(i: int, order: list, ids: list) -> list[Finding]:
    for k in range(1, len(order)):
        if order[k][0] < order[k - 1][0]:
            expected = [c for c in ids if c]
            found = [ids[p] for p, _ in order]
            return [make("results-out-of-order", order[k][1],
                         "results are not in tool_calls order; templates that bind by position "
                         "pair them with the wrong call: append results in the order of the calls",
                         f"Expected toolResult blocks at messages.{i + 1}.content for the following "
                         f"Ids: {', '.join(expected)}, but found: {', '.join(found)}",
                         ids[order[k][0]])]
    return []
