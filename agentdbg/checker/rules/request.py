"""Request-level rules: the tools array, tool_choice, parallel_tool_calls, strict schemas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from agentdbg.checker.context import MAX_TOOLS, NAME_RE, Ctx, _name_error
from agentdbg.checker.findings import Finding, make
from agentdbg.checker.request import MISSING
from agentdbg.checker.rule import ERROR, declare, rule
from agentdbg.i18n import Msg

DECLARED = declare(
    __name__,
    rule("empty-messages", ERROR, "messages: [] (at least one message is required)"),
    rule("too-many-tools", ERROR, "more than 128 tools"),
    rule("tool-params-without-tools", ERROR, "tools: [] or tool_choice/parallel_tool_calls without tools"),
    rule("bad-tool-choice", ERROR, "tool_choice value the API rejects"),
    rule("strict-schema-invalid", ERROR, "strict tool schema breaks strict-mode rules"),
)

# -- request level -------------------------------------------------------------------

def check_request(ctx: Ctx) -> Iterator[Finding]:
    req = ctx.req
    if not ctx.messages:
        yield make("empty-messages", None, Msg("the request has no messages; send at least the "
                                               "user's message (a history trim or a reset emptied "
                                               "the array?)"),
                   "Invalid 'messages': empty array. Expected an array with minimum length 1, "
                   "but got an empty array instead.")
    if isinstance(req.tools, list):
        if len(req.tools) > MAX_TOOLS:
            yield make("too-many-tools", None, Msg("{n} tools sent; the limit is 128: route to a "
                                                   "subset per request", {"n": len(req.tools)}),
                       "Invalid 'tools': array too long. Expected an array with maximum length "
                       f"128, but got an array with length {len(req.tools)} instead.")
        if not req.tools:
            yield make("tool-params-without-tools", None, Msg("tools: [] is rejected; omit the key "
                                                              "when there are no tools"),
                       "tools must not be empty array")
        yield from _tool_definitions(req.tools)
    if not req.tools_sent():
        for key in ("tool_choice", "parallel_tool_calls"):
            if getattr(req, key) is not MISSING:
                yield make("tool-params-without-tools", None, Msg(
                           "{key} is sent without tools; drop it when you drop the tools",
                           {"key": key}), f"Invalid value for '{key}': '{key}' is "
                           "only allowed when 'tools' are specified.")
    if req.function_call is not MISSING and not (isinstance(req.functions, list) and req.functions):
        yield make("tool-params-without-tools", None, Msg("function_call is sent without functions"),
                   "Invalid value for 'function_call': 'function_call' is only allowed when "
                   "'functions' are specified.")
    if req.tools_sent() and req.tool_choice is not MISSING:
        yield from _tool_choice(ctx)


def _tool_definitions(tools: list) -> Iterator[Finding]:
    for k, t in enumerate(tools):
        kind = t.get("type") if isinstance(t, dict) else None
        fn = t.get(kind if kind == "custom" else "function") if isinstance(t, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not NAME_RE.match(name):
            yield make("invalid-tool-name", None, Msg(
                       "tools[{k}] name {name} does not match ^[a-zA-Z0-9_-]{{1,64}}$ (dots, slashes "
                       "and CJK are rejected)", {"k": k, "name": repr(name)}),
                       _name_error(f"tools[{k}].{'custom' if kind == 'custom' else 'function'}.name",
                                   str(name)))
        if isinstance(fn, dict) and fn.get("strict") is True:
            problem = _strict_problem(fn.get("parameters"), ())
            if problem:
                yield make("strict-schema-invalid", None, Msg(
                           "tools[{k}] {name} is strict but its schema breaks strict mode: "
                           "{problem}", {"k": k, "name": repr(name), "problem": problem[1]}),
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
            yield make("bad-tool-choice", None, Msg("tool_choice 'required' cannot be used with "
                                                    "thinking enabled; use 'auto'"),
                       "tool_choice 'required' is incompatible with thinking enabled")
        return
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        return
    if isinstance(choice, dict) and choice.get("type") == "function":
        fn = choice.get("function")
        fname = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(fname, str) and fname in names:   # a name is data: any JSON type
            return
        yield make("bad-tool-choice", None, Msg("tool_choice forces {name}, which is not among "
                                                "the tools", {"name": repr(fname)}),
                   f"Invalid value for `function`: `{fname}` in `tool_choice`! Correct "
                   "usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`")
        return
    if isinstance(choice, str) and choice in names:
        yield make("bad-tool-choice", None, Msg(
                   "a bare tool name {name} is not a tool_choice; use {{\"type\": \"function\", "
                   "\"function\": {{\"name\": ...}}}}", {"name": repr(choice)}),
                   "'$.tool_choice' is invalid.")
        return
    yield make("bad-tool-choice", None, Msg("tool_choice {choice} is not none, auto, required or "
                                            "a function object", {"choice": json.dumps(choice)}),
               "Only allowed string values for 'tool_choice' are none, auto, and required")
