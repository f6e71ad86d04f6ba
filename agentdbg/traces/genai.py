"""A model call's content as the OpenTelemetry GenAI semantic conventions record it, in the
Chat Completions shape.

Three generations are read, newest first:

* ``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.system_instructions``
  (semconv 1.37+: ``[{role, parts: [{type: text|tool_call|tool_call_response|reasoning …}]}]``),
  ``gen_ai.tool.definitions``;
* per-message span events (``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``), and the older
  ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events;
* indexed attributes as OpenLLMetry writes them (``gen_ai.prompt.N.role`` / ``.content`` /
  ``.tool_calls.M.name`` …, ``gen_ai.completion.N.*``, tools as ``llm.request.functions.N.*``).

``LlmCall`` is what every reader returns: the request's messages, tools and parameters, the
reply message, its finish reason and usage.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agentdbg.traces.spans import Span

PARAMS = {"gen_ai.request.temperature": "temperature", "gen_ai.request.max_tokens": "max_tokens",
          "gen_ai.request.top_p": "top_p", "gen_ai.request.seed": "seed",
          "gen_ai.request.frequency_penalty": "frequency_penalty",
          "gen_ai.request.presence_penalty": "presence_penalty",
          "gen_ai.request.stop_sequences": "stop", "llm.request.max_tokens": "max_tokens",
          "llm.top_p": "top_p"}
MAX_INDEX = 100_000


@dataclass
class LlmCall:
    messages: list[dict[str, Any]]
    reply: dict[str, Any] | None
    finish: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None     # None: not recorded
    params: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    raw: dict[str, Any] | None = None             # the request body itself, when recorded


def loads(value: Any) -> Any:
    """An attribute that holds JSON text, parsed (a structured value as it is)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def read(span: Span) -> LlmCall | None:
    a = span.attributes
    call = _semconv(a) or _events(span) or _indexed(a)
    if call is None:
        return None
    call.model = _str(a.get("gen_ai.request.model")) or _str(a.get("gen_ai.response.model"))
    call.params = {ours: a[theirs] for theirs, ours in PARAMS.items() if theirs in a}
    call.usage = usage(a)
    finish = a.get("gen_ai.response.finish_reasons")
    if call.finish is None and isinstance(finish, list) and finish and isinstance(finish[0], str):
        call.finish = finish[0]
    if call.tools is None:
        call.tools = tool_list(loads(a.get("gen_ai.tool.definitions"))) or _functions(a)
    return call


def usage(a: dict[str, Any]) -> dict[str, Any]:
    prompt = a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))
    completion = a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens"))
    out = {}
    if isinstance(prompt, int):
        out["prompt_tokens"] = prompt
    if isinstance(completion, int):
        out["completion_tokens"] = completion
    if isinstance(prompt, int) and isinstance(completion, int):
        out["total_tokens"] = prompt + completion
    return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- semconv 1.37+: role + parts ---------------------------------------------------------------

def _semconv(a: dict[str, Any]) -> LlmCall | None:
    given = loads(a.get("gen_ai.input.messages"))
    if not isinstance(given, list):
        return None
    messages: list[dict[str, Any]] = []
    system = loads(a.get("gen_ai.system_instructions"))
    if isinstance(system, list) and system:
        messages.append({"role": "system", "content": _texts(system)})
    for m in given:
        messages.extend(from_parts(m))
    out = loads(a.get("gen_ai.output.messages"))
    first = out[0] if isinstance(out, list) and out and isinstance(out[0], dict) else None
    reply = next(iter(from_parts(first)), None) if first is not None else None
    return LlmCall(messages, reply, _str((first or {}).get("finish_reason")) or None)


def _texts(parts: list[Any]) -> str:
    return "".join(str(p.get("content", "")) for p in parts
                   if isinstance(p, dict) and p.get("type") in ("text", None))


def from_parts(message: Any) -> list[dict[str, Any]]:
    """One conventions message as chat messages (a tool response is a message of its own)."""
    if not isinstance(message, dict):
        return []
    role = _str(message.get("role")) or "user"
    parts: list[Any] = message["parts"] if isinstance(message.get("parts"), list) else []
    text = "".join(str(p.get("content", "")) for p in parts
                   if isinstance(p, dict) and p.get("type") == "text")
    responses = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
    calls = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call"]
    out: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": p.get("id"),
                                  "content": _content(p.get("response"))} for p in responses]
    if role == "tool":
        return out
    if role == "assistant" or calls:
        msg: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            msg["tool_calls"] = [chat_call(p.get("id"), p.get("name"), p.get("arguments"))
                                 for p in calls]
        return out + [msg]
    if text or not responses:
        out.append({"role": role, "content": text})
    return out


