"""Protocol rules for the OpenAI Responses API (``POST /v1/responses``), per PROTOCOL.md.

``index`` is the position in ``input`` (None for request-level rules); ``path`` the native
path (``input[5]``, ``tools[0]``). Pairing is by ``call_id`` wherever the items sit, as the
OpenAI API pairs them (under the ``deepseek`` profiles, whose Responses endpoint demands a call
and its output be adjacent, an item in between is ``interleaved-message``).

Continuations: with ``previous_response_id`` or ``conversation`` the server holds earlier items.
An output whose call is not in ``input`` is then not an orphan; with ``prior`` (the items a proxy
saw in that stored conversation) it is judged against them, without it the pairing carries a
note saying it cannot be known from this request alone.
"""

from __future__ import annotations

from typing import Any

from agentdbg.checker.context import _name_error
from agentdbg.checker.findings import WARNING, Finding
from agentdbg.checker.formats.common import (
    NAME_RE,
    SHARED_RULES,
    FormatCtx,
    kind_of,
    parsed_arguments,
    registry,
    schema_mismatch,
)
from agentdbg.checker.formats.responses_items import (
    EMPTY,
    check_item_ids,
    check_reasoning,
    check_reasoning_shape,
    model_output,
)
from agentdbg.checker.rules.request import _strict_problem
from agentdbg.i18n import N_, Msg, json_problem
from agentdbg.messages import json_kind, repeated_keys
from agentdbg.schemas import budgeted
from agentdbg.wire.codec import get as codec
from agentdbg.wire.pairing import Pairing as WirePairing
from agentdbg.wire.pairing import analyze as pair
from agentdbg.wire.responses import CALL_OUTPUT, OUTPUT_CALL

RESPONSES_RULES = {**SHARED_RULES, **registry(
    "reasoning-item-missing", "reasoning-without-following-item", "duplicate-item-id",
    "item-id-prefix", "item-not-persisted", "reasoning-item-malformed")}

#: what this format's checker reports, and how: E error, W warning, P under the profiles named
REPORTS = {
    **dict.fromkeys(("missing-tool-response", "orphan-tool-message", "tool-call-id-mismatch",
                     "tool-message-missing-id", "tool-call-missing-id", "tool-call-malformed",
                     "invalid-tool-name", "content-wrong-type", "bad-tool-choice",
                     "arguments-not-string", "strict-schema-invalid", "tool-definition-nested",
                     "reasoning-without-following-item", "duplicate-item-id", "item-id-prefix",
                     "item-not-persisted", "reasoning-item-malformed"), "E"),
    **dict.fromkeys(("duplicate-tool-response", "duplicate-tool-call-id", "unknown-tool",
                     "arguments-schema-mismatch", "arguments-duplicate-key"), "W"),
    **dict.fromkeys(("arguments-invalid-json", "arguments-not-object"), "W (E under `vllm`, `qwen`)"),
    "interleaved-message": "P `deepseek`, `deepseek-thinking`",
    "reasoning-item-missing": "E (W with `store: false`)",
}

KIND_WORD = {"function_call": "function", "custom_tool_call": "custom tool",
             "computer_call": "computer", "local_shell_call": "local shell",
             "shell_call": "shell", "apply_patch_call": "apply patch"}
ADJACENT_PROFILES = ("deepseek", "deepseek-thinking")


def check_responses(body: dict | list, profile: str = "openai", *, prior: list | None = None,
                    in_progress: bool = False) -> list[Finding]:
    """All findings for a Responses request body or a bare ``input`` array."""
    return analyze_responses(body, profile, prior=prior, in_progress=in_progress)[0]


