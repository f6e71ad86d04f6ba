"""Tool-call shape rules: ids, type/function/name, arguments, tool names and schemas."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentdbg.cache import LruCache
from agentdbg.checker.context import NAME_RE, Ctx, _cid, _name_error, parse_arguments
from agentdbg.checker.findings import ERROR, Finding, make
from agentdbg.checker.profiles import quoted, severity
from agentdbg.checker.rule import WARNING, declare, rule
from agentdbg.i18n import N_, Msg, json_problem
from agentdbg.messages import canonical_json, json_kind, repeated_keys

DECLARED = declare(
    __name__,
    rule("tool-call-missing-id", ERROR, "tool_calls entry without id"),
    rule("tool-call-malformed", ERROR, "entry lacks type/function/name/arguments"),
    rule("empty-tool-calls", ERROR, "tool_calls: []"),
    rule("arguments-not-string", ERROR, "function.arguments is not a string"),
    rule("arguments-invalid-json", WARNING, "arguments do not parse as JSON (an error under the "
         "profiles that reject it: vllm, qwen)"),
    rule("arguments-not-object", WARNING, "arguments parse to a non-object (an error under vllm, "
         "qwen)"),
    rule("unknown-tool", WARNING, "function.name not among the request's tools"),
    rule("arguments-schema-mismatch", WARNING, "arguments fail the tool's JSON Schema"),
    rule("arguments-duplicate-key", WARNING, "arguments repeat a key: every JSON parser keeps the "
         "last value, so the tool gets it while a reader (or an approval) may have seen the first"),
    rule("invalid-tool-name", ERROR, "name does not match ^[a-zA-Z0-9_-]{1,64}$"),
)

# -- tool-call shape -------------------------------------------------------------------

def check_tool_calls(ctx: Ctx) -> Iterator[Finding]:
    for i, m in enumerate(ctx.messages):
        if m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            yield make("tool-call-malformed", i, Msg("tool_calls must be an array of calls"),
                       f"Invalid type for 'messages[{i}].tool_calls': expected an array.")
            continue
        if not calls:
            yield make("empty-tool-calls", i, Msg("tool_calls is an empty array; omit the key "
                                                  "when there are no calls"),
                       f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with "
                       "minimum length 1, but got an empty array instead.")
        for j, call in enumerate(calls):
            if not _clean_call(ctx, i, j, call):
                yield from _one_call(ctx, i, j, call)


def _answered(ctx: Ctx, i: int, j: int) -> bool:
    """Call ``j`` of message ``i`` has its result in the history: the app has executed it
    (or refused it) already, so whether its tool and arguments fit today's ``tools`` is
    history, which the API accepts (after a handoff, the tools change legitimately)."""
    return (i, j) in ctx.pairing.answer_of


def _clean_call(ctx: Ctx, i: int, j: int, call: Any) -> bool:
    """Fast path: a well-formed call with known, valid arguments has nothing to report."""
    if type(call) is dict and call.get("type") == "custom":
        return _custom_ok(call)
    if type(call) is not dict or call.get("type") != "function":
        return False
    cid, fn = call.get("id"), call.get("function")
    if type(cid) is not str or not cid or type(fn) is not dict:
        return False
    name, args = fn.get("name"), fn.get("arguments")
    if type(name) is not str or type(args) is not str or not NAME_RE.match(name):
        return False
    try:
        parsed = parse_arguments(args)
    except ValueError:
        return False
    if type(parsed) is not dict or repeated_keys(args, parsed):
        return False
    if not ctx.req.declares_tools() or _answered(ctx, i, j):
        return True
    schemas = ctx.req.tool_schemas()
    return name in schemas and not schema_problems(schemas[name], args, parsed,
                                                   ctx.schema_key(name, schemas[name]), name)


def _one_call(ctx: Ctx, i: int, j: int, call: Any) -> Iterator[Finding]:
    where = f"messages[{i}].tool_calls[{j}]"
    if isinstance(call, dict) and not _cid(call):
        yield make("tool-call-missing-id", i, Msg(
                   "tool_calls[{j}] has no id (a streaming accumulator keeps id only from the "
                   "first delta); keep the id and use it on the result", {"j": j}),
                   "Expected 'id' to be a string.")
    problem = _malformed(call, where)
    if problem:
        yield make("tool-call-malformed", i, Msg("tool_calls[{j}] {problem}",
                                                 {"j": j, "problem": Msg(problem[0])}),
                   problem[1], _cid(call))
        return
    if call.get("type") == "custom":
        return  # free-form input: no JSON arguments to check
    fn, cid = call["function"], _cid(call)
    name = fn["name"]
    name_ok = bool(NAME_RE.match(name))
    if not name_ok:
        yield make("invalid-tool-name", i, Msg("tool_calls[{j}] name {name} does not match "
                                               "^[a-zA-Z0-9_-]{{1,64}}$", {"j": j, "name": repr(name)}),
                   _name_error(f"{where}.function.name", name), cid)
    args = fn["arguments"]
    if not isinstance(args, str):
        kinds: dict[type, str] = {dict: "an object", list: "an array"}
        kind = kinds.get(type(args), f"a {type(args).__name__}")
        yield make("arguments-not-string", i, Msg("tool_calls[{j}] arguments is {kind}; send the "
                                                  "JSON text (json.dumps) instead",
                                                  {"j": j, "kind": Msg(kind)}),
                   f"Invalid type for '{where}.function.arguments': expected a string, but got "
                   f"{kind.split()[-1]} instead.", cid)
        return
    try:
        parsed = parse_arguments(args)
    except ValueError as exc:
        yield _broken_arguments(ctx, "arguments-invalid-json", i, cid, Msg(
            "tool_calls[{j}] arguments are not valid JSON ({error})", {"j": j, "error": json_problem(exc)}),
            str(exc))
        return
    if not isinstance(parsed, dict):
        kind = type(parsed).__name__
        yield _broken_arguments(ctx, "arguments-not-object", i, cid, Msg(
            "tool_calls[{j}] arguments parse to {kind}, not an object",
            {"j": j, "kind": Msg(json_kind(parsed))}),
                                f"'{kind}' object has no attribute 'items'")
        return
    repeated = repeated_keys(args, parsed)
    if repeated:
        yield make("arguments-duplicate-key", i, Msg(
                   "tool_calls[{j}] arguments repeat the key {key}{more}: JSON parsers keep the "
                   "last value, so the tool gets that one and the first is ignored (a reader or an "
                   "approval may have seen the first); send each key once",
                   {"j": j, "key": repr(repeated[0]), "more": _more(repeated)}), None, cid)
    if not name_ok or not ctx.req.declares_tools() or _answered(ctx, i, j):
        return
    schemas = ctx.req.tool_schemas()
    if name not in schemas:
        yield make("unknown-tool", i, Msg(
                   "tool_calls[{j}] calls {name}, which is not among the request's tools ({tools}); "
                   "the model hallucinated a name or the tool list changed",
                   {"j": j, "name": repr(name), "tools": ", ".join(schemas) or Msg("none")}),
                   None, cid)
        return
    problems = schema_problems(schemas[name], args, parsed, ctx.schema_key(name, schemas[name]), name)
    if problems:
        yield make("arguments-schema-mismatch", i, Msg(
                   "tool_calls[{j}] arguments fail the {name} schema: {problems}; validate before "
                   "executing", {"j": j, "name": repr(name), "problems": problems}), None, cid)


def _more(keys: tuple[str, ...]) -> Msg | str:
    return Msg(" (and {keys})", {"keys": ", ".join(map(repr, keys[1:4]))}) if len(keys) > 1 else ""


def _broken_arguments(ctx: Ctx, rule: str, i: int, cid: str | None, what: Msg,
                      vllm_text: str) -> Finding:
    """Arguments the tool cannot take. OpenAI accepts such a history (the loop answers the
    call with an error result); vLLM and Qwen parse the arguments into their chat template
    and reject it: the error text is vLLM's (Python's json error or a 500's)."""
    sev = severity(rule, ctx.profile)
    if sev == ERROR:
        fix = Msg("the {server} server rejects a history with such arguments: repair the "
                  "arguments or drop the call before sending", {"server": ctx.profile.name})
    else:
        fix = Msg("OpenAI accepts the history once the call is answered (e.g. with an invalid_json "
                  "error result); vLLM and Qwen reject it: repair or drop the call for them")
    return make(rule, i, Msg("{what}; {fix}", {"what": what, "fix": fix}), vllm_text, cid, severity=sev,
                api_source=quoted(ctx.profile, "vLLM"))


