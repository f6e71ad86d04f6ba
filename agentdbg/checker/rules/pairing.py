"""Pairing and ordering rules, read off the one pairing analysis (``checker.pairing``).

Precedence (one finding per defect): an id-less call is reported once and claims the
id-less results of its block; a mismatched or id-less result explains the calls it
leaves unanswered; results that arrive after an interloper report the interloper only;
a run of orphans is one finding; a duplicated id in one ``tool_calls`` array is reported
at the assistant, and its first result answers it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from agentdbg.checker.context import Ctx
from agentdbg.checker.findings import ERROR, WARNING, Finding, make
from agentdbg.checker.pairing import Block, Pairing, ResultState
from agentdbg.checker.profiles import quoted
from agentdbg.checker.rule import declare, rule
from agentdbg.i18n import N_, Msg

DECLARED = declare(
    __name__,
    rule("orphan-tool-message", ERROR, "tool message not inside a tool block"),
    rule("missing-tool-response", ERROR, "a tool_calls id with no tool message in its block"),
    rule("interleaved-message", ERROR, "a message sits between tool_calls and some of its results"),
    rule("tool-call-id-mismatch", ERROR, "tool_call_id not among the block's tool_calls ids"),
    rule("tool-message-missing-id", ERROR, "tool message without tool_call_id"),
    rule("duplicate-tool-response", ERROR, "second tool message for one id in a block"),
    rule("duplicate-tool-call-id", ERROR, "id repeated in one tool_calls array or reused later"),
    rule("results-out-of-order", ERROR, "results not in tool_calls order", ["positional"]),
)

PAIRING_TEXT = ("An assistant message with 'tool_calls' must be followed by tool messages responding "
                "to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}")


def check_pairing(ctx: Ctx) -> Iterator[Finding]:
    p = ctx.pairing
    for first, end in p.orphan_runs:
        yield _orphan(ctx, first, end)
    positional = ctx.on("results-out-of-order")
    for block in p.blocks:
        yield from _id_reuse(ctx, p, block)
        yield from _block(ctx, p, block)
        if positional:
            yield from _out_of_order(block)


def _orphan(ctx: Ctx, i: int, j: int) -> Finding:
    tid = ctx.messages[i].get("tool_call_id")
    text = N_("tool message (and {more} more after it) is not a response to a preceding assistant "
              "message with 'tool_calls'; append the assistant message that made the call before "
              "its result, or drop the orphan (a history trim may have cut the pair)") if j - i > 1 \
        else N_("tool message is not a response to a preceding assistant message with 'tool_calls'; "
                "append the assistant message that made the call before its result, or drop the "
                "orphan (a history trim may have cut the pair)")
    return make("orphan-tool-message", i, Msg(text, {"more": j - i - 1}),
                "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                f"message with 'tool_calls'. (param: messages.[{i}].role)", tid)


def _id_reuse(ctx: Ctx, p: Pairing, block: Block) -> Iterator[Finding]:
    i, ids = block.assistant, block.ids
    counts: dict[str, int] = {}
    for c in ids:
        if c:
            counts[c] = counts.get(c, 0) + 1
    anthropic = ctx.profile.api == "Anthropic"
    for cid, k in counts.items():
        if k > 1:
            j = [pos for pos, c in enumerate(ids) if c == cid][1]
            text = (N_("id {id} appears {k} times in this tool_calls array; give every call its "
                       "own id (an id-keyed map would collapse these calls)") if anthropic else
                    N_("id {id} appears {k} times in this tool_calls array; give every call its "
                       "own id (an id-keyed map would collapse these calls); OpenAI has no "
                       "recorded error for it, Anthropic rejects it"))
            yield make("duplicate-tool-call-id", i, Msg(text, {"id": repr(cid), "k": k}),
                       f"messages.{i}.content.{j}: tool_use ids must be unique", cid,
                       api_source=quoted(ctx.profile, "Anthropic"))
        elif p.first_use.get(cid, i) < i:
            sev = ERROR if ctx.profile.cross_turn_id_reuse_is_error else WARNING
            j = ids.index(cid)
            yield make("duplicate-tool-call-id", i, Msg(
                       "id {id} was already used by the tool_calls of message {first}; reused ids "
                       "confuse pairing (OpenAI has no recorded error for it; Anthropic, MiniMax "
                       "and Zhipu reject it)", {"id": repr(cid), "first": p.first_use[cid]}),
                       f"messages.{i}.content.{j}: tool_use ids must be unique" if anthropic else
                       f"invalid params, duplicate tool_call id: {cid}", cid, severity=sev,
                       api_source=None if anthropic else "MiniMax")


def _block(ctx: Ctx, p: Pairing, block: Block) -> Iterator[Finding]:
    i = block.assistant
    found: list[Finding] = []
    for j in range(i + 1, block.end):
        state = p.status.get((j,))
        tid = ctx.messages[j].get("tool_call_id")
        if state is ResultState.MISSING_ID:
            found.append(make(
                "tool-message-missing-id", j, Msg("tool message has no tool_call_id; copy the "
                                                  "exact id of the call it answers"),
                "Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                f"'tool_call_id'. (param: messages.[{j}].tool_call_id)"))
        elif state is ResultState.MISMATCH:
            ids = ", ".join(repr(c) for c in block.ids if c) or "none"
            found.append(make(
                "tool-call-id-mismatch", j, Msg(
                    "tool_call_id {tid} is not an id of the tool_calls in message {i} ({ids}); use "
                    "the exact id the model returned", {"tid": repr(tid), "i": i, "ids": ids}),
                f"Invalid parameter: 'tool_call_id' of '{tid}' not found in 'tool_calls' of "
                "previous message.", tid))
        elif state is ResultState.DUPLICATE:
            first = next(k for k in range(i + 1, j) if p.status.get((k,)) is ResultState.OK
                         and ctx.messages[k].get("tool_call_id") == tid)
            found.append(make(
                "duplicate-tool-response", j, Msg(
                    "second tool message for {tid} (first at [{first}]); append each result once",
                    {"tid": repr(tid), "first": first}),
                f"Invalid parameter: Duplicate value for 'tool_call_id' of '{tid}', in "
                f"messages[{first}] and messages[{j}].", tid))
    if block.late and block.interloper is not None:
        ids = ", ".join(block.late)
        found.append(make(
            "interleaved-message", block.interloper, Msg(
                "this {role} message sits between the tool_calls of message {i} and their results "
                "({ids}, at {at}); move it after the results",
                {"role": ctx.messages[block.interloper].get("role"), "i": i, "ids": ids,
                 "at": ", ".join(f"[{v}]" for v in block.late.values())}),
            PAIRING_TEXT.format(ids=ids), next(iter(block.late))))
    if not block.broken:  # a mismatched or id-less result explains the unanswered call
        for cid in block.unanswered if not block.pending else ():
            found.append(make(
                "missing-tool-response", i, Msg(
                    "call {id} has no tool message after it; append {{\"role\": \"tool\", "
                    "\"tool_call_id\": \"{cid}\", ...}} before the next message (also when the "
                    "tool failed or was cancelled)", {"id": repr(cid), "cid": cid}),
                PAIRING_TEXT.format(ids=cid) + f" (param: messages.[{i}].role)", cid))
    found.sort(key=lambda f: (f.index if f.index is not None else -1))
    yield from found


def first_misplaced(positions: list[int]) -> int | None:
    """PROTOCOL.md rule 7: when results are not in call order, the first position whose result
    does not answer the call at that position (calls without a result left out)."""
    if all(a < b for a, b in itertools.pairwise(positions)):
        return None
    return next(k for k, (pos, want) in enumerate(zip(positions, sorted(positions))) if pos != want)


def _out_of_order(block: Block) -> Iterator[Finding]:
    order, ids, i = block.order, block.ids, block.assistant
    k = first_misplaced([pos for pos, _ in order])
    if k is not None:
        expected = [c for c in ids if c]
        found = [ids[pos] for pos, _ in order]
        yield make("results-out-of-order", order[k][1],
                   Msg("results are not in tool_calls order; templates that bind by position "
                       "pair them with the wrong call: append results in the order of the calls"),
                   f"Expected toolResult blocks at messages.{i + 1}.content for the following "
                   f"Ids: {', '.join(c for c in expected if c)}, but found: "
                   f"{', '.join(c for c in found if c)}",
                   ids[order[k][0]], api_source="Bedrock")