@budgeted   # the request's calls share one check's work budget
def analyze_responses(body: dict | list, profile: str = "openai", *, prior: list | None = None,
                      in_progress: bool = False) -> tuple[list[Finding], WirePairing]:
    """Findings and the pairing they were judged on (the view draws the same pairing).

    ``prior``: output items of earlier responses in this conversation (as a proxy saw them).
    ``in_progress``: calls at the end of ``input`` are still being executed (not missing)."""
    body = {"input": body} if isinstance(body, list) else body if isinstance(body, dict) else {}
    items = _items(body.get("input"))
    ctx = FormatCtx(profile, RESPONSES_RULES)
    continued = _continued(body)
    pairing = pair(codec("responses"), items, continued=continued, prior=prior if continued else None)
    _tools(ctx, body)
    _tool_choice(ctx, body)
    schemas = _schemas(body)
    duplicated = check_item_ids(ctx, items, prior if continued else None)
    idless = [sum(cid is None for cid in pairing.calls.values())]   # precedence 1 of PROTOCOL.md
    for i, item in enumerate(items):
        # a call already answered is history: whether its tool and arguments fit today's tools
        # is not judged (after a handoff the tools change legitimately), as in Chat Completions
        answered = pairing.answer_of.get((i,)) is not None
        _item(ctx, i, item, None if answered else schemas, body, idless)
    _pairing(ctx, items, pairing, in_progress, duplicated)
    check_reasoning(ctx, items, body, prior)
    if ctx.profile.name in ADJACENT_PROFILES:
        _adjacency(ctx, items, pairing)
    return ctx.sorted(), pairing


def _items(value: Any) -> list[dict]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        return []
    return [x if isinstance(x, dict) else {} for x in value]


def _continued(body: dict) -> str | None:
    prev, conv = body.get("previous_response_id"), body.get("conversation")
    if isinstance(prev, str) and prev:
        return N_("the stored response {id} (previous_response_id)").format(id=prev)
    conv_id = conv.get("id") if isinstance(conv, dict) else conv
    if isinstance(conv_id, str) and conv_id:
        return N_("the stored conversation {id}").format(id=conv_id)
    return None


def _call_id_problem(i: int, item: dict) -> str | None:
    cid = item.get("call_id")
    if isinstance(cid, str) and cid:
        return None
    if cid == "":
        return EMPTY.format(p=f"input[{i}].call_id")
    return f"Missing required parameter: 'input[{i}].call_id'."


# -- per item -------------------------------------------------------------------------------

def _item(ctx: FormatCtx, i: int, item: dict, schemas: dict | None, body: dict,
          idless: list[int]) -> None:
    kind = item.get("type")       # data of any JSON type: only a string names a kind
    if isinstance(kind, str) and kind in CALL_OUTPUT:
        _call(ctx, i, item, kind, schemas)
    elif isinstance(kind, str) and kind in OUTPUT_CALL:
        _output(ctx, i, item, kind, idless)
    elif kind == "reasoning":
        check_reasoning_shape(ctx, i, item, body)


def _call(ctx: FormatCtx, i: int, item: dict, kind: str, schemas: dict | None) -> None:
    path, cid = f"input[{i}]", item.get("call_id")
    problem = _call_id_problem(i, item)
    if problem:
        ctx.add("tool-call-missing-id", i, path, Msg(
                "this {kind} has no call_id (a stream accumulator lost it?); keep the call_id the "
                "model sent and use it on the output", {"kind": kind}), problem)
    if kind not in ("function_call", "custom_tool_call"):
        return
    name = item.get("name")
    if not isinstance(name, str) or not name:
        api = (f"Missing required parameter: 'input[{i}].name'." if "name" not in item
               else EMPTY.format(p=f"input[{i}].name"))
        ctx.add("tool-call-malformed", i, path, Msg("this {kind} has no name", {"kind": kind}), api, cid)
        return
    if kind == "function_call":
        _arguments(ctx, i, item, name, schemas)


