"""The protocol rules. Each check is a small function ``(ctx) -> findings``.

API error texts are the verbatim ones collected in shared PROTOCOL.md (OpenAI's
older ``messages.[N]`` style where that is what was quoted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from agentdbg.checker.model import ERROR, WARNING, Finding, Profile, active, make
from agentdbg.checker.request import MISSING, CheckRequest
from agentdbg.messages import canonical_json

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_TOOLS = 128
PAIRING_TEXT = ("An assistant message with 'tool_calls' must be followed by tool messages responding "
                "to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}")


class Ctx:
    def __init__(self, request: CheckRequest, profile: Profile, in_progress: bool = False):
        self.req = request
        self.messages: list = request.messages
        self.profile = profile
        self.in_progress = in_progress  # a trailing unanswered tool-call turn is pending, not wrong
        self._on: dict[str, bool] = {}
        self.schema_keys: dict[str, str] = {}  # tool name -> canonical schema text (cache key)

    def on(self, rule: str) -> bool:
        hit = self._on.get(rule)
        if hit is None:
            hit = self._on[rule] = active(rule, self.profile)
        return hit

    def schema_key(self, name: str, schema: Any) -> str:
        key = self.schema_keys.get(name)
        if key is None:
            key = self.schema_keys[name] = canonical_json(schema)
        return key


_PARSED: dict[str, Any] = {}   # arguments text -> parsed value or the ValueError (bounded)


def parse_arguments(text: str) -> Any:
    """``json.loads`` with a cache: long histories repeat the same arguments often."""
    hit = _PARSED.get(text)
    if hit is None:
        try:
            hit = json.loads(text)
        except ValueError as exc:
            hit = exc
        if len(_PARSED) < 200_000:
            _PARSED[text] = hit
    if isinstance(hit, ValueError):
        raise hit
    return hit


def _is(m: dict, role: str) -> bool:
    return m.get("role") == role


def _calls(m: dict) -> list:
    """The non-empty tool_calls list of an assistant message, else []."""
    if m.get("role") != "assistant":
        return []
    calls = m.get("tool_calls")
    return calls if type(calls) is list else []


def _cid(call: Any) -> str | None:
    cid = call.get("id") if isinstance(call, dict) else None
    return cid if isinstance(cid, str) and cid else None


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


# -- tool-call shape -------------------------------------------------------------------

def check_tool_calls(ctx: Ctx) -> Iterator[Finding]:
    for i, m in enumerate(ctx.messages):
        if m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            yield make("tool-call-malformed", i, "tool_calls must be an array of calls",
                       f"Invalid type for 'messages[{i}].tool_calls': expected an array.")
            continue
        if not calls:
            yield make("empty-tool-calls", i, "tool_calls is an empty array; omit the key when "
                       "there are no calls",
                       f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with "
                       "minimum length 1, but got an empty array instead.")
        for j, call in enumerate(calls):
            if not _clean_call(ctx, call):
                yield from _one_call(ctx, i, j, call)


def _clean_call(ctx: Ctx, call: Any) -> bool:
    """Fast path: a well-formed call with known, valid arguments has nothing to report."""
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
    if type(parsed) is not dict:
        return False
    if not ctx.req.declares_tools():
        return True
    schemas = ctx.req.tool_schemas()
    return name in schemas and not schema_problems(schemas[name], args, parsed,
                                                   ctx.schema_key(name, schemas[name]))


def _one_call(ctx: Ctx, i: int, j: int, call: Any) -> Iterator[Finding]:
    where = f"messages[{i}].tool_calls[{j}]"
    if isinstance(call, dict) and not _cid(call):
        yield make("tool-call-missing-id", i, f"tool_calls[{j}] has no id (a streaming "
                   "accumulator keeps id only from the first delta); keep the id and use it on "
                   "the result", "Expected 'id' to be a string.")
    problem = _malformed(call, where)
    if problem:
        yield make("tool-call-malformed", i, f"tool_calls[{j}] {problem[0]}", problem[1], _cid(call))
        return
    fn, cid = call["function"], _cid(call)
    name = fn["name"]
    name_ok = bool(NAME_RE.match(name))
    if not name_ok:
        yield make("invalid-tool-name", i, f"tool_calls[{j}] name {name!r} does not match "
                   "^[a-zA-Z0-9_-]{1,64}$", _name_error(f"{where}.function.name", name), cid)
    args = fn["arguments"]
    if not isinstance(args, str):
        kind = {dict: "an object", list: "an array"}.get(type(args), f"a {type(args).__name__}")
        yield make("arguments-not-string", i, f"tool_calls[{j}] arguments is {kind}; send the "
                   "JSON text (json.dumps) instead", f"Invalid type for '{where}.function.arguments'"
                   f": expected a string, but got {kind.split()[-1]} instead.", cid)
        return
    try:
        parsed = parse_arguments(args)
    except ValueError as exc:
        yield make("arguments-invalid-json", i, f"tool_calls[{j}] arguments are not valid JSON "
                   f"({exc}); a history with broken arguments is rejected by vLLM/Qwen and "
                   "poisons the session: repair or drop the call", str(exc), cid)
        return
    if not isinstance(parsed, dict):
        yield make("arguments-not-object", i, f"tool_calls[{j}] arguments parse to "
                   f"{type(parsed).__name__}, not an object", f"'{type(parsed).__name__}' object "
                   "has no attribute 'items'", cid)
        return
    if not name_ok or not ctx.req.declares_tools():
        return
    schemas = ctx.req.tool_schemas()
    if name not in schemas:
        yield make("unknown-tool", i, f"tool_calls[{j}] calls {name!r}, which is not among the "
                   f"request's tools ({', '.join(schemas) or 'none'}); the model hallucinated a "
                   "name or the tool list changed", None, cid)
        return
    problems = schema_problems(schemas[name], args, parsed, ctx.schema_key(name, schemas[name]))
    if problems:
        yield make("arguments-schema-mismatch", i, f"tool_calls[{j}] arguments fail the "
                   f"{name!r} schema: {problems}; validate before executing", None, cid)


def _malformed(call: Any, where: str) -> tuple[str, str] | None:
    if not isinstance(call, dict):
        return "is not an object", f"Invalid type for '{where}': expected an object."
    if call.get("type") != "function":
        return ("lacks type: \"function\"",
                f"Missing required parameter: '{where}.type'.")
    fn = call.get("function")
    if not isinstance(fn, dict):
        return "lacks a function object", f"Missing required parameter: '{where}.function'."
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return ("has an empty or missing function.name",
                f"Invalid '{where}.function.name': empty string. Expected a string with minimum "
                "length 1, but got an empty string instead.")
    if "arguments" not in fn:
        return ("lacks function.arguments",
                f"Missing required parameter: '{where}.function.arguments'.")
    return None


def _name_error(param: str, name: str) -> str:
    if len(name) > 64:
        return (f"Invalid '{param}': string too long. Expected a string with maximum length 64, "
                f"but got a string with length {len(name)} instead.")
    return (f"Invalid '{param}': string does not match pattern. Expected a string that matches "
            "the pattern '^[a-zA-Z0-9_-]+$'.")


_VALIDATORS: dict[str, Any] = {}
_RESULTS: dict[tuple[str, str], str] = {}


def schema_problems(schema: Any, args_text: str, parsed: dict, key: str | None = None) -> str:
    """'' when ``parsed`` fits ``schema``; else the failing fields. Cached by schema+arguments."""
    if not isinstance(schema, dict):
        return ""
    key = key or canonical_json(schema)
    hit = _RESULTS.get((key, args_text))
    if hit is not None:
        return hit
    validator = _VALIDATORS.get(key)
    if validator is None:
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        try:
            cls = validator_for(schema)
            cls.check_schema(schema)
            validator = cls(schema)
        except SchemaError:
            validator = False
        _VALIDATORS[key] = validator
    if validator is False:
        return ""
    problems = []
    for e in validator.iter_errors(parsed):
        where = "/".join(str(p) for p in e.absolute_path)
        problems.append(f"{where}: {e.message}" if where else e.message)
    result = "; ".join(sorted(problems))
    if len(_RESULTS) < 100_000:
        _RESULTS[(key, args_text)] = result
    return result


# -- content / legacy ------------------------------------------------------------------

def check_content(ctx: Ctx) -> Iterator[Finding]:
    empty_on, same_on = ctx.on("empty-content"), ctx.on("consecutive-same-role")
    reasoning_on, id_format_on = ctx.on("reasoning-content-missing"), ctx.on("tool-call-id-format")
    prev_role = None
    for i, m in enumerate(ctx.messages):
        role = m.get("role")
        content = m.get("content", MISSING)
        if type(content) is not str:  # the common case, a string, needs no type checks
            yield from _null_or_type(ctx, i, m, role)
        elif empty_on and content == "":
            yield make("empty-content", i, "content \"\" becomes an empty text block behind an "
                       "Anthropic proxy; omit it or use null on tool-call turns",
                       "messages: text content blocks must be non-empty")
        if role == "function" and not m.get("name"):
            yield make("function-message-missing-name", i, "a legacy role 'function' message "
                       "needs the function's name (better: migrate to role 'tool' + tool_call_id)",
                       "Missing parameter 'name': messages with role 'function' must have a "
                       f"'name'. (param: messages.[{i}].name)")
        if same_on and role in ("user", "assistant") and role == prev_role:
            yield make("consecutive-same-role", i, f"two {role} messages in a row ([{i - 1}] and "
                       f"[{i}]); merge them or interleave the roles",
                       f"deepseek-reasoner does not support successive user or assistant messages "
                       f"(messages[{i - 1}] and messages[{i}] in your input). You should "
                       "interleave the user/assistant messages in the message sequence.")
        if reasoning_on and _calls(m) and not m.get("reasoning_content"):
            yield _reasoning(ctx, i)
        if id_format_on:
            yield from _id_format(ctx, i, m)
        prev_role = role


def _null_or_type(ctx: Ctx, i: int, m: dict, role: Any) -> Iterator[Finding]:
    content = m.get("content", MISSING)
    has_calls = bool(_calls(m)) or bool(m.get("function_call"))
    if content is None or content is MISSING:
        local = ctx.profile.null_content_on_tool_turns
        if role != "assistant" or not has_calls or local:
            api = ("invalid message content type: <nil>" if ctx.profile.name == "ollama" else
                   "Expected 'content' to be a string or an array" if ctx.profile.name == "llamacpp"
                   else "Invalid value for 'content': expected a string, got null. "
                        f"(param: messages.[{i}].content)")
            fix = ('use "" on tool-call turns for this server' if role == "assistant" and has_calls
                   else "send a string (\"\" if there is nothing to say)")
            yield make("null-content", i, f"content is {'null' if content is None else 'missing'} "
                       f"on a {role} message; {fix}", api)
    elif not isinstance(content, (str, list)):
        kind = {dict: "an object"}.get(type(content), f"a {type(content).__name__}")
        yield make("content-wrong-type", i, f"content is {kind}; a tool result must be a string: "
                   "json.dumps it", f"Invalid type for 'messages.[{i}].content': expected one of a "
                   f"string or array of objects, but got {kind.split()[-1]} instead.")


def _reasoning(ctx: Ctx, i: int) -> Finding:
    if ctx.profile.name == "kimi-thinking":
        api = ("thinking is enabled but reasoning_content is missing in assistant tool call "
               f"message at index {i}")
    else:
        api = (f"Missing `reasoning_content` field in the assistant message at message index {i}. "
               "For more information, please refer to "
               "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls")
    return make("reasoning-content-missing", i, "thinking mode needs this tool-call turn's "
                "reasoning_content passed back; keep the field when you append the response", api)


def _id_format(ctx: Ctx, i: int, m: dict) -> Iterator[Finding]:
    pattern = ctx.profile.id_pattern
    for j, call in enumerate(_calls(m)):
        cid = _cid(call)
        if cid and not re.match(pattern, cid):
            api = (f"Tool call id was {cid} but must be a-z, A-Z, 0-9, with a length of 9."
                   if ctx.profile.name == "mistral" else
                   f"messages.{i}.content.{j}.tool_use.id: String should match pattern "
                   "'^[a-zA-Z0-9_-]+$'")
            yield make("tool-call-id-format", i, f"id {cid!r} is not {ctx.profile.id_pattern_text} "
                       f"as {ctx.profile.name} requires; rewrite the ids consistently on both the "
                       "call and its result", api, cid)


# -- request level -------------------------------------------------------------------

def check_request(ctx: Ctx) -> Iterator[Finding]:
    req = ctx.req
    if isinstance(req.tools, list):
        if len(req.tools) > MAX_TOOLS:
            yield make("too-many-tools", None, f"{len(req.tools)} tools sent; the limit is 128: "
                       "route to a subset per request",
                       "Invalid 'tools': array too long. Expected an array with maximum length "
                       f"128, but got an array with length {len(req.tools)} instead.")
        if not req.tools:
            yield make("tool-params-without-tools", None, "tools: [] is rejected; omit the key "
                       "when there are no tools", "tools must not be empty array")
        yield from _tool_definitions(req.tools)
    if not req.tools_sent():
        for key in ("tool_choice", "parallel_tool_calls"):
            if getattr(req, key) is not MISSING:
                yield make("tool-params-without-tools", None, f"{key} is sent without tools; drop "
                           f"it when you drop the tools", f"Invalid value for '{key}': '{key}' is "
                           "only allowed when 'tools' are specified.")
    if req.function_call is not MISSING and not (isinstance(req.functions, list) and req.functions):
        yield make("tool-params-without-tools", None, "function_call is sent without functions",
                   "Invalid value for 'function_call': 'function_call' is only allowed when "
                   "'functions' are specified.")
    if req.tools_sent() and req.tool_choice is not MISSING:
        yield from _tool_choice(ctx)


def _tool_definitions(tools: list) -> Iterator[Finding]:
    for k, t in enumerate(tools):
        fn = t.get("function") if isinstance(t, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not NAME_RE.match(name):
            yield make("invalid-tool-name", None, f"tools[{k}] name {name!r} does not match "
                       "^[a-zA-Z0-9_-]{1,64}$ (dots, slashes and CJK are rejected)",
                       _name_error(f"tools[{k}].function.name", str(name)))
        if isinstance(fn, dict) and fn.get("strict") is True:
            problem = _strict_problem(fn.get("parameters"), ())
            if problem:
                yield make("strict-schema-invalid", None, f"tools[{k}] {name!r} is strict but "
                           f"its schema breaks strict mode: {problem[1]}",
                           f"Invalid schema for function '{name}': {problem[0]}")


def _strict_problem(schema: Any, context: tuple) -> tuple[str, str] | None:
    if not isinstance(schema, dict):
        return None
    ctx_text = f"In context=({', '.join(repr(c) for c in context)}{',' if len(context) == 1 else ''})"
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return (f"{ctx_text}, 'additionalProperties' is required to be supplied and to be "
                    "false.", f"additionalProperties: false missing at {list(context) or 'root'}")
        props = schema.get("properties") or {}
        missing = [p for p in props if p not in (schema.get("required") or [])]
        if missing:
            return (f"{ctx_text}, 'required' is required to be supplied and to be an array "
                    f"including every key in properties. Missing '{missing[0]}'.",
                    f"property {missing[0]!r} not in required at {list(context) or 'root'}")
        for key, sub in props.items():
            found = _strict_problem(sub, context + ("properties", key))
            if found:
                return found
    if isinstance(schema.get("items"), dict):
        return _strict_problem(schema["items"], context + ("items",))
    return None


def _tool_choice(ctx: Ctx) -> Iterator[Finding]:
    choice, names = ctx.req.tool_choice, ctx.req.tool_schemas()
    if choice in ("none", "auto"):
        return
    if choice == "required":
        if ctx.profile.required_choice_rejected:
            yield make("bad-tool-choice", None, "tool_choice 'required' cannot be used with "
                       "thinking enabled; use 'auto'",
                       "tool_choice 'required' is incompatible with thinking enabled")
        return
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        return
    if isinstance(choice, dict) and choice.get("type") == "function":
        fn = choice.get("function")
        fname = fn.get("name") if isinstance(fn, dict) else None
        if fname in names:
            return
        yield make("bad-tool-choice", None, f"tool_choice forces {fname!r}, which is not among the "
                   "tools", f"Invalid value for `function`: `{fname}` in `tool_choice`! Correct "
                   "usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`")
        return
    if isinstance(choice, str) and choice in names:
        yield make("bad-tool-choice", None, f"a bare tool name {choice!r} is not a tool_choice; "
                   "use {\"type\": \"function\", \"function\": {\"name\": ...}}",
                   "'$.tool_choice' is invalid.")
        return
    yield make("bad-tool-choice", None, f"tool_choice {json.dumps(choice)} is not none, auto, "
               "required or a function object",
               "Only allowed string values for 'tool_choice' are none, auto, and required")


CHECKS = (check_request, check_pairing, check_tool_calls, check_content)
