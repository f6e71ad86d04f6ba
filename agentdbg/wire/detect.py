"""Which wire format a parsed JSON document is written in.

    detect_format({"model": "…", "input": [...]})           -> "responses"
    detect_format({"max_tokens": 1024, "system": "…", …})    -> "anthropic"
    detect_format([{"role": "tool", "tool_call_id": …}, …])  -> "chat"

Each format leaves marks only it uses (Responses: ``input``, ``instructions``, typed items such
as ``function_call``; Anthropic: a top-level ``system``, ``input_schema`` tools, content blocks
``tool_use`` / ``tool_result`` / ``thinking`` / ``image`` with a ``source``; Chat Completions:
roles ``tool`` / ``function`` / ``developer``, ``tool_calls``, ``tool_call_id``, nested
``function`` tools, ``image_url`` parts). The format with the most marks wins.

Ties: a document with no distinguishing mark at all (say ``[{"role": "user", "content":
"hi"}]``, or a body with only ``model``, ``max_tokens`` and string messages) is valid in all
three formats and means the same in each: no call, no result, nothing format-specific to
judge. It is reported as ``"chat"``, agentdbg's native format. A tie between marks of two
formats (a hand-mixed document) also resolves to ``"chat"``; ``--format`` overrides.
Anything that is not a request body, a messages array or an ``input`` array is ``None``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentdbg.messages import Vocabulary
from agentdbg.wire.common import as_list

RESPONSES_ITEMS = Vocabulary({
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
    "custom_tool_call_output", "computer_call", "computer_call_output", "local_shell_call",
    "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
    "apply_patch_call_output", "item_reference", "compaction", "web_search_call",
    "file_search_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
    "mcp_approval_response", "image_generation_call", "code_interpreter_call",
})
RESPONSES_PARTS = Vocabulary({"input_text", "output_text", "input_image", "input_file", "input_audio"})
ANTHROPIC_BLOCKS = Vocabulary({"tool_use", "tool_result", "thinking", "redacted_thinking",
                              "server_tool_use", "document", "search_result", "mcp_tool_use",
                              "mcp_tool_result", "container_upload"})
CHAT_PARTS = Vocabulary({"image_url", "input_audio", "file", "refusal"})
CHAT_ROLES = ("tool", "function", "developer")   # a tuple: a role may be any JSON, unhashable too
ANTHROPIC_KEYS = frozenset({"system", "anthropic_version", "thinking", "stop_sequences", "top_k"})
CHAT_KEYS = frozenset({"functions", "function_call", "response_format", "n", "logprobs",
                       "max_completion_tokens", "stream_options", "presence_penalty",
                       "frequency_penalty", "logit_bias"})
RESPONSES_KEYS = frozenset({"input", "instructions", "previous_response_id", "conversation",
                            "max_output_tokens"})


def detect_format(doc: Any) -> str | None:
    """"chat" | "responses" | "anthropic" | "gemini" for a request body or a bare array, else None."""
    if isinstance(doc, dict):
        if isinstance(doc.get("contents"), list) and "messages" not in doc:
            return "gemini"
        if isinstance(doc.get("messages"), list):
            anthropic, chat = _body_marks(doc)
            anthropic += _anthropic_marks(doc["messages"])
            if not anthropic:   # chat, whatever its own marks count (a tie is chat too)
                return "chat"
            return _winner(anthropic, chat + _chat_marks(doc["messages"]), responses=0)
        if RESPONSES_KEYS & doc.keys():
            return "responses"
        return None
    if isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        if all(isinstance(x.get("parts"), list) and "content" not in x for x in doc):
            return "gemini"       # Gemini contents: {"role": "user" | "model", "parts": [...]}
        anthropic, responses = _anthropic_marks(doc), _responses_marks(doc)
        if not (anthropic or responses):
            return "chat"
        return _winner(anthropic, _chat_marks(doc), responses=responses)
    return None


def _winner(anthropic: int, chat: int, *, responses: int) -> str:
    if responses and responses >= max(anthropic, chat):
        return "responses"
    return "anthropic" if anthropic > chat else "chat"


def _body_marks(body: dict) -> tuple[int, int]:
    a = 3 * len(ANTHROPIC_KEYS & body.keys())
    c = 3 * len(CHAT_KEYS & body.keys())
    for t in as_list(body.get("tools")):
        if isinstance(t, dict) and "input_schema" in t:
            a += 3
        elif isinstance(t, dict) and isinstance(t.get("function"), dict):
            c += 3
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("auto", "any", "tool", "none"):
        a += 2
    elif isinstance(choice, str) or (isinstance(choice, dict) and "function" in choice):
        c += 2
    return a, c


# The messages' marks, in two passes: a document with no Anthropic mark is Chat Completions
# however many Chat marks it has, so those are counted only when an Anthropic mark is found
# (one pass over a 100k-message history instead of one counting both).

def _contents(messages: list) -> Iterator[list]:
    """The content arrays of the messages (a string content, the common case, is skipped)."""
    for m in messages:
        if type(m) is not dict and not isinstance(m, dict):
            continue
        content = m.get("content")
        if type(content) is not str and isinstance(content, list):
            yield content


def _anthropic_marks(messages: list) -> int:
    a = 0
    for content in _contents(messages):
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in ANTHROPIC_BLOCKS or (isinstance(kind, str) and kind.endswith("_tool_result")) \
                    or (kind == "image" and "source" in part):
                a += 3
    return a


def _chat_marks(messages: list) -> int:
    c = 0
    chat_roles = CHAT_ROLES
    for m in messages:
        if type(m) is not dict and not isinstance(m, dict):
            continue
        if m.get("role") in chat_roles:
            c += 3
        if "tool_calls" in m or "tool_call_id" in m or "function_call" in m:
            c += 3
    for content in _contents(messages):   # (no Chat part is also an Anthropic block)
        for part in content:
            if isinstance(part, dict) and part.get("type") in CHAT_PARTS:
                c += 2
    return c


def _responses_marks(items: list) -> int:
    r = 0
    for item in items:
        if item.get("type") in RESPONSES_ITEMS:
            r += 3
        content = item.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") in RESPONSES_PARTS:
                r += 3
    return r
