"""The exact body each wire format's client sends for the session's request (the pre-send
check judges the same body). No client library is imported here: ``run`` with the offline
model checks requests in any format without loading one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentdbg.providers.base import ModelRequest

MAX_TOKENS = 4096   # the Messages API requires max_tokens; enough for one turn of a tool loop


def chat_body(request: ModelRequest, model: str | None = None) -> dict:
    """The Chat Completions body."""
    body = request.body()
    if model is not None:
        body["model"] = model
    return body


def responses_body(request: ModelRequest, model: str | None = None) -> dict:
    """The Responses API body: a message that came from an earlier response goes back as the
    very items it came from."""
    from agentdbg.wire.responses import from_chat

    params: dict[str, Any] = {"model": model or request.model}
    if request.temperature is not None:
        params["temperature"] = request.temperature
    choice = request.tool_choice or ("auto" if request.tools else None)
    return from_chat(request.messages, request.tools, choice,
                     request.parallel_tool_calls if request.tools else None, params=params)


def anthropic_body(request: ModelRequest, model: str | None = None) -> dict:
    """The Messages API body (``max_tokens`` is required)."""
    from agentdbg.wire.anthropic import from_chat

    params: dict[str, Any] = {"model": model or request.model, "max_tokens": MAX_TOKENS}
    if request.temperature is not None:
        params["temperature"] = request.temperature
    return from_chat(request.messages, request.tools, request.tool_choice if request.tools else None,
                     request.parallel_tool_calls if request.tools else None, params=params)


def gemini_body(request: ModelRequest, model: str | None = None) -> dict:
    """The generateContent body (the model travels in the URL)."""
    from agentdbg.wire.gemini import from_chat

    params: dict[str, Any] = {}
    if request.temperature is not None:
        params["generationConfig"] = {"temperature": request.temperature}
    return from_chat(request.messages, request.tools, request.tool_choice if request.tools else None,
                     params=params)


#: keyed by codec name
BODIES: dict[str, Callable[[ModelRequest, str | None], dict]] = {
    "chat": chat_body, "responses": responses_body, "anthropic": anthropic_body,
    "gemini": gemini_body}
