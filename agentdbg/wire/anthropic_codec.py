"""The Anthropic Messages API codec (``POST /v1/messages``).

The chat form and its way back are in ``wire.anthropic``, the message object and the error
bodies in ``wire.anthropic_reply``, streaming in ``wire.anthropic_stream``; this module puts them
behind the one ``Codec`` protocol and reads a body into the conversation model: one part per
content block (``messages[3].content[1]``; a string content is one part at ``messages[3]``),
thinking with its signature, redacted thinking, server tool use and results; client tools and
server tools. Usage keeps the cache counts: ``input`` is ``input_tokens`` +
``cache_creation_input_tokens`` + ``cache_read_input_tokens``, each also kept as it came.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from agentdbg.conversation import (
    JSON,
    AssistantText,
    HostedCall,
    HostedResult,
    Instructions,
    JsonObject,
    Note,
    Other,
    Part,
    Reasoning,
    Request,
    ToolCall,
    ToolDef,
    ToolResult,
    UserText,
    Where,
    as_str,
    text_of,
)
from agentdbg.i18n import N_
from agentdbg.messages import json_kind
from agentdbg.wire.codec import Codec, FindingLike, StreamReader, json_schema_error, schema_problem
from agentdbg.wire.common import ChatForm, ChatReply, as_dict
from agentdbg.wire.pairing import CallRow, Entry, ResultRow

SERVER_CALLS = ("server_tool_use", "mcp_tool_use")   # answered inside the assistant turn

CHAT_KEYS = ("messages", "system", "tools", "tool_choice")
SERVER_CALLS = ("server_tool_use", "mcp_tool_use")


def message_parts(messages: list) -> list[Part]:
    return [part for i, m in enumerate(messages) if isinstance(m, dict)
            for part in entry_parts(i, m)]


def entry_parts(i: int, m: JsonObject) -> list[Part]:
    """The parts of ``messages[i]``: one per content block, or its string content."""
    role, content = m.get("role"), m.get("content")
    at = Where((i,), f"messages[{i}].content")
    if isinstance(content, list) and not content:
        return [Other(at, m, None, "content", note=Note(N_("content: [] (empty)")))]
    if isinstance(content, list):
        return [_block(role, Where((i, j), f"messages[{i}].content[{j}]"), block)
                for j, block in enumerate(content) if isinstance(block, dict)]
    if isinstance(content, str):
        return [_text(role, at, m, content, Note('content: ""', wrong=False) if not content else None)]
    return [Other(at, m, None, "content", note=Note(N_("(no content)")) if content is None else
                  Note(N_("   (not text or blocks)"), shows=True, value=content))]


def _text(role: JSON, at: Where, raw: JSON, text: str, note: Note | None = None) -> Part:
    if role == "system":
        return Instructions(at, raw, None, text, note=note)
    return AssistantText(at, raw, None, text, note=note) if role == "assistant" else \
        UserText(at, raw, None, text, note=note)


def result_note(content: JSON) -> Note | None:
    """A tool result's content that is neither text nor text blocks (the view shows it red)."""
    if isinstance(content, str) or (isinstance(content, list) and all(
            isinstance(p, dict) and isinstance(p.get("text"), str) for p in content)):
        return None
    return Note(N_("   ({kind})"), (("kind", json_kind(content)),), shows=True, value=content)


def _block(role: JSON, at: Where, block: JsonObject) -> Part:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return _text(role, at, block, text_of([block]), None if isinstance(text, str) and text
                     else Note(N_("(empty text block)")))
    if kind == "tool_use":
        args = block.get("input")
        return ToolCall(at, block, None, as_str(block.get("id")), as_str(block.get("name")), args,
                        note=None if isinstance(args, dict) else Note(
                            N_("   (input is {kind}, not an object)"), (("kind", json_kind(args)),),
                            shows=True, value=args))
    if kind == "tool_result":
        content = block.get("content", "")
        return ToolResult(at, block, None, as_str(block.get("tool_use_id")), None,
                          content, block.get("is_error") is True, note=result_note(content))
    if kind == "thinking":
        return Reasoning(at, block, None, str(block.get("thinking") or ""),
                         as_str(block.get("signature")), kind="thinking")
    if kind == "redacted_thinking":
        return Reasoning(at, block, None, "", None, as_str(block.get("data")),
                         kind="redacted_thinking")
    if kind in SERVER_CALLS:
        return HostedCall(at, block, None, as_str(block.get("id")), as_str(block.get("name")),
                          block.get("input"))
    if isinstance(kind, str) and kind.endswith("_tool_result"):
        return HostedResult(at, block, None, as_str(block.get("tool_use_id")), block.get("content"))
    return Other(at, block, None, str(kind))