def _arguments(ctx: FormatCtx, i: int, item: dict, name: str, schemas: dict | None) -> None:
    path, cid = f"input[{i}]", item.get("call_id")
    if "arguments" not in item:
        ctx.add("tool-call-malformed", i, path, Msg("this function_call has no arguments"),
                f"Missing required parameter: 'input[{i}].arguments'.", cid)
        return
    args = item["arguments"]
    if not isinstance(args, str):
        kind = kind_of(args)
        ctx.add("arguments-not-string", i, path, Msg(
                "arguments is {kind}; send the JSON text (json.dumps) instead",
                {"kind": Msg(kind)}), f"Invalid type for 'input[{i}].arguments': expected a "
                f"string, but got {kind.split()[-1]} instead.", cid)
        return
    value, error = parsed_arguments(args)
    repeated = repeated_keys(args, value) if isinstance(value, dict) else ()
    if repeated:
        ctx.add("arguments-duplicate-key", i, path, Msg(
                "arguments repeat the key {key}: JSON parsers keep the last value, so the tool "
                "gets that one and the first is ignored (a reader or an approval may have seen "
                "the first); send each key once", {"key": repr(repeated[0])}), None, cid)
    if error is not None:
        ctx.add("arguments-invalid-json", i, path, Msg(
                "arguments are not valid JSON ({error}); a history with broken arguments poisons "
                "the session: repair or drop the call", {"error": json_problem(error)}), error, cid)
    elif not isinstance(value, dict):
        ctx.add("arguments-not-object", i, path, Msg(
                "arguments parse to {kind}, not an object", {"kind": Msg(json_kind(value))}),
                f"'{type(value).__name__}' object has no attribute 'items'", cid)
    elif schemas is not None and name not in schemas:
        ctx.add("unknown-tool", i, path, Msg(
                "calls {name}, which is not among the request's function tools ({tools})",
                {"name": repr(name), "tools": ", ".join(schemas) or Msg("none")}), None, cid)
    elif schemas is not None:
        problems = schema_mismatch(schemas, name, args, value)
        if problems:
            ctx.add("arguments-schema-mismatch", i, path, Msg(
                    "arguments fail the {name} schema: {problems}; validate before executing",
                    {"name": repr(name), "problems": problems}), None, cid)


def _output(ctx: FormatCtx, i: int, item: dict, kind: str, idless: list[int]) -> None:
    """``idless``: calls without a call_id not yet matched by an output without one (such an
    output is attributed to that call, reported once as tool-call-missing-id)."""
    path = f"input[{i}]"
    problem = _call_id_problem(i, item)
    if problem and idless[0] > 0:
        idless[0] -= 1
    elif problem:
        ctx.add("tool-message-missing-id", i, path, Msg(
                "this {kind} has no call_id; copy the exact call_id of the call it answers",
                {"kind": kind}), problem)
    if kind not in ("function_call_output", "custom_tool_call_output"):
        return
    output = item.get("output")
    if isinstance(output, list):
        bad = next((p.get("type") for p in output if isinstance(p, dict)
                    and p.get("type") in ("output_text", "text", "refusal")), None)
        if bad:
            ctx.add("content-wrong-type", i, path, Msg(
                    "the output array holds a {part} part; tool outputs take input types "
                    "(input_text, input_image, input_file)", {"part": repr(bad)}),
                    f"Invalid value: '{bad}'. Supported values are: 'input_text', 'input_image', "
                    "'input_file', and 'scoped_content'.", item.get("call_id"))
    elif not isinstance(output, str):
        what = kind_of(output) if "output" in item else N_("missing")
        api = (f"Missing required parameter: 'input[{i}].output'." if "output" not in item else
               f"Invalid type for 'input[{i}].output': expected one of a string or array of input "
               f"content items, but got {what.split()[-1]} instead.")
        ctx.add("content-wrong-type", i, path, Msg(
                "output is {what}; a tool output is a string (or an array of input parts): "
                "json.dumps it", {"what": Msg(what)}), api, item.get("call_id"))


# -- pairing --------------------------------------------------------------------------------

def _pairing(ctx: FormatCtx, items: list[dict], p: WirePairing, in_progress: bool,
             duplicated: set[str]) -> None:
    broken = {p.results[loc] for loc, st in p.status.items() if st == "mismatch"}
    answered = {p.results[loc] for loc, st in p.status.items() if st in ("ok", "duplicate")}
    counts: dict[str, int] = {}
    for loc, cid in p.calls.items():
        if cid:
            counts[cid] = counts.get(cid, 0) + 1
            if counts[cid] == 2 and items[loc[0]].get("id") not in duplicated:
                ctx.add("duplicate-tool-call-id", loc[0], f"input[{loc[0]}]", Msg(
                        "call_id {id} is used by two calls; outputs cannot tell them apart (the "
                        "Responses API's answer to this is not documented)", {"id": repr(cid)}),
                        None, cid, severity=WARNING)
    tail = _trailing_start(items) if in_progress else len(items)
    explained = _explained_by_idless(p)
    for loc, cid in p.calls.items():
        if cid is None or p.answer_of.get(loc) is not None or cid in broken or loc[0] >= tail \
                or loc in explained:
            continue
        if counts[cid] > 1 and cid in answered:
            continue
        kind = p.kinds[loc]
        ctx.add("missing-tool-response", loc[0], f"input[{loc[0]}]", Msg(
                "call {id} has no output; append {{\"type\": \"{output}\", \"call_id\": \"{cid}\", "
                "\"output\": ...}} (also when the tool failed or was cancelled)",
                {"id": repr(cid), "output": CALL_OUTPUT[kind], "cid": cid}),
                f"No tool output found for {KIND_WORD[kind]} call {cid}.", cid)
    _results(ctx, p)