def _custom_ok(call: dict) -> bool:
    """A custom (free-form) tool call: ``{"type": "custom", "custom": {"name", "input"}}``."""
    custom = call.get("custom")
    return isinstance(custom, dict) and isinstance(custom.get("name"), str) and \
        bool(custom["name"]) and isinstance(call.get("id"), str) and bool(call["id"])


def _malformed(call: Any, where: str) -> tuple[str, str] | None:
    if not isinstance(call, dict):
        return N_("is not an object"), f"Invalid type for '{where}': expected an object."
    if call.get("type") == "custom":
        if _custom_ok(call) or not isinstance(call.get("id"), str):
            return None if _custom_ok(call) else (N_("is a custom call without an id"),
                                                  f"Missing required parameter: '{where}.id'.")
        return (N_("is a custom call without custom.name"),
                f"Missing required parameter: '{where}.custom.name'.")
    if call.get("type") != "function":
        return (N_("lacks type: \"function\""),
                f"Missing required parameter: '{where}.type'.")
    fn = call.get("function")
    if not isinstance(fn, dict):
        return N_("lacks a function object"), f"Missing required parameter: '{where}.function'."
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return (N_("has an empty or missing function.name"),
                f"Invalid '{where}.function.name': empty string. Expected a string with minimum "
                "length 1, but got an empty string instead.")
    if "arguments" not in fn:
        return (N_("lacks function.arguments"),
                f"Missing required parameter: '{where}.function.arguments'.")
    return None