def tool_defs(tools: JSON) -> list[ToolDef]:
    out: list[ToolDef] = []
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(t, dict):
            continue
        client = t.get("type") in (None, "custom")
        out.append(ToolDef(as_str(t.get("name")) or str(t.get("type")), "function" if client else
                           "hosted", None, as_str(t.get("description")),
                           t.get("input_schema") if client else None, f"tools[{k}]", t))
    return out


def _pairing_entry(i: int, m: JSON) -> Entry:
    role = m.get("role") if isinstance(m, dict) else None
    content = m.get("content") if isinstance(m, dict) else None
    calls: list[CallRow] = []
    results: list[ResultRow] = []
    for j, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict) or not isinstance(kind := block.get("type"), str):
            continue
        if role != "assistant":
            if kind == "tool_result":
                results.append(((i, j), _id(block.get("tool_use_id")), kind, None))
        elif kind == "tool_use" or kind in SERVER_CALLS:
            calls.append(((i, j), _id(block.get("id")), kind, kind != "tool_use"))
        elif kind.endswith("_tool_result"):
            results.append(((i, j), _id(block.get("tool_use_id")), kind, None))
    return (role if isinstance(role, str) else "", calls, results)


def _id(value: JSON) -> str | None:
    return value if isinstance(value, str) and value else None


