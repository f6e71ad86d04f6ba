"""Responses API rules about items as such: ids (prefix, duplicates), reasoning items (shape,
store: false, the item that must follow, the item a call must keep), per PROTOCOL.md."""

from __future__ import annotations

from agentdbg.checker.findings import ERROR, WARNING
from agentdbg.checker.formats.common import FormatCtx, kind_of
from agentdbg.checker.rule import declare, rule
from agentdbg.i18n import Msg
from agentdbg.wire.common import OUTPUT_END
from agentdbg.wire.responses import OUTPUT_CALL

DECLARED = declare(
    __name__,
    rule("reasoning-item-missing", ERROR, "a function_call sent with its server id (fc_…) but "
         "without the reasoning item that preceded it in the model's output", scope="responses"),
    rule("reasoning-without-following-item", ERROR, "a reasoning item not followed by the item "
         "it produced (a call or an assistant message)", scope="responses"),
    rule("duplicate-item-id", ERROR, "two input items with one id, or an item the continued "
         "response already holds", scope="responses"),
    rule("item-id-prefix", ERROR, "an item id without its type's prefix (fc, rs, msg, ctc)",
         scope="responses"),
    rule("item-not-persisted", ERROR, "store: false and a reasoning item sent by id only, "
         "without encrypted_content (404)", scope="responses"),
    rule("reasoning-item-malformed", ERROR, "a reasoning item without summary or id, or with a "
         "non-string encrypted_content", scope="responses"),
)

ID_PREFIX = {"message": "msg", "function_call": "fc", "function_call_output": "fc",
             "reasoning": "rs", "custom_tool_call": "ctc"}
EMPTY = ("Invalid '{p}': empty string. Expected a string with minimum length 1, but got an empty "
         "string instead.")


def model_output(item: dict) -> bool:
    kind = item.get("type")
    if kind in (None, "message"):
        return item.get("role") == "assistant"
    return isinstance(kind, str) and kind not in OUTPUT_CALL and not kind.endswith("_output") \
        and kind not in ("item_reference", "compaction", "compaction_trigger", "additional_tools",
                         "mcp_approval_response", OUTPUT_END)


def check_reasoning_shape(ctx: FormatCtx, i: int, item: dict, body: dict) -> None:
    path, rid, enc = f"input[{i}]", item.get("id"), item.get("encrypted_content")
    api = None
    if "summary" not in item:
        api = f"Missing required parameter: 'input[{i}].summary'."
    elif not isinstance(rid, str) or not rid:
        api = (EMPTY.format(p=f"input[{i}].id") if rid == "" else
               f"Missing required parameter: 'input[{i}].id'.")
    elif enc is not None and not isinstance(enc, str):
        api = (f"Invalid type for 'input[{i}].encrypted_content': expected a string, but got "
               f"{kind_of(enc).split()[-1]} instead.")
    if api:
        ctx.add("reasoning-item-malformed", i, path, Msg(
                "a reasoning item sent back needs its id, its summary (may be []) and, if any, its "
                "encrypted_content string, unchanged"), api)
    elif body.get("store") is False and not isinstance(enc, str):
        ctx.add("item-not-persisted", i, path, Msg(
                "store is false, so {id} was never stored and cannot be sent by id: request "
                "include=['reasoning.encrypted_content'] and send the item with its "
                "encrypted_content, or drop it", {"id": rid}),
                f"Item with id '{rid}' not found. Items are not persisted when `store` is set to "
                "false. Try again with `store` set to true, or remove this item from your input.")


