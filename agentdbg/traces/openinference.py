"""A model call as OpenInference records it (Phoenix, Arize): ``openinference.span.kind`` LLM,
``llm.input_messages.N.message.*`` / ``llm.output_messages.N.message.*`` (role, content or
``contents.M.message_content.text``, ``tool_calls.M.tool_call.{id,function.name,
function.arguments}``, ``tool_call_id``), ``llm.tools.N.tool.json_schema``, ``llm.model_name``,
``llm.invocation_parameters`` and ``llm.token_count.*``. When ``input.value`` holds the request
body itself (JSON with ``messages``), that is the request as it was sent.
"""

from __future__ import annotations

from typing import Any

from agentdbg.traces.genai import LlmCall, chat_call, loads, ordered, tool_list, tree
from agentdbg.traces.spans import Span


def read(span: Span) -> LlmCall | None:
    a = span.attributes
    if a.get("openinference.span.kind") != "LLM" and not any(
            k.startswith("llm.input_messages.") for k in a):
        return None
    messages = [_message(n.get("message"), "user") for n in ordered(tree(a, "llm.input_messages"))
                if isinstance(n, dict)]
    outputs = [n.get("message") for n in ordered(tree(a, "llm.output_messages")) if isinstance(n, dict)]
    reply = _message(outputs[0], "assistant") if outputs and isinstance(outputs[0], dict) else None
    raw = loads(a.get("input.value")) if a.get("input.mime_type") in (None, "application/json") else None
    raw = raw if isinstance(raw, dict) and isinstance(raw.get("messages"), list) else None
    if not messages and raw is None:
        return None
    schemas = [loads(n.get("tool", {}).get("json_schema")) for n in ordered(tree(a, "llm.tools"))
               if isinstance(n, dict) and isinstance(n.get("tool"), dict)]
    params = loads(a.get("llm.invocation_parameters"))
    call = LlmCall(messages, reply, tools=tool_list(schemas), raw=raw,
                   params={k: v for k, v in params.items() if k not in ("messages", "tools", "model")}
                   if isinstance(params, dict) else {})
    model = a.get("llm.model_name")
    call.model = model if isinstance(model, str) else None
    prompt, completion = a.get("llm.token_count.prompt"), a.get("llm.token_count.completion")
    if isinstance(prompt, int) and isinstance(completion, int):
        call.usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}
    output = loads(a.get("output.value"))
    choices = output.get("choices") if isinstance(output, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        call.finish = choices[0].get("finish_reason") if isinstance(choices[0].get("finish_reason"),
                                                                     str) else None
    return call


def _message(node: Any, role: str) -> dict[str, Any]:
    node = node if isinstance(node, dict) else {}
    role = node.get("role") if isinstance(node.get("role"), str) else role
    content = node.get("content")
    if content is None and isinstance(node.get("contents"), dict):
        parts = [node["contents"][k].get("message_content", {}) for k in sorted(node["contents"], key=_i)
                 if isinstance(node["contents"][k], dict)]
        content = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    msg: dict[str, Any] = {"role": role, "content": content}
    if role == "tool":
        msg["tool_call_id"] = node.get("tool_call_id")
    calls = node.get("tool_calls")
    if isinstance(calls, dict) and calls:
        found = [calls[k].get("tool_call", {}) for k in sorted(calls, key=_i) if isinstance(calls[k], dict)]
        msg["tool_calls"] = [chat_call(c.get("id"), (c.get("function") or {}).get("name"),
                                       (c.get("function") or {}).get("arguments"))
                             for c in found if isinstance(c, dict)]
    return msg


def _i(key: str) -> int:
    return int(key) if key.isdigit() else 1 << 30
