"""Protocol rules for the Anthropic Messages API (``POST /v1/messages``), per PROTOCOL.md.

``index`` is the position in ``messages`` (None for request-level rules); ``path`` the native
path (``messages[3].content[1]``, ``tools[2]``). Judged as the API judges: consecutive
same-role messages are combined first (not a defect), so "the next message" is the next turn;
a ``role: "system"`` message inside ``messages`` is accepted and skipped; ``redacted_thinking``,
server tool blocks and foreign ids matching ``^[a-zA-Z0-9_-]+$`` are valid.
"""

from __future__ import annotations

import re
from typing import Any

from agentdbg.checker.findings import WARNING, Finding
from agentdbg.checker.formats.anthropic_turns import Turn, turns_of
from agentdbg.checker.formats.common import (
    NAME_RE,
    SHARED_RULES,
    FormatCtx,
    kind_of,
    registry,
    schema_mismatch,
)
from agentdbg.checker.rule import ERROR, declare, rule
from agentdbg.checker.rules.pairing import first_misplaced
from agentdbg.i18n import Msg
from agentdbg.schemas import budgeted
from agentdbg.wire.anthropic_codec import SERVER_CALLS
from agentdbg.wire.codec import get as codec
from agentdbg.wire.common import canonical
from agentdbg.wire.pairing import Pairing as WirePairing
from agentdbg.wire.pairing import analyze as pair

DECLARED = declare(
    __name__,
    rule("tool-result-not-first", ERROR, "text or other blocks before the tool_result blocks of "
         "the user message that answers a tool_use turn", scope="anthropic"),
    rule("tool-use-id-format", ERROR, "a tool_use id not matching ^[a-zA-Z0-9_-]+$ (replayed "
         "from another provider)", scope="anthropic"),
    rule("tool-use-input-not-object", ERROR, "tool_use.input is not an object", scope="anthropic"),
    rule("thinking-block-missing", ERROR, "with thinking on, the last assistant tool-use turn "
         "does not start with its thinking block", ["anthropic-vertex"], scope="anthropic"),
    rule("empty-text-block", ERROR, "an empty text block, or a message with empty content "
         "that is not the final assistant message", scope="anthropic"),
    rule("tool-names-not-unique", ERROR, "two tools with one name", scope="anthropic"),
    rule("max-tokens-missing", ERROR, "a request body without max_tokens", scope="anthropic"),
)

ANTHROPIC_RULES = {**SHARED_RULES, **registry(
    "tool-result-not-first", "tool-use-id-format", "tool-use-input-not-object",
    "thinking-block-missing", "empty-text-block", "tool-names-not-unique", "max-tokens-missing")}

#: what this format's checker reports, and how: E error, W warning, P under the profiles named
REPORTS = {
    **dict.fromkeys(("missing-tool-response", "orphan-tool-message", "tool-call-id-mismatch",
                     "tool-message-missing-id", "tool-call-missing-id", "tool-call-malformed",
                     "invalid-tool-name", "content-wrong-type", "bad-tool-choice",
                     "duplicate-tool-call-id", "interleaved-message", "empty-messages",
                     "tool-definition-nested", "tool-result-not-first", "tool-use-id-format",
                     "tool-use-input-not-object", "empty-text-block", "tool-names-not-unique",
                     "max-tokens-missing"), "E"),
    **dict.fromkeys(("duplicate-tool-response", "unknown-tool", "arguments-schema-mismatch"), "W"),
    "results-out-of-order": "P `positional`",
    "thinking-block-missing": "P `anthropic-vertex`",
}

MISSING_TEXT = ("messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block "
                "in the next message.")