def _content(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def chat_call(cid: Any, name: Any, arguments: Any) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(
        arguments if arguments is not None else {}, ensure_ascii=False)
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def tool_list(value: Any) -> list[dict[str, Any]] | None:
    """Tool definitions in any of the usual shapes, as Chat Completions tools."""
    if not isinstance(value, list) or not value:
        return None
    out = []
    for t in value:
        if not isinstance(t, dict):
            continue
        fn: dict[str, Any] = t["function"] if isinstance(t.get("function"), dict) else t
        if isinstance(fn.get("name"), str):
            tool = {k: fn[k] for k in ("name", "description", "parameters") if k in fn}
            if "parameters" not in tool and isinstance(fn.get("input_schema"), dict):
                tool["parameters"] = fn["input_schema"]
            out.append({"type": "function", "function": tool})
    return out or None


# -- span events ---------------------------------------------------------------------------------

EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
               "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _events(span: Span) -> LlmCall | None:
    messages: list[dict[str, Any]] = []
    reply, finish, found = None, None, False
    for name, _, attrs in span.events:
        if name == "gen_ai.content.prompt":
            given = loads(attrs.get("gen_ai.prompt"))
            if isinstance(given, list):
                messages, found = [m for m in given if isinstance(m, dict)], True
        elif name == "gen_ai.content.completion":
            done = loads(attrs.get("gen_ai.completion"))
            first = done[0] if isinstance(done, list) and done else done
            if isinstance(first, dict):
                reply = first.get("message") if isinstance(first.get("message"), dict) else first
                finish = _str(first.get("finish_reason"))
        elif name in EVENT_ROLES:
            found = True
            messages.append(_event_message(EVENT_ROLES[name], attrs))
        elif name == "gen_ai.choice":
            body = loads(attrs.get("message")) or {}
            reply = _event_message("assistant", body if isinstance(body, dict) else {})
            finish = _str(attrs.get("finish_reason"))
    return LlmCall(messages, reply, finish) if found else None


def _event_message(role: str, attrs: dict[str, Any]) -> dict[str, Any]:
    content = loads(attrs.get("content")) if isinstance(attrs.get("content"), str) and \
        attrs["content"][:1] in "[{" else attrs.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    msg: dict[str, Any] = {"role": role, "content": content}
    if role == "tool":
        msg["tool_call_id"] = attrs.get("id", attrs.get("tool_call_id"))
        msg["content"] = _content(content)
    calls = loads(attrs.get("tool_calls"))
    if role == "assistant" and isinstance(calls, list) and calls:
        msg["tool_calls"] = [chat_call(c.get("id"), (c.get("function") or {}).get("name"),
                                       (c.get("function") or {}).get("arguments"))
                             for c in calls if isinstance(c, dict)]
    return msg


# -- indexed attributes (OpenLLMetry) ----------------------------------------------------------

def tree(a: dict[str, Any], prefix: str) -> dict[int, Any]:
    """``prefix.N.rest`` attributes as ``{N: {rest as nested dicts}}`` (indices bounded)."""
    out: dict[int, Any] = {}
    for key, value in a.items():
        if not key.startswith(prefix + "."):
            continue
        head, _, rest = key[len(prefix) + 1:].partition(".")
        if not head.isdigit() or int(head) > MAX_INDEX:
            continue
        node = out.setdefault(int(head), {})
        parts = rest.split(".") if rest else []
        for p in parts[:-1]:
            nxt = node.get(p)
            node = node.setdefault(p, {}) if not isinstance(nxt, dict) else nxt
        if parts and isinstance(node, dict):
            node[parts[-1]] = value
    return out


def ordered(nodes: dict[int, Any]) -> list[Any]:
    return [nodes[i] for i in sorted(nodes)]


def _indexed(a: dict[str, Any]) -> LlmCall | None:
    prompt = tree(a, "gen_ai.prompt")
    if not prompt:
        return None
    messages = [_indexed_message(m) for m in ordered(prompt)]
    completions = ordered(tree(a, "gen_ai.completion"))
    first = completions[0] if completions else None
    reply = _indexed_message(first, "assistant") if isinstance(first, dict) else None
    return LlmCall(messages, reply, _str(first.get("finish_reason")) if isinstance(first, dict) else None)


def _indexed_message(node: dict[str, Any], role: str | None = None) -> dict[str, Any]:
    role = _str(node.get("role")) or role or "user"
    content = node.get("content")
    parsed = loads(content) if isinstance(content, str) and content[:1] == "[" else None
    if isinstance(parsed, list):
        content = "".join(str(p.get("text", "")) for p in parsed if isinstance(p, dict))
    msg: dict[str, Any] = {"role": role, "content": content}
    if role == "tool":
        msg["tool_call_id"] = node.get("tool_call_id")
    calls = node.get("tool_calls")
    if isinstance(calls, dict) and calls:
        msg["tool_calls"] = [chat_call(c.get("id"), c.get("name"), c.get("arguments"))
                             for c in (calls[k] for k in sorted(calls, key=_index)) if isinstance(c, dict)]
        if msg["content"] == "":
            msg["content"] = None
    return msg


def _index(key: str) -> int:
    return int(key) if key.isdigit() else MAX_INDEX + 1


def _functions(a: dict[str, Any]) -> list[dict[str, Any]] | None:
    """OpenLLMetry's ``llm.request.functions.N.{name,description,parameters}``."""
    found = ordered(tree(a, "llm.request.functions"))
    tools = []
    for f in found:
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            tool: dict[str, Any] = {"name": f["name"]}
            if isinstance(f.get("description"), str):
                tool["description"] = f["description"]
            params = loads(f.get("parameters"))
            if isinstance(params, dict):
                tool["parameters"] = params
            tools.append({"type": "function", "function": tool})
    return tools or None


SECRET_KEY = re.compile(r"(?i)api[_-]?key|secret|password|authori[sz]ation|credential|access[_-]?token"
                        r"|bearer|cookie")
