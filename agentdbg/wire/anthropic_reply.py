"""Anthropic Messages replies: the ``message`` object for a chat assistant reply (what
``serve`` answers), the chat form of a ``message`` (what a provider returns to the engine), and
the error bodies with the real status codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentdbg.conversation import Usage, count
from agentdbg.wire.anthropic import _message, _wire, assistant_blocks
from agentdbg.wire.common import (
    ChatForm,
    ChatReply,
    as_dict,
    base62_id,
    digest,
    seal,
    usage_counts,
)

if TYPE_CHECKING:
    from agentdbg.wire.codec import FindingLike


def usage_of(usage: Any) -> Usage:
    """Anthropic's counts: uncached, cache-creation and cache-read input tokens are apart."""
    u = as_dict(usage)
    uncached, created, read = (count(u.get(k)) for k in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    total = None if uncached is None and created is None and read is None else \
        (uncached or 0) + (created or 0) + (read or 0)
    return Usage(input=total, output=count(u.get("output_tokens")), cache_creation=created,
                 cache_read=read, uncached=uncached)


def chat_reply(message: dict) -> ChatReply:
    """The chat assistant message (+ usage, finish reason) of a ``message`` response object."""
    form = ChatForm()
    _message(form, 0, {"role": "assistant", "content": message.get("content") or []})
    reply = form.messages[0]
    seal(reply)
    finish = {"tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter",
              "model_context_window_exceeded": "length"}.get(str(message.get("stop_reason")), "stop")
    return ChatReply(reply, usage_of(message.get("usage")).counts(), finish)


# -- the message object -------------------------------------------------------------------

def message_json(message: dict, body: dict, usage: dict | None = None, finish: str | None = None,
                 model_name: str = "offline") -> dict:
    """A ``message`` response object for a chat assistant reply; ids derive from the request.
    A ``reasoning_content`` string becomes a leading ``thinking`` block when the request
    enables thinking. Call ids the API would reject get a derived ``toolu_…`` id."""
    seed = digest(body)
    content = assistant_blocks(message, lambda n: base62_id("toolu_01", seed, "tool", n))
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    thinking = as_dict(body.get("thinking"))
    if isinstance(message.get("reasoning_content"), str) and not _wire(message) \
            and thinking.get("type") in ("enabled", "adaptive"):
        content.insert(0, {"type": "thinking", "thinking": message["reasoning_content"],
                           "signature": base62_id("", seed, "signature", length=43)})
    has_calls = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
    stop = {"tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}.get(
        finish or "", "tool_use" if has_calls and finish is None else "end_turn")
    prompt, completion = usage_counts(usage)
    return {"id": base62_id("msg_01", seed, "message"), "type": "message", "role": "assistant",
            "model": body.get("model") or model_name, "content": content, "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": completion,
                      "service_tier": "standard"}}


# -- errors -------------------------------------------------------------------------------

ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401,
                "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                "rate_limit_error": 429, "api_error": 500, "overloaded_error": 529}


def error_body(message: str, type_: str = "invalid_request_error") -> dict:
    """Anthropic's error shape: ``{"type": "error", "error": {"type", "message"}}``."""
    return {"type": "error", "error": {"type": type_, "message": message}}


def rejection(findings: Sequence[FindingLike]) -> tuple[int, dict] | None:
    """What the real API answers for the first error among ``findings`` (None: it accepts)."""
    for f in findings:
        if f.severity == "error" and f.api_error:
            return 400, error_body(f.api_error)
    return None