class AnthropicCodec(Codec):
    name = "anthropic"
    label = "Anthropic Messages"
    paths = ("/messages",)
    stream_end = (b"message_stop",)
    secret_headers = ("x-api-key",)
    provider = "anthropic"
    entry_local = True
    pairs_within = "turn"         # a user turn's tool_result blocks answer the turn before
    merges = ("user", "assistant")  # consecutive same-role messages are one turn to the API
    skips = ("system",)           # accepted inside messages; neither calls nor answers
    result_texts: ClassVar[dict[str, str]] = {
        "orphan": "✗ orphan: no tool_use with this id in the assistant message before it",
        "mismatch": "✗ tool_use_id not among the previous assistant message's tool_use ids",
        "missing_id": "✗ no tool_use_id"}
    no_result_id = "(no tool_use_id)"
    hidden_text = N_("({n} earlier message(s) unchanged, no findings; --full shows them)")

    def pairing_entries(self, items: list) -> list[Entry]:
        return [_pairing_entry(i, m) for i, m in enumerate(items)]

    def shape_error(self, body: JSON) -> tuple[str, str | None] | None:
        if not isinstance(body, dict):
            return "request body: Input should be a valid dictionary", None
        messages = body.get("messages")
        if "messages" not in body:
            return "messages: Field required", "messages"
        if not isinstance(messages, list):
            return "messages: Input should be a valid list", "messages"
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                return f"messages.{i}: Input should be a valid dictionary", None
            content = m.get("content")
            if isinstance(content, list):
                for j, block in enumerate(content):
                    if not isinstance(block, dict):
                        return f"messages.{i}.content.{j}: Input should be a valid dictionary", None
        problem = schema_problem(body.get("tools"), "input_schema", nested=False)
        if problem:
            return f"tools.{problem[2]}.custom.input_schema: Input should be a valid dictionary", None
        return None

    def definition_error(self, body: JSON) -> tuple[str, str | None] | None:
        tools = body.get("tools") if isinstance(body, dict) else None
        found = json_schema_error(tools, "input_schema", nested=False)
        return (f"tools.{found[0]}.custom.input_schema: {found[4]}", None) if found else None

    def error(self, status: int, message: str, *, param: str | None = None,
              code: str | None = None, type_: str = "invalid_request_error", **extra: JSON) -> JsonObject:
        from agentdbg.wire.anthropic_reply import ERROR_STATUS, error_body

        if type_ not in ERROR_STATUS:
            type_ = {404: "not_found_error", 413: "request_too_large"}.get(
                status, "api_error" if status >= 500 else "invalid_request_error")
        body = error_body(message, type_)
        body["error"].update(extra)
        return body

    def bad_json(self) -> JsonObject:
        return self.error(400, "There was an error parsing the body of your request: it is not "
                               "valid JSON.")

    def chat_form(self, body: JsonObject) -> ChatForm:
        from agentdbg.wire.anthropic import to_chat

        return to_chat(body)

    def tools(self, body: JSON) -> list[ToolDef]:
        return tool_defs(body.get("tools") if isinstance(body, dict) else None)

    def top_parts(self, body: JSON) -> list[Part]:
        if not isinstance(body, dict) or "system" not in body:
            return []
        return [Instructions(Where((), "system"), body["system"], None, text_of(body["system"]))]

    def entry_parts(self, i: int, item: JsonObject) -> list[Part]:
        return entry_parts(i, item)

    def parse_request(self, body: JSON) -> Request:
        body = body if isinstance(body, dict) else {"messages": body}
        parts = self.top_parts(body) + message_parts(self.items(body))
        return Request(self.name, parts, tool_defs(body.get("tools")), body.get("tool_choice"),
                       {k: v for k, v in body.items() if k not in CHAT_KEYS},
                       as_str(body.get("model")))

    def answer_schema(self, body: JSON) -> JsonObject | None:
        # structured outputs: ``output_config.format``, or the beta's ``output_format``
        config = as_dict(body.get("output_config")) if isinstance(body, dict) else {}
        fmt = as_dict(config.get("format") if config else
                      body.get("output_format") if isinstance(body, dict) else None)
        if fmt.get("type") == "json_schema":
            return as_dict(fmt.get("schema"))
        return None

    def reasons(self, body: JsonObject) -> bool:
        thinking = body.get("thinking")
        return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")

    def encode_request(self, messages: list[JsonObject], tools: list[JsonObject] | None = None,
                       tool_choice: JSON = None, parallel_tool_calls: bool | None = None, *,
                       params: JsonObject | None = None) -> JsonObject:
        from agentdbg.wire.anthropic import from_chat

        return from_chat(messages, tools, tool_choice, parallel_tool_calls, params=params)

    def tool_from_chat(self, tool: JsonObject) -> JsonObject:
        from agentdbg.wire.anthropic import tool_from_chat

        return tool_from_chat(tool)

    def rejection(self, findings: Sequence[FindingLike]) -> tuple[int, JsonObject] | None:
        from agentdbg.wire.anthropic_reply import rejection

        return rejection(findings)

    def answer(self, message: JsonObject, body: JsonObject, usage: JsonObject | None, finish: str | None,
               model_name: str = "offline") -> JsonObject:
        from agentdbg.wire.anthropic_reply import message_json

        return message_json(message, body, usage, finish, model_name)

    def stream(self, native: JsonObject, body: JsonObject) -> Iterator[bytes]:
        from agentdbg.wire.anthropic_stream import encode_stream

        return encode_stream(native)

    def accumulator(self) -> StreamReader:
        from agentdbg.wire.anthropic_stream import AnthropicAccumulator

        return AnthropicAccumulator()

    def reply(self, doc: JSON) -> ChatReply | None:
        from agentdbg.wire.anthropic_reply import chat_reply

        if not isinstance(doc, dict) or doc.get("type") != "message":
            return None
        return chat_reply(doc)

    def output(self, native: JSON) -> list:
        content = native.get("content") if isinstance(native, dict) else None
        return [{"role": "assistant", "content": content}] if isinstance(content, list) else []