def check_item_ids(ctx: FormatCtx, items: list[dict], stored: list | None) -> set[str]:
    """item-id-prefix and duplicate-item-id; returns the ids reported as duplicates."""
    seen: dict[str, int] = {}
    held = {x["id"] for x in stored or [] if isinstance(x, dict) and isinstance(x.get("id"), str)}
    duplicated: set[str] = set()
    for i, item in enumerate(items):
        iid = item.get("id")
        if not isinstance(iid, str) or not iid:
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        prefix = ID_PREFIX.get(kind) if isinstance(kind, str) else None
        if prefix and not iid.startswith(prefix):
            ctx.add("item-id-prefix", i, f"input[{i}]", Msg(
                    "id {id} is not a {kind} id (they begin with {prefix}); ids from another "
                    "provider cannot be replayed: drop the id",
                    {"id": repr(iid), "kind": kind, "prefix": repr(prefix)}),
                    f"Invalid 'input[{i}].id': '{iid}'. Expected an ID that begins "
                    f"with '{prefix}'.")
        where = (f"input[{seen[iid]}]" if iid in seen else Msg("the stored response this request "
                                                                 "continues") if iid in held else None)
        if where:
            duplicated.add(iid)
            ctx.add("duplicate-item-id", i, f"input[{i}]", Msg(
                    "item {id} is already in {where}; with previous_response_id send only the new "
                    "items (the outputs)", {"id": iid, "where": where}),
                    f"Duplicate item found with id {iid}. Remove duplicate items from your input "
                    "and try again.")
        seen.setdefault(iid, i)
    return duplicated


def check_reasoning(ctx: FormatCtx, items: list[dict], body: dict, prior: list | None) -> None:
    known = _reasoning_of(prior or [])
    evidence = _reasons(body)
    seen_reasoning = False
    for start, end in _runs(items):
        run = items[start:end]
        kinds = [x.get("type") for x in run]
        if "reasoning" in kinds:
            seen_reasoning = True
            _following(ctx, items, start, end)
            continue
        first = next((start + k for k, x in enumerate(run) if _server_call(x)), None)
        if first is None:
            continue
        fc = items[first]
        if fc["id"] in known and known[fc["id"]] is None:
            continue      # the model's own output, sent back as it came: it had no reasoning item
        rs = known.get(fc["id"])
        if rs is None and not (evidence or seen_reasoning):
            continue
        sev = ERROR if body.get("store") is not False else WARNING
        ctx.add("reasoning-item-missing", first, f"input[{first}]", Msg(
                "{id} came after reasoning item {rs} in the model's output; send that reasoning "
                "item back right before the call (append response.output whole), or drop the fc_ "
                "id", {"id": fc["id"], "rs": rs or "(rs_…)"}),
                f"Item '{fc['id']}' of type '{fc.get('type')}' was provided without its required "
                f"'reasoning' item: '{rs or 'rs_…'}'.", fc.get("call_id"), severity=sev)


def _runs(items: list[dict]) -> list[tuple[int, int]]:
    """Maximal runs of model-output items (one response's output each, in a history)."""
    runs, start = [], None
    for i, item in enumerate(items + [{"type": "function_call_output"}]):
        if model_output(item) and start is None:
            start = i
        elif not model_output(item) and start is not None:
            runs.append((start, i))
            start = None
    return runs


def _server_call(item: dict) -> bool:
    iid = item.get("id")
    return (item.get("type") in ("function_call", "custom_tool_call") and isinstance(iid, str)
            and iid.startswith(("fc_", "ctc_")))


def _reasons(body: dict) -> bool:
    """Does the request show a reasoning model is answering it?"""
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    include = body.get("include")
    return (isinstance(effort, str) and effort != "none") or (
        isinstance(include, list) and "reasoning.encrypted_content" in include)


def _reasoning_of(prior: list) -> dict[str, str | None]:
    """fc id -> the reasoning id that preceded it in the output items seen earlier (None: the
    model's output had none before it)."""
    out: dict[str, str | None] = {}
    last: str | None = None
    for item in prior:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "reasoning" and isinstance(item.get("id"), str):
            last = item["id"]
        elif _server_call(item):
            out[item["id"]] = last if last else out.get(item["id"])
        elif not model_output(item):
            last = None
    return out


def _following(ctx: FormatCtx, items: list[dict], start: int, end: int) -> None:
    for i in range(start, end):
        if items[i].get("type") != "reasoning" or (i > start and items[i - 1].get("type") == "reasoning"):
            continue
        j = i
        while j < end and items[j].get("type") == "reasoning":
            j += 1
        if j == end:
            rid = items[i].get("id")
            ctx.add("reasoning-without-following-item", i, f"input[{i}]", Msg(
                    "reasoning item {id} is not followed by the call or message it produced; send "
                    "the whole output of that response, or drop the reasoning item too",
                    {"id": rid}),
                    f"Item '{rid}' of type 'reasoning' was provided without its required "
                    "following item.")