UNEXPECTED_TEXT = ("messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                   "blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` "
                   "block in the previous message.")
ID_RE_TEXT = "^[a-zA-Z0-9_-]+$"
NAME_ID = re.compile(ID_RE_TEXT)


def check_anthropic(body: dict | list, profile: str = "openai", *,
                    in_progress: bool = False) -> list[Finding]:
    """All findings for a Messages request body or a bare ``messages`` array."""
    return analyze_anthropic(body, profile, in_progress=in_progress)[0]


@budgeted   # the request's calls share one check's work budget
def analyze_anthropic(body: dict | list, profile: str = "openai", *,
                      in_progress: bool = False) -> tuple[list[Finding], WirePairing]:
    """Findings and the pairing they were judged on (the view draws the same pairing).
    ``in_progress``: the last assistant turn's calls are being executed (not missing)."""
    bare = isinstance(body, list)
    body = {"messages": body} if isinstance(body, list) else body if isinstance(body, dict) else {}
    raw = body.get("messages")
    messages = [m if isinstance(m, dict) else {} for m in raw] if isinstance(raw, list) else []
    ctx = FormatCtx(profile, ANTHROPIC_RULES)
    pairing = pair(codec("anthropic"), messages)
    turns = turns_of(messages)
    if not bare and "model" in body and "max_tokens" not in body:
        ctx.add("max-tokens-missing", None, "max_tokens", Msg("the Messages API requires max_tokens"),
                "max_tokens: Field required")
    if raw == []:  # langchain-ai/langchain#31657: "messages: at least one message is required"
        ctx.add("empty-messages", None, "messages", Msg(
                "messages is empty; the Messages API needs at least one message (a system prompt "
                "goes in 'system')"),
                "messages: at least one message is required")
    names = _tools(ctx, body)
    _tool_choice(ctx, body, names)
    _blocks(ctx, messages, names, body.get("tools"), pairing)
    _pairing(ctx, pairing, turns, in_progress)
    _thinking(ctx, body, pairing, turns)
    return ctx.sorted(), pairing


def _path(loc: tuple) -> str:
    return f"messages[{loc[0]}].content" + (f"[{loc[1]}]" if len(loc) > 1 else "")


def _api_path(loc: tuple) -> str:
    return f"messages.{loc[0]}" + (f".content.{loc[1]}" if len(loc) > 1 else "")


# -- per block --------------------------------------------------------------------------------

def _blocks(ctx: FormatCtx, messages: list[dict], names: dict | None, tools: Any,
            pairing: WirePairing) -> None:
    last = len(messages) - 1
    seen: dict[str, tuple] = {}
    for i, m in enumerate(messages):
        content = m.get("content")
        if content == "" or content == [] or "content" not in m:
            if not (i == last and m.get("role") == "assistant"):
                ctx.add("empty-text-block", i, f"messages[{i}].content", Msg(
                        "this {role} message has no content; only the final assistant message "
                        "may be empty", {"role": m.get("role")}),
                        f"messages.{i}.content: Field required" if "content" not in m else
                        f"messages.{i}: all messages must have non-empty content except for the "
                        "optional final assistant message")
            continue
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text") == "":
                ctx.add("empty-text-block", i, f"messages[{i}].content[{j}]", Msg(
                        "an empty text block; drop it (a proxy turns content \"\" into one)"),
                        "messages: text content blocks must be non-empty")
            elif kind == "tool_use":
                # an answered call is history: its tool and arguments are not judged against
                # today's tools (after a handoff they change legitimately), as in Chat Completions
                answered = pairing.answer_of.get((i, j)) is not None
                _tool_use(ctx, i, j, block, None if answered else names, seen)
            elif kind == "tool_result":
                _tool_result(ctx, i, j, block)


def _tool_use(ctx: FormatCtx, i: int, j: int, block: dict, names: dict | None,
              seen: dict[str, tuple]) -> None:
    where, path, cid = f"messages.{i}.content.{j}.tool_use", f"messages[{i}].content[{j}]", block.get("id")
    if not isinstance(cid, str) or not cid:
        ctx.add("tool-call-missing-id", i, path, Msg("this tool_use has no id; keep the id the "
                                                     "model sent and use it on the tool_result"),
                f"{where}.id: Field required")
    elif not NAME_ID.match(cid):
        ctx.add("tool-use-id-format", i, path, Msg(
                "id {id} is not {pattern} (replayed from another provider?); rewrite it "
                "consistently on the tool_use and its tool_result",
                {"id": repr(cid), "pattern": ID_RE_TEXT}),
                f"{where}.id: String should match pattern '{ID_RE_TEXT}'", cid)
    elif cid in seen:
        first = seen[cid]
        ctx.add("duplicate-tool-call-id", i, path, Msg(
                "id {id} is already used at {first}; give every call its own id",
                {"id": repr(cid), "first": _path(first)}),
                f"messages.{i}.content.{j}: `tool_use` ids must be unique", cid)
    else:
        seen[cid] = (i, j)
    name = block.get("name")
    if not isinstance(name, str) or not name:
        ctx.add("tool-call-malformed", i, path, Msg("this tool_use has no name"),
                f"{where}.name: String should have at least 1 character" if name == ""
                else f"{where}.name: Field required", cid)
        return
    if "input" not in block:
        ctx.add("tool-call-malformed", i, path, Msg("this tool_use has no input"),
                f"{where}.input: Field required", cid)
        return
    value = block["input"]
    if not isinstance(value, dict):
        ctx.add("tool-use-input-not-object", i, path, Msg(
                "input is {kind}; it must be the arguments object itself (json.loads a string "
                "first)", {"kind": Msg(kind_of(value))}),
                f"{where}.input: Input should be a valid dictionary", cid)
    elif names is not None and name not in names:
        ctx.add("unknown-tool", i, path, Msg(
                "calls {name}, which is not among the request's tools ({tools})",
                {"name": repr(name), "tools": ", ".join(names) or Msg("none")}), None, cid)
    elif names is not None:
        problems = schema_mismatch(names, name, canonical(value), value)
        if problems:
            ctx.add("arguments-schema-mismatch", i, path, Msg(
                    "input fails the {name} input_schema: {problems}; validate before executing",
                    {"name": repr(name), "problems": problems}), None, cid)


def _tool_result(ctx: FormatCtx, i: int, j: int, block: dict) -> None:
    path, tid = f"messages[{i}].content[{j}]", block.get("tool_use_id")
    if not isinstance(tid, str) or not tid:
        ctx.add("tool-message-missing-id", i, path, Msg(
                "this tool_result has no tool_use_id; copy the exact id of the tool_use it answers"),
                f"messages.{i}.content.{j}.tool_result.tool_use_id: Field required")
    content = block.get("content")
    if "content" in block and not isinstance(content, (str, list)):
        ctx.add("content-wrong-type", i, path, Msg(
                "content is {kind}; a tool result is a string or a list of blocks: json.dumps it",
                {"kind": Msg(kind_of(content))}),
                f"messages.{i}.content.{j}.tool_result.content: Input should be a valid list", tid)


# -- pairing ----------------------------------------------------------------------------------

def _pairing(ctx: FormatCtx, p: WirePairing, turns: list[Turn], in_progress: bool) -> None:
    claimed: set[tuple] = set()
    for t, turn in enumerate(turns):
        if turn.role == "assistant":
            nxt = turns[t + 1] if t + 1 < len(turns) else None
            _server_calls(ctx, p, turn, last=nxt is None)
            _answers(ctx, p, turns, t, nxt, in_progress, claimed)
    _bad_results(ctx, p, claimed)


def _calls_of(p: WirePairing, turn: Turn) -> list[tuple]:
    return [loc for loc, _ in turn.blocks if p.kinds.get(loc) == "tool_use"]


def _answers(ctx: FormatCtx, p: WirePairing, turns: list[Turn], t: int, nxt: Turn | None,
             in_progress: bool, claimed: set) -> None:
    calls = _calls_of(p, turns[t])
    if not calls:
        return
    if nxt is None and in_progress:
        return
    results = [(loc, b) for loc, b in (nxt.blocks if nxt else []) if b.get("type") == "tool_result"]
    broken = any(p.status.get(loc) in ("mismatch", "missing_id") for loc, _ in results)
    _not_first(ctx, p, turns[t], nxt)
    counts: dict[str, int] = {}
    for loc in calls:
        cid = p.calls[loc]
        if cid:
            counts[cid] = counts.get(cid, 0) + 1
    answered = {p.calls[loc] for loc in calls if p.answer_of.get(loc) is not None}
    open_ = [loc for loc in calls if p.calls[loc] and p.answer_of.get(loc) is None
             and not (counts[str(p.calls[loc])] > 1 and p.calls[loc] in answered)]
    if broken or not open_:
        _out_of_order(ctx, p, calls, results)
        return
    if _interleaved(ctx, p, turns, t, open_, claimed):
        return
    ids = ", ".join(p.calls[loc] or "" for loc in open_)
    for loc in open_:
        cid = p.calls[loc]
        ctx.add("missing-tool-response", loc[0], _path(loc), Msg(
                "call {id} has no tool_result in the next user message; add {{\"type\": "
                "\"tool_result\", \"tool_use_id\": \"{cid}\", ...}} first in that message (also "
                "when the tool failed: is_error)", {"id": repr(cid), "cid": cid}),
                MISSING_TEXT.format(i=loc[0], ids=ids), cid)


def _not_first(ctx: FormatCtx, p: WirePairing, turn: Turn, nxt: Turn | None) -> None:
    """Blocks before a tool_result in the answering turn: reported once, at the first one."""
    if nxt is None:
        return
    blocks = nxt.blocks
    first_other = next((k for k, (_, b) in enumerate(blocks) if b.get("type") != "tool_result"), None)
    if first_other is None:
        return
    late = [p.results.get(loc) for loc, b in blocks[first_other:]
            if b.get("type") == "tool_result" and p.status.get(loc) == "ok"]
    if not late:
        return
    loc, block = blocks[first_other]
    asst = turn.msgs[0]
    ctx.add("tool-result-not-first", loc[0], _path(loc), Msg(
            "this {kind} comes before the tool_result blocks ({ids}); put every tool_result first "
            "in the message and the text after them",
            {"kind": block.get("type"), "ids": ", ".join(map(str, late))}),
            MISSING_TEXT.format(i=asst, ids=", ".join(map(str, late))), late[0])


def _interleaved(ctx: FormatCtx, p: WirePairing, turns: list[Turn], t: int, open_: list,
                 claimed: set) -> bool:
    """Results that arrive turns later, after another message: reported at the interloper."""
    wanted = {p.calls[loc] for loc in open_}
    late: dict[str, tuple] = {}
    for turn in turns[t + 1:]:
        if turn.role == "assistant" and _calls_of(p, turn):
            break
        for loc, b in turn.blocks:
            tid = p.results.get(loc)
            if b.get("type") == "tool_result" and tid in wanted and tid \
                    and p.status.get(loc) in ("orphan", "mismatch"):
                late.setdefault(tid, loc)
    if not late or t + 1 >= len(turns):
        return False
    claimed.update(late.values())
    interloper = turns[t + 1].blocks[0][0] if turns[t + 1].blocks else (turns[t + 1].msgs[0],)
    ids = ", ".join(late)
    ctx.add("interleaved-message", interloper[0], _path(interloper), Msg(
            "this {role} message sits between the tool_use turn at messages[{i}] and its results "
            "({ids}, at {at}); move it after them",
            {"role": turns[t + 1].role, "i": turns[t].msgs[0], "ids": ids,
             "at": ", ".join(_path(v) for v in late.values())}),
            MISSING_TEXT.format(i=turns[t].msgs[0], ids=ids), next(iter(late)))
    return True


def _out_of_order(ctx: FormatCtx, p: WirePairing, calls: list, results: list) -> None:
    if not ctx.on("results-out-of-order"):
        return
    answered = [(calls.index(p.call_of[loc]), loc) for loc, _ in results
                if p.call_of.get(loc) in calls and p.status.get(loc) == "ok"]
    k = first_misplaced([pos for pos, _ in answered])
    if k is not None:
        loc = answered[k][1]
        expected = ", ".join(p.calls[c] or "" for c in calls)
        found = ", ".join(p.results[r] or "" for r, _ in results)
        ctx.add("results-out-of-order", loc[0], _path(loc), Msg(
                "tool_result blocks are not in tool_use order; Bedrock binds them by position: "
                "keep the calls' order"),
                f"Expected toolResult blocks at messages.{loc[0]}.content for the following "
                f"Ids: {expected}, but found: {found}", p.results[loc])


def _bad_results(ctx: FormatCtx, p: WirePairing, claimed: set) -> None:
    locs = sorted(loc for loc, st in p.status.items() if p.kinds.get(loc) == "tool_result")
    previous: tuple | None = None
    for loc in locs:
        status, tid = p.status[loc], p.results[loc]
        run = previous is not None and previous[0] == loc[0] and p.status.get(previous) == "orphan"
        previous = loc
        if loc in claimed or status in ("ok", "missing_id") or (status == "orphan" and run):
            continue
        text = UNEXPECTED_TEXT.format(i=loc[0], j=loc[1] if len(loc) > 1 else 0, id=tid)
        if status == "orphan":
            ctx.add("orphan-tool-message", loc[0], _path(loc), Msg(
                    "this tool_result answers {id} but the message before is not an assistant "
                    "message with that tool_use; keep the tool_use turn right before its results, "
                    "or drop the result", {"id": repr(tid)}), text, tid)
        elif status == "mismatch":
            ctx.add("tool-call-id-mismatch", loc[0], _path(loc), Msg(
                    "tool_use_id {id} is not an id of the tool_use blocks in messages[{i}]; use "
                    "the exact id the model returned", {"id": repr(tid), "i": p.block_of[loc][0]}),
                    text, tid)
        elif status == "duplicate":
            ctx.add("duplicate-tool-response", loc[0], _path(loc), Msg(
                    "second tool_result for {id}; send each result once", {"id": repr(tid)}),
                    None, tid, severity=WARNING)


def _server_calls(ctx: FormatCtx, p: WirePairing, turn: Turn, last: bool) -> None:
    has_client = bool(_calls_of(p, turn))
    for loc, b in turn.blocks:
        kind = b.get("type")
        if kind in SERVER_CALLS and p.answer_of.get(loc) is None and not last and not has_client:
            name = b.get("name") if kind == "server_tool_use" else "mcp"
            cid = p.calls.get(loc)
            ctx.add("missing-tool-response", loc[0], _path(loc), Msg(
                    "server tool call {id} has no {name}_tool_result after it in the same "
                    "assistant message; send the assistant content back unchanged",
                    {"id": repr(cid), "name": name}),
                    f"`{name}` tool use with id `{cid}` was found without a corresponding "
                    f"`{name}_tool_result` block", cid)
        elif isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result" \
                and p.status.get(loc) == "orphan":
            tid = p.results.get(loc)
            ctx.add("orphan-tool-message", loc[0], _path(loc), Msg(
                    "this {kind} answers {id}, but no server_tool_use before it in the assistant "
                    "message has that id", {"kind": kind, "id": repr(tid)}),
                    f"{_api_path(loc)}: unexpected `tool_use_id` found in `{kind}` blocks: "
                    f"{tid}. Each `{kind}` block must have a corresponding `server_tool_use` "
                    "block before it.", tid)


# -- thinking, tools --------------------------------------------------------------------------

def _thinking(ctx: FormatCtx, body: dict, p: WirePairing, turns: list[Turn]) -> None:
    thinking = body.get("thinking")
    if not ctx.on("thinking-block-missing") or not isinstance(thinking, dict) \
            or thinking.get("type") not in ("enabled", "adaptive"):
        return
    turn = next((t for t in reversed(turns) if t.role == "assistant"), None)
    if turn is None or not _calls_of(p, turn) or not turn.blocks:
        return
    loc, first = turn.blocks[0]
    if first.get("type") in ("thinking", "redacted_thinking"):
        return
    ctx.add("thinking-block-missing", loc[0], _path(loc), Msg(
            "thinking is on: the last assistant tool-use turn must start with the thinking block "
            "the model sent, unchanged (keep the whole content when you append the reply)"),
            f"{_api_path(loc)}.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must "
            "start with a thinking block (preceeding the lastmost set of `tool_use` and "
            "`tool_result` blocks).")


def _tools(ctx: FormatCtx, body: dict) -> dict | None:
    """Check ``tools``; returns name -> input_schema of the client tools (None: no tools sent)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    names: dict[str, Any] = {}
    seen: set[str] = set()
    for k, t in enumerate(tools):
        if not isinstance(t, dict):
            continue
        if isinstance(t.get("function"), dict) and "name" not in t:
            ctx.add("tool-definition-nested", None, f"tools[{k}]", Msg(
                    "this is an OpenAI tool; the Messages API wants {{\"name\", \"description\", "
                    "\"input_schema\"}}"),
                    f"tools.{k}.custom.name: Field required")
            continue
        name = t.get("name")
        if t.get("type") in (None, "custom") and not (isinstance(name, str) and NAME_RE.match(name)):
            ctx.add("invalid-tool-name", None, f"tools[{k}]", Msg(
                    "tools[{k}] name {name} does not match ^[a-zA-Z0-9_-]{{1,64}}$",
                    {"k": k, "name": repr(name)}), f"tools.{k}.custom.name: String should match "
                    "pattern '^[a-zA-Z0-9_-]{1,64}$'")
        if isinstance(name, str) and name in seen:
            ctx.add("tool-names-not-unique", None, f"tools[{k}]", Msg("two tools are named {name}",
                                                                      {"name": repr(name)}),
                    "tools: Tool names must be unique.")
        seen.add(str(name))
        if t.get("type") in (None, "custom") and isinstance(name, str):
            names[name] = t.get("input_schema")
        elif isinstance(name, str):
            names[name] = None               # server / Anthropic-defined tools: no schema to check
    return names


def _tool_choice(ctx: FormatCtx, body: dict, names: dict | None) -> None:
    if "tool_choice" not in body:
        return
    choice = body["tool_choice"]
    kind = choice.get("type") if isinstance(choice, dict) else None
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive") \
            and kind in ("any", "tool"):
        ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                "tool_choice {kind} forces a tool, which thinking does not allow; use {{\"type\": "
                "\"auto\"}} or turn thinking off", {"kind": repr(kind)}),
                "Thinking may not be enabled when tool_choice forces tool use.")
    elif not isinstance(choice, dict):
        ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                "tool_choice {choice} is the OpenAI form; the Messages API wants {{\"type\": "
                "\"auto\" | \"any\" | \"tool\" | \"none\"}}", {"choice": repr(choice)}),
                "tool_choice: Input should be a valid dictionary or object to extract fields from")
    elif kind not in ("auto", "any", "tool", "none"):
        ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                "tool_choice type {kind} is not auto, any, tool or none", {"kind": repr(kind)}),
                f"tool_choice: Input tag '{kind}' found using 'type' does not "
                "match any of the expected tags: 'auto', 'any', 'tool', 'none'")
    elif kind == "tool" and names is not None and not (isinstance(choice.get("name"), str)
                                                       and choice["name"] in names):
        ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                "tool_choice forces {name}, which is not among the tools",
                {"name": repr(choice.get("name"))}), None)

