"""A Chat Completions request read into the conversation model (``agentdbg.conversation``):
one part per text, call and result, at ``messages[3]`` (a call at ``messages[3].tool_calls[1]``),
the message ``name`` as the agent that wrote it; tools and usage too."""

from __future__ import annotations

from typing import Any

from agentdbg.conversation import (
    AssistantText,
    Instructions,
    Note,
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
)
from agentdbg.i18n import N_
from agentdbg.messages import json_kind, shown_json
from agentdbg.wire.common import as_dict

__all__ = ["as_str", "entry_parts", "message_parts", "tool_defs", "usage_of"]


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
    """The parts of chat messages, each at ``messages[i]`` (a call at ``.tool_calls[j]``); a
    content, a ``tool_calls`` or a call's arguments in a shape worth saying carry a ``Note``."""
    return [part for i, m in enumerate(messages) if isinstance(m, dict)
            for part in entry_parts(i, m, base)]


def entry_parts(i: int, m: dict, base: str = "messages") -> list[Part]:
    """The parts of one message, ``messages[i]``."""
    at, agent = Where((i,), f"{base}[{i}]"), as_str(m.get("name"))
    role = m.get("role")
    if role == "assistant":
        return _assistant(i, m, at, agent)
    if role in ("tool", "function"):
        result = ToolResult(at, m, agent, as_str(m.get("tool_call_id")),
                            as_str(m.get("name")) if role == "function" else None,
                            m.get("content"), note=_content_note(m))
        if role == "tool":
            return [result]
        return [Other(at, m, agent, "function", note=Note(
            N_("(legacy function result, name={name})"), (("name", str(m.get("name"))),),
            wrong=False)), result]
    note, text = _content_note(m), _text(m)
    if role in ("system", "developer"):
        return [Instructions(at, m, agent, text, note=note)]
    if role == "user":
        return [UserText(at, m, agent, text, note=note)]
    return [Other(at, m, agent, str(role), None if note else text, note=note)]


def _text(m: dict) -> str:
    content = m.get("content")
    if isinstance(content, list):      # content parts: a part without text adds none
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _content_note(m: dict) -> Note | None:
    """What the view says of a message's ``content`` when it is not text to show."""
    calls_turn = m.get("role") == "assistant" and bool(m.get("tool_calls"))
    if "content" not in m:
        return None if calls_turn else Note(N_("(no content key)"), wrong=False)
    content = m["content"]
    if content is None:
        return None if calls_turn else Note("content: null", wrong=False)
    if content == "":
        return Note('content: ""', wrong=False)
    if isinstance(content, str) or (isinstance(content, list) and all(
            isinstance(p, dict) and isinstance(p.get("text", ""), str) for p in content)):
        return None
    return Note(N_("   (content is {kind})"), (("kind", json_kind(content)),), shows=True,
                value=content)


def _assistant(i: int, m: dict, at: Where, agent: str | None) -> list[Part]:
    out: list[Part] = []
    thought = m.get("reasoning_content")
    if thought:
        out.append(Reasoning(at, m, agent, thought if isinstance(thought, str) else str(thought),
                             kind="reasoning_content"))
    note, text = _content_note(m), _text(m)
    if note is not None or text:
        out.append(AssistantText(at, m, agent, text, note=note))
    if "tool_calls" not in m:
        return out
    calls = m["tool_calls"]
    if not isinstance(calls, list) or not calls:
        out.append(Other(at, m, agent, "tool_calls", note=Note(
            "tool_calls: {value}", (("value", shown_json(calls)),)) if not isinstance(calls, list)
            else Note(N_("tool_calls: [] (empty)"))))
        return out
    for j, call in enumerate(calls):
        where = Where((i, j), f"{at.path}.tool_calls[{j}]")
        if not isinstance(call, dict):
            out.append(Other(where, call, agent, "call", note=Note("→ {value}",
                                                                   (("value", repr(call)),))))
            continue
        custom = call.get("type") == "custom"
        fn = as_dict(call.get("custom") if custom else call.get("function"))
        extra = as_dict(as_dict(call.get("extra_content")).get("google"))
        out.append(ToolCall(where, call, agent, as_str(call.get("id")), as_str(fn.get("name")),
                            fn.get("input" if custom else "arguments"),
                            "custom" if custom else "function",
                            as_str(extra.get("thought_signature")),
                            note=None if custom else _arguments_note(fn)))
    return out


def _arguments_note(fn: dict) -> Note | None:
    if "arguments" not in fn:
        return Note(N_("(no arguments)"))
    if isinstance(fn["arguments"], str):
        return None
    return Note(N_("   (arguments is {kind}, not a string)"), (("kind", json_kind(fn["arguments"])),),
                shows=True, value=fn["arguments"])


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