#: ``json_kind``'s words, in the catalog: a finding says them in the chosen language
JSON_KINDS = (N_("a boolean"), N_("an object"), N_("an array"), N_("a string"), N_("an integer"),
              N_("a number"))

_VALIDATORS: LruCache[str, Any] = LruCache(2_000)                 # schema text -> validator
_RESULTS: LruCache[tuple[str, str], str] = LruCache(20_000)       # (schema, arguments) -> problems


def schema_problems(schema: Any, args_text: str, parsed: dict, key: str | None = None,
                    name: str = "?") -> str:
    """'' when ``parsed`` fits ``schema``; else the failing fields. Cached by schema+arguments.

    Nothing is retrieved (``$ref`` resolves only inside the schema) and patterns run on RE2
    (see ``agentdbg.schemas``); what cannot be checked is not claimed to fail, and a schema
    or arguments over the work budget are left unchecked and noted (``schemas.note_skip``)."""
    if not isinstance(schema, dict):
        return ""
    from agentdbg import schemas

    key = key or canonical_json(schema)
    compiled = _VALIDATORS.get(key)
    if compiled is None:
        compiled = schemas.checkable(schema)
        _VALIDATORS.put(key, compiled)
    validator, skipped = compiled
    if skipped is not None:
        schemas.note_skip(f"tool {name!r}", f"arguments left unchecked: {skipped}")
    if validator is None:
        return ""
    hit = _RESULTS.get((key, args_text))
    if hit is not None:
        return hit
    try:
        result = "; ".join(schemas.problems(validator, parsed))
    except schemas.Uncheckable:
        result = ""  # nested too deeply to follow: nothing is claimed
    except schemas.TooCostly as exc:
        schemas.note_skip(f"tool {name!r}", f"arguments left unchecked: {exc}")
        result = ""  # over the budget: nothing is claimed (and the result is not cached:
        return result  # it would hide the note from the next check)
    _RESULTS.put((key, args_text), result)
    return result