def _explained_by_idless(p: WirePairing) -> set[tuple]:
    """Unanswered calls that an output without call_id (reported itself) probably answers:
    precedence 2 of PROTOCOL.md, one finding per defect. Outputs beyond the id-less calls'
    share are matched to the nearest unanswered call before them."""
    idless_calls = sum(cid is None for cid in p.calls.values())
    outputs = sorted(loc for loc, st in p.status.items() if st == "missing_id")[idless_calls:]
    open_calls = [loc for loc, cid in p.calls.items() if cid and p.answer_of.get(loc) is None]
    explained: set[tuple] = set()
    for out in outputs:
        before = [c for c in open_calls if c < out and c not in explained]
        if before:
            explained.add(before[-1])
    return explained


def _trailing_start(items: list[dict]) -> int:
    """Index of the first item of the trailing run of model output (calls being executed)."""
    k = len(items)
    while k > 0 and model_output(items[k - 1]):
        k -= 1
    return k


def _results(ctx: FormatCtx, p: WirePairing) -> None:
    locs = sorted(p.status)
    for n, loc in enumerate(locs):
        status, tid, kind = p.status[loc], p.results[loc], p.kinds[loc]
        word = KIND_WORD[OUTPUT_CALL[kind]]
        i = loc[0]
        if status == "orphan" and not (n and locs[n - 1] == (i - 1,) and p.status[locs[n - 1]] == "orphan"):
            run = 1
            while n + run < len(locs) and locs[n + run] == (i + run,) and p.status[locs[n + run]] == "orphan":
                run += 1
            said = {"kind": kind, "more": run - 1, "id": repr(tid)}
            ctx.add("orphan-tool-message", i, f"input[{i}]", Msg(
                    "this {kind} (and {more} more after it) answers call_id {id}, but no call in "
                    "this request has it; keep the call item (and its reasoning item) before the "
                    "output, or drop the output (a history trim may have cut the pair; continuing "
                    "with previous_response_id also works)", said) if run > 1 else Msg(
                    "this {kind} answers call_id {id}, but no call in this request has it; keep "
                    "the call item (and its reasoning item) before the output, or drop the output "
                    "(a history trim may have cut the pair; continuing with previous_response_id "
                    "also works)", said),
                    f"No tool call found for {word} call output with call_id {tid}.", tid)
        elif status == "mismatch":
            other = p.kinds[p.call_of[loc]]
            ctx.add("tool-call-id-mismatch", i, f"input[{i}]", Msg(
                    "this {kind} answers {id}, which is a {other} (answer it with a {output})",
                    {"kind": kind, "id": repr(tid), "other": other, "output": CALL_OUTPUT[other]}),
                    f"No tool call found for {word} call output with call_id {tid}.", tid)
        elif status == "duplicate":
            first = p.answer_of.get(p.call_of[loc])
            ctx.add("duplicate-tool-response", i, f"input[{i}]", Msg(
                    "second output for {id} (first at input[{first}]); append each output once",
                    {"id": repr(tid), "first": first[0] if first else "?"}),
                    None, tid, severity=WARNING)


