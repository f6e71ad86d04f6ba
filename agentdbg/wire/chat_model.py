"""A Chat Completions request read into the conversation model (``agentdbg.conversation``):
one part per text, call and result, at ``messages[3]`` (a call at ``messages[3].tool_calls[1]``),
the message ``name`` as the agent that wrote it; tools and usage too."""

from __future__ import annotations

from typing import Any

from agentdbg.conversation import (
    AssistantText,
    Instructions,
    Other,
    Part,
    Reasoning,
    ToolCall,
    ToolDef,
    ToolResult,
    Usage,
    UserText,
    Where,
    as_str,
    count,
    text_of,
)
from agentdbg.wire.common import as_dict

__all__ = ["as_str", "message_parts", "tool_defs", "usage_of"]


def usage_of(usage: Any) -> Usage:
    """The usage model of a Chat Completions ``usage`` object."""
    u = as_dict(usage)
    prompt, completion = as_dict(u.get("prompt_tokens_details")), as_dict(u.get("completion_tokens_details"))
    return Usage(input=count(u.get("prompt_tokens")), output=count(u.get("completion_tokens")),
                 cached=count(prompt.get("cached_tokens")),
                 cache_creation=count(u.get("cache_creation_input_tokens")),
                 cache_read=count(u.get("cache_read_input_tokens")),
                 reasoning=count(completion.get("reasoning_tokens")))


def message_parts(messages: list, base: str = "messages") -> list[Part]:
    """The parts of chat messages, each at ``messages[i]`` (a call at ``.tool_calls[j]``)."""
    parts: list[Part] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        at, agent = Where((i,), f"{base}[{i}]"), as_str(m.get("name"))
        role, content = m.get("role"), m.get("content")
        if role in ("system", "developer"):
            parts.append(Instructions(at, m, agent, text_of(content)))
        elif role == "user":
            parts.append(UserText(at, m, agent, text_of(content)))
        elif role == "assistant":
            parts.extend(_assistant(i, m, at, agent))
        elif role in ("tool", "function"):
            parts.append(ToolResult(at, m, agent, as_str(m.get("tool_call_id")),
                                    as_str(m.get("name")) if role == "function" else None,
                                    content))
        else:
            parts.append(Other(at, m, agent, str(role)))
    return parts


def _assistant(i: int, m: dict, at: Where, agent: str | None) -> list[Part]:
    out: list[Part] = []
    if isinstance(m.get("reasoning_content"), str):
        out.append(Reasoning(at, m, agent, m["reasoning_content"]))
    text = text_of(m.get("content"))
    if text:
        out.append(AssistantText(at, m, agent, text))
    calls = m.get("tool_calls")
    for j, call in enumerate(calls if isinstance(calls, list) else []):
        call = call if isinstance(call, dict) else {}
        fn = as_dict(call.get("function") if call.get("type") != "custom" else call.get("custom"))
        extra = as_dict(as_dict(call.get("extra_content")).get("google"))
        out.append(ToolCall(Where((i, j), f"{at.path}.tool_calls[{j}]"), call, agent,
                            as_str(call.get("id")), as_str(fn.get("name")),
                            fn.get("arguments", fn.get("input")),
                            "custom" if call.get("type") == "custom" else "function",
                            as_str(extra.get("thought_signature"))))
    return out


def tool_defs(tools: Any) -> list[ToolDef]:
    """The tools of a Chat Completions request (function, custom, anything else as hosted)."""
    out: list[ToolDef] = []
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(t, dict):
            continue
        kind = t.get("type")
        fn = as_dict(t.get("custom") if kind == "custom" else t.get("function"))
        name = as_str(fn.get("name")) or as_str(t.get("name")) or str(kind)
        out.append(ToolDef(name, "custom" if kind == "custom" else "function" if fn else "hosted",
                           None, as_str(fn.get("description")), fn.get("parameters"),
                           f"tools[{k}]", t))
    return out
