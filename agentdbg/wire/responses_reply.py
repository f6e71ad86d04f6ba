"""Responses API replies: the ``response`` object for a chat assistant reply (what ``serve``
answers), the chat form of a ``response`` (what a provider returns to the engine), and the
error bodies with the real status codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentdbg.conversation import Usage, count
from agentdbg.wire.common import (
    WIRE,
    ChatForm,
    ChatReply,
    as_dict,
    digest,
    hex_id,
    usage_counts,
)
from agentdbg.wire.responses import _seal, _Walker, assistant_items

if TYPE_CHECKING:
    from agentdbg.conversation import JsonObject
    from agentdbg.wire.codec import FindingLike


def usage_of(usage: Any) -> Usage:
    u = as_dict(usage)
    return Usage(input=count(u.get("input_tokens")), output=count(u.get("output_tokens")),
                 cached=count(as_dict(u.get("input_tokens_details")).get("cached_tokens")),
                 reasoning=count(as_dict(u.get("output_tokens_details")).get("reasoning_tokens")))


def chat_reply(response: dict) -> ChatReply:
    """The chat assistant message (+ usage, finish reason) of a ``response`` object."""
    form = ChatForm()
    output = response.get("output") if isinstance(response, dict) else None
    _Walker(form, merge=True).run(output if isinstance(output, list) else [])
    _seal(form.messages)
    message: JsonObject = next((m for m in form.messages if m.get("role") == "assistant"),
                               {"role": "assistant", "content": None})
    usage = response.get("usage") if isinstance(response, dict) else None
    return ChatReply(message, usage_of(usage).counts(), _finish(response, message))


def _finish(response: dict, message: dict) -> str:
    details = response.get("incomplete_details") or {}
    reason = details.get("reason") if isinstance(details, dict) else None
    if reason == "max_output_tokens":
        return "length"
    if reason == "content_filter":
        return "content_filter"
    return "tool_calls" if message.get("tool_calls") else "stop"


# -- the response object ------------------------------------------------------------------

def response_json(message: dict, body: dict, usage: dict | None = None, finish: str | None = None,
                  model_name: str = "offline") -> dict:
    """A ``response`` object for a chat assistant reply; ids derive from the request, so the
    same request always gets the same bytes. A ``reasoning_content`` string becomes a
    ``reasoning`` item (with ``encrypted_content`` when the request ``include``s it)."""
    seed = digest(body)

    def new_id(prefix: str, n: int) -> str:
        return hex_id(prefix, seed, prefix, n)

    output = []
    if isinstance(message.get("reasoning_content"), str) and not (message.get(WIRE) or {}):
        item = {"id": new_id("rs_", 0), "type": "reasoning",
                "summary": [{"type": "summary_text", "text": message["reasoning_content"]}]}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            item["encrypted_content"] = hex_id("enc_", seed, "encrypted", length=64)
        output.append(item)
    output.extend(_namespaced(item, body) for item in assistant_items(message, new_id))
    prompt, completion = usage_counts(usage)
    status, details = "completed", None
    if finish in ("length", "content_filter"):
        status = "incomplete"
        details = {"reason": "max_output_tokens" if finish == "length" else "content_filter"}
    reasoning = as_dict(body.get("reasoning"))
    return {
        "id": hex_id("resp_", seed, "response"), "object": "response", "created_at": 0,
        "status": status, "background": False, "error": None, "incomplete_details": details,
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": None, "model": body.get("model") or model_name, "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "service_tier": "default", "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0), "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0), "truncation": "disabled",
        "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt + completion},
        "user": None, "metadata": {},
    }


def _namespaced(item: Any, body: dict) -> Any:
    """A new call of a function the request offers only inside a namespace (Codex's
    ``collaboration``/``multi_agent_v1`` tools) names its namespace, as the API answers it:
    ``{"name": "spawn_agent", "namespace": "collaboration"}``. A chat reply names it plainly
    (``spawn_agent``), or with its namespace in front (``collaboration.spawn_agent``)."""
    if not isinstance(item, dict) or item.get("type") != "function_call" or "namespace" in item \
            or not isinstance(item.get("name"), str):
        return item
    plain, grouped = _offered(body.get("tools"))
    name = item["name"]
    if "." in name and name not in plain and name.split(".", 1) in [list(g) for g in grouped]:
        space, name = name.split(".", 1)
    elif name in plain:
        return item
    else:
        spaces = [g[0] for g in grouped if g[1] == name]
        if len(spaces) != 1:
            return item
        space = spaces[0]
    return {**item, "name": name, "namespace": space}


def _offered(tools: Any) -> tuple[set[str], set[tuple[str, str]]]:
    """The function names a request offers at the top, and (namespace, name) of those inside
    a namespace."""
    plain: set[str] = set()
    grouped: set[tuple[str, str]] = set()
    for t in tools if isinstance(tools, list) else []:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        if isinstance(t.get("tools"), list):
            grouped |= {(t["name"], f["name"]) for f in t["tools"]
                        if isinstance(f, dict) and isinstance(f.get("name"), str)}
        else:
            plain.add(t["name"])
    return plain, grouped


# -- errors -------------------------------------------------------------------------------

def error_body(message: str, *, param: str | None = None, code: str | None = None,
               type_: str = "invalid_request_error") -> dict:
    """OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


# rule -> (HTTP status, param, code); "{path}" is the finding's path
REJECTIONS: dict[str, tuple[int, str | None, str | None]] = {
    "item-not-persisted": (404, "input", None),
    "item-id-prefix": (400, "{path}.id", "invalid_id_prefix"),
    "tool-call-missing-id": (400, "{path}.call_id", None),
    "tool-message-missing-id": (400, "{path}.call_id", None),
    "tool-call-malformed": (400, "{path}", None),
    "arguments-not-string": (400, "{path}.arguments", "invalid_type"),
    "content-wrong-type": (400, "{path}.output", "invalid_value"),
    "invalid-tool-name": (400, "{path}.name", "invalid_value"),
    "tool-definition-nested": (400, "{path}.name", "missing_required_parameter"),
    "bad-tool-choice": (400, "tool_choice", None),
    "strict-schema-invalid": (400, "{path}.parameters", "invalid_function_parameters"),
}


def rejection(findings: Sequence[FindingLike]) -> tuple[int, dict] | None:
    """What the real API answers for the first error among ``findings`` (None: it accepts)."""
    for f in findings:
        if f.severity != "error" or not f.api_error:
            continue
        status, param, code = REJECTIONS.get(f.rule, (400, "input", None))
        if param and "{path}" in param:
            param = param.format(path=f.path or "input")
        return status, error_body(f.api_error, param=param, code=code)
    return None