def _adjacency(ctx: FormatCtx, items: list[dict], p: WirePairing) -> None:
    """DeepSeek's Responses endpoint: nothing but calls and outputs between a call and its output."""
    for call, result in p.answer_of.items():
        if result is None or result[0] < call[0]:
            continue
        k = next((k for k in range(call[0] + 1, result[0])
                  if items[k].get("type") not in (*CALL_OUTPUT, *OUTPUT_CALL)), None)
        if k is not None:
            cid = p.calls[call]
            ctx.add("interleaved-message", k, f"input[{k}]", Msg(
                    "this item sits between call {id} (input[{call}]) and its output "
                    "(input[{result}]); DeepSeek pairs only adjacent items: move it after the "
                    "outputs", {"id": repr(cid), "call": call[0], "result": result[0]}),
                    f"No tool output found for tool call {cid}", cid)
            return


# -- request level ---------------------------------------------------------------------------

def _tools(ctx: FormatCtx, body: dict) -> None:
    tools = body.get("tools")
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(t, dict):
            continue
        if isinstance(t.get("function"), dict) and "name" not in t:
            ctx.add("tool-definition-nested", None, f"tools[{k}]", Msg(
                    "this is a Chat Completions tool; the Responses API wants {{\"type\": "
                    "\"function\", \"name\", \"parameters\", ...}} with no nested \"function\""),
                    f"Missing required parameter: 'tools[{k}].name'.")
        elif t.get("type") == "function":
            name = t.get("name")
            if not isinstance(name, str) or not NAME_RE.match(name):
                ctx.add("invalid-tool-name", None, f"tools[{k}]", Msg(
                        "tools[{k}] name {name} does not match ^[a-zA-Z0-9_-]{{1,64}}$",
                        {"k": k, "name": repr(name)}), _name_error(f"tools[{k}].name", str(name)))
            if t.get("strict") is True:
                problem = _strict_problem(t.get("parameters"), ())
                if problem:
                    ctx.add("strict-schema-invalid", None, f"tools[{k}]", Msg(
                            "tools[{k}] {name} is strict but its schema breaks strict mode: "
                            "{problem}", {"k": k, "name": repr(name), "problem": problem[1]}),
                            f"Invalid schema for function '{name}': {problem[0]}")


def _schemas(body: dict) -> dict | None:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    out: dict[str, Any] = {}
    for t in tools:
        if isinstance(t, dict) and isinstance(t.get("tools"), list):    # a namespace (Codex)
            out.update({k: v for k, v in (_schemas({"tools": t["tools"]}) or {}).items()})
        elif isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str):
            out[t["name"]] = t.get("parameters")
        elif isinstance(t, dict) and isinstance(t.get("function"), dict):
            out[str(t["function"].get("name"))] = t["function"].get("parameters")
    return out


def _tool_choice(ctx: FormatCtx, body: dict) -> None:
    if "tool_choice" not in body or body["tool_choice"] in ("none", "auto", "required"):
        return
    choice, tools = body["tool_choice"], body.get("tools")
    declared = tools if isinstance(tools, list) else None
    # types and names are data of any JSON type: only strings can match
    types = {t["type"] for t in declared or [] if isinstance(t, dict) and isinstance(t.get("type"), str)}
    names = {t["name"] for t in declared or [] if isinstance(t, dict) and isinstance(t.get("name"), str)}
    kind = choice.get("type") if isinstance(choice, dict) else None
    if isinstance(choice, dict) and kind in ("function", "custom"):
        if "name" not in choice:
            ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                    "this is the Chat Completions form; the Responses API wants {{\"type\": "
                    "\"function\", \"name\": ...}}"),
                    "Missing required parameter: 'tool_choice.name'.")
        elif declared is not None and not (isinstance(choice["name"], str)
                                           and choice["name"] in names):
            ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                    "tool_choice forces {name}, which is not among the tools",
                    {"name": repr(choice["name"])}),
                    f"Tool choice '{choice['name']}' not found in 'tools' parameter.")
    elif isinstance(choice, dict) and kind == "allowed_tools":
        return
    elif isinstance(choice, dict) and isinstance(kind, str):
        if declared is not None and kind not in types:
            ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                    "tool_choice forces the {kind} tool, which is not among the tools",
                    {"kind": kind}), f"Tool choice '{kind}' not found in 'tools' "
                    "parameter.")
    else:
        ctx.add("bad-tool-choice", None, "tool_choice", Msg(
                "tool_choice {choice} is not none, auto, required or a tool object",
                {"choice": repr(choice)}), f"Invalid value: '{choice}'. Supported values "
                "are: 'none', 'auto', and 'required'.")
