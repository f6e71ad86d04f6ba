"""The offline model: a deterministic planner over the tool schemas. Not an LLM.

It calls a tool when every required parameter can be filled, either from a
value in the user's question that fits the parameter's ``pattern``, ``enum``,
``const`` or ``examples``, or from a field of an earlier tool result whose key
equals the parameter's name (free-form parameters only: a closed ``enum``
choice is the user's to make). Independent fillable calls go out together; a call
already made with the same arguments is never repeated, except that a call whose
result was a retryable error is retried once. When nothing more can be filled it
answers from the tool results, saying plainly what it could not get.

Each reply carries a short ``note`` explaining the choice.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from agentdbg.messages import call_fingerprint, is_error_result, parse_json_object, tool_calls_of
from agentdbg.providers.base import ModelReply, ModelRequest, estimated_usage, tool_call

MAX_CALLS_PER_TURN = 8
CJK = re.compile(r"[\u3400-\u9fff]")


class OfflineModel:
    name = "offline"

    def complete(self, request: ModelRequest) -> ModelReply:
        state = _History(request.messages)
        tools = _tools(request.tools)
        if request.tool_choice == "none":
            tools = []
        elif isinstance(request.tool_choice, dict):
            forced = (request.tool_choice.get("function") or {}).get("name")
            tools = [t for t in tools if t[0] == forced]
        calls, notes = self._plan(state, tools)
        if request.parallel_tool_calls is False:
            calls = calls[:1]
        if calls:
            first_id = state.call_count + 1
            tool_calls = [tool_call(f"call_o{first_id + i}", n, a) for i, (n, a) in enumerate(calls)]
            message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": _answer(state, not tools)}
            notes.append(f"nothing left to call: answering from {len(state.results)} tool result(s)")
            finish = "stop"
        return ModelReply(message=message, usage=estimated_usage(request, message),
                          finish_reason=finish, note="; ".join(notes))

    def _plan(self, state: _History, tools: list) -> tuple[list[tuple[str, str]], list[str]]:
        calls: list[tuple[str, str]] = []
        notes: list[str] = []
        for name, args in state.retryable_once():
            calls.append((name, args))
            notes.append(f"retrying {name} once after a retryable error")
        planned = {call_fingerprint(n, a) for n, a in calls}
        for name, params in tools:
            for args, why in _fill(name, params, state):
                text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
                fp = call_fingerprint(name, text)
                if fp in state.made or fp in planned:
                    continue
                planned.add(fp)
                calls.append((name, text))
                notes.append(f"{name}: {why}")
            if len(calls) >= MAX_CALLS_PER_TURN:
                break
        return calls[:MAX_CALLS_PER_TURN], notes


class _History:
    """What the conversation so far tells the planner."""

    def __init__(self, messages: list[dict]):
        self.question = ""
        self.made: dict[str, int] = {}                 # fingerprint -> times called
        self.calls: dict[str, tuple[str, str]] = {}    # call id -> (name, arguments)
        self.results: list[tuple[str, str, Any]] = []  # (name, arguments, parsed or raw content)
        self.block_errors: list[tuple[str, str, dict]] = []  # errors in the latest tool block
        self.known: dict[str, Any] = {}                # result field -> latest value
        self.call_count = 0
        for m in messages:
            self._read(m)

    def _read(self, m: Any) -> None:
        if not isinstance(m, dict):
            return
        role = m.get("role")
        if role == "user" and isinstance(m.get("content"), str):
            self.question = m["content"]
        if role == "assistant":
            self.block_errors = []
        for c in tool_calls_of(m):
            fn = c.get("function") if isinstance(c, dict) else None
            fn = fn if isinstance(fn, dict) else {}
            name, args = fn.get("name"), fn.get("arguments")
            self.call_count += 1
            if isinstance(name, str) and isinstance(args, str):
                fp = call_fingerprint(name, args)
                self.made[fp] = self.made.get(fp, 0) + 1
                self.calls[str(c.get("id"))] = (name, args)
        if role == "tool" and str(m.get("tool_call_id")) in self.calls:
            name, args = self.calls[str(m.get("tool_call_id"))]
            content = m.get("content")
            if is_error_result(content):
                self.block_errors.append((name, args, json.loads(content)["error"]))
                self.results.append((name, args, json.loads(content)))
                return
            parsed = _parse(content)
            self.results.append((name, args, parsed))
            self._learn(parsed)

    def _learn(self, value: Any, depth: int = 0) -> None:
        if isinstance(value, dict) and depth < 3:
            for k, v in value.items():
                if isinstance(v, (str, int, float, bool)):
                    self.known[k] = v
                else:
                    self._learn(v, depth + 1)

    def retryable_once(self) -> list[tuple[str, str]]:
        """Calls of the latest tool block that failed retryably and were made only once."""
        return [(name, args) for name, args, err in self.block_errors
                if err.get("retryable") and self.made.get(call_fingerprint(name, args), 0) == 1]


def _parse(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content


def _tools(tools: list) -> list[tuple[str, dict]]:
    out = []
    for t in tools or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
            out.append((fn["name"], params))
    return out


def _fill(name: str, params: dict, state: _History) -> list[tuple[dict, str]]:
    """Every argument object that fills all required parameters, with the reason."""
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    required = [r for r in params.get("required", []) if isinstance(r, str)]
    if not required and name.lower() not in state.question.lower():
        return []  # a tool with nothing to fill is called only when the question names it
    choices: dict[str, list[tuple[Any, str]]] = {}
    for param, schema in props.items():
        found = _values_for(param, schema if isinstance(schema, dict) else {}, state)
        if found:
            choices[param] = found if param in required else found[:1]
        elif param in required:
            return []
    keys = list(choices)
    combos = itertools.islice(itertools.product(*(choices[k] for k in keys)), MAX_CALLS_PER_TURN)
    filled = []
    for combo in combos:
        args = {k: v for k, (v, _) in zip(keys, combo)}
        why = ", ".join(f"{k}={v!r} ({src})" for k, (v, src) in zip(keys, combo))
        filled.append((args, why))
    return filled


def _values_for(param: str, schema: dict, state: _History) -> list[tuple[Any, str]]:
    # A result field feeds a free-form parameter (an identifier flowing between tools);
    # a closed choice (enum/const) is the user's to make, so it comes from the question only.
    free_form = "enum" not in schema and "const" not in schema
    q = state.question
    found: list[tuple[Any, str]] = []
    if free_form and param in state.known:
        found.append((state.known[param], f"field {param!r} of an earlier tool result"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and schema.get("type", "string") == "string":
        for value in _pattern_matches(pattern, q):
            found.append((value, f"question matches pattern {pattern}"))
    for key in ("enum", "examples"):
        options = schema.get(key)
        if isinstance(options, list):
            for opt in options:
                if isinstance(opt, str) and opt and _mentions(q, opt):
                    found.append((opt, f"question mentions {key} value {opt!r}"))
    if isinstance(schema.get("const"), str) and _mentions(q, schema["const"]):
        found.append((schema["const"], "question mentions the const value"))
    seen, unique = set(), []
    for value, why in sorted(found, key=lambda f: _position(q, f[0])):  # question order first
        if value not in seen and _fits(value, schema):
            seen.add(value)
            unique.append((value, why))
    return unique


def _pattern_matches(pattern: str, text: str) -> list[str]:
    body = pattern[1:] if pattern.startswith("^") else pattern
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    try:
        return [m.group(0) for m in re.finditer(body, text) if m.group(0)]
    except re.error:
        return []


def _mentions(text: str, value: str) -> bool:
    return value.lower() in text.lower()


def _position(text: str, value: Any) -> int:
    i = text.lower().find(str(value).lower())
    return i if i >= 0 else len(text)


def _fits(value: Any, schema: dict) -> bool:
    from jsonschema.validators import validator_for

    try:
        return validator_for(schema)(schema).is_valid(value)
    except Exception:  # noqa: BLE001 - a schema the validator cannot use: do not trust the value
        return False


# -- answering ---------------------------------------------------------------

def _answer(state: _History, no_tools: bool) -> str:
    zh = bool(CJK.search(state.question))
    t = _ZH if zh else _EN
    if not state.results:
        return t["no_tools"] if no_tools else t["no_match"]
    good = [(n, a, r) for n, a, r in state.results if not _is_error(r)]
    settled = {call_fingerprint(n, a) for n, a, _ in good}
    bad = []
    for n, a, r in reversed(state.results):  # the latest failure of each call, once
        if _is_error(r) and call_fingerprint(n, a) not in settled:
            settled.add(call_fingerprint(n, a))
            bad.insert(0, (n, a, r))
    lines = [t["from_results"]] if good else [t["failed"]]
    for name, args, result in good:
        lines.append(f"- {_label(name, args)}: {_summary(result)}")
    lines.extend(_comparisons(good, t))
    for name, args, result in bad:
        err = result["error"]
        lines.append(f"- {t['could_not']} {_label(name, args)}: {err.get('type')} — "
                     f"{err.get('message', '')}")
    return "\n".join(lines)


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and result.get("ok") is False and isinstance(result.get("error"), dict)


def _label(name: str, args: str) -> str:
    parsed = parse_json_object(args) or {}
    inner = ", ".join(f"{k}={v}" for k, v in parsed.items())
    return f"{name}({inner})"


def _summary(result: Any) -> str:
    if isinstance(result, dict):
        parts = []
        for k, v in result.items():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            parts.append(f"{k}={text if len(text) <= 80 else text[:77] + '...'}")
        return ", ".join(parts) or "{}"
    if isinstance(result, list):
        return f"{len(result)} item(s)"
    text = str(result)
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text)} characters)"


def _comparisons(good: list, t: dict) -> list[str]:
    """For two or more results of one tool sharing a numeric field: highest and lowest."""
    lines = []
    by_tool: dict[str, list[tuple[str, dict]]] = {}
    for name, args, result in good:
        if isinstance(result, dict):
            by_tool.setdefault(name, []).append((args, result))
    for rows in by_tool.values():
        if len(rows) < 2:
            continue
        numeric = [k for k, v in rows[0][1].items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)
                   and all(isinstance(r.get(k), (int, float)) for _, r in rows)]
        for key in numeric:
            ranked = sorted(rows, key=lambda r: r[1][key])
            lo, hi = ranked[0], ranked[-1]
            lines.append(t["compare"].format(key=key, hi=_who(hi[0]), hv=hi[1][key],
                                             lo=_who(lo[0]), lv=lo[1][key]))
    return lines


def _who(args: str) -> str:
    parsed = parse_json_object(args) or {}
    return "/".join(str(v) for v in parsed.values()) or "?"


_EN = {
    "no_tools": "I have no tools for this request, and as the offline model I can only answer "
                "from tool results.",
    "no_match": "I could not match this question to any tool: no tool's required parameters "
                "could be filled from the question.",
    "from_results": "From the tool results:",
    "failed": "I could not get the information: every tool call failed.",
    "could_not": "could not get",
    "compare": "- {key}: highest {hi} ({hv}), lowest {lo} ({lv})",
}
_ZH = {
    "no_tools": "这个请求没有可用的工具；离线模型只能根据工具结果回答。",
    "no_match": "我无法把这个问题对应到任何工具：问题中找不到任何工具必填参数的值。",
    "from_results": "根据工具结果：",
    "failed": "我没能获取到所需信息：所有工具调用都失败了。",
    "could_not": "未能获取",
    "compare": "- {key}：最高 {hi}（{hv}），最低 {lo}（{lv}）",
}
