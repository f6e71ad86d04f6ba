"""The provider protocol: one request in, one assistant message out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class ModelRequest:
    messages: list[dict]
    tools: list[dict] = field(default_factory=list)       # OpenAI ``tools`` array
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    model: str = "offline"
    timeout: float | None = None
    side_effect_tools: frozenset[str] = frozenset()  # tools the engine knows change things; not sent
    answer_schema: dict | None = None   # the request asks for a JSON answer of this schema ({}: any)
    turn: int = 0   # the turn of the history it asks for, as the screen numbers it (0: not known)

    def body(self) -> dict:
        """The Chat Completions request body this stands for."""
        body: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.tools:
            body["tools"] = self.tools
            body["tool_choice"] = self.tool_choice or "auto"
            if self.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self.parallel_tool_calls
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    @classmethod
    def from_body(cls, body: dict) -> ModelRequest:
        return cls(messages=body.get("messages") or [], tools=body.get("tools") or [],
                   tool_choice=body.get("tool_choice"),
                   parallel_tool_calls=body.get("parallel_tool_calls"),
                   temperature=body.get("temperature"), model=body.get("model") or "offline")


@dataclass
class ModelReply:
    message: dict                      # the assistant message, wire format
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None
    note: str | None = None            # the offline model's explanation; not sent anywhere
    latency_ms: float | None = None    # a replayed reply: the latency measured when recorded


class Provider(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> ModelReply: ...


@dataclass
class ProviderInfo:
    """A provider with what the user is told about it and what a transcript records."""

    provider: Provider
    description: Any                   # e.g. "gpt-4o-mini at https://api.openai.com/v1" (or a Msg)
    model: str = "offline"
    base_url: str | None = None        # never with credentials (see ``safe_url``)
    offline: bool = False              # the built-in planner: no network, not an LLM

    @property
    def name(self) -> str:
        return self.provider.name


def estimate_tokens(text: str) -> int:
    """A rough token count for models that do not report usage (4 chars ~ 1 token)."""
    return max(1, (len(text) + 3) // 4) if text else 0


def estimated_usage(request: ModelRequest, message: dict) -> dict:
    import json

    from agentdbg.wire.common import strip_wire

    # what a wire format keeps for its round trip is not text the model reads twice
    # the tool definitions are part of the prompt the model reads (and pays for)
    prompt = estimate_tokens(json.dumps(strip_wire(request.messages), ensure_ascii=False)) + (
        estimate_tokens(json.dumps(request.tools, ensure_ascii=False)) if request.tools else 0)
    completion = estimate_tokens(json.dumps(strip_wire(message), ensure_ascii=False))
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion, "estimated": True}


def tool_call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def sdk_dump(model: Any, **kw: Any) -> Any:
    """``model.model_dump(**kw)`` of an SDK response, without pydantic's serializer warnings:
    a field of an unexpected type (a tool call whose ``id`` is a list) is data the checker
    reports, not several lines of ``UserWarning`` on stderr."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.model_dump(**kw)
