"""The OpenAI Responses API codec (``POST /v1/responses``).

The chat form and its way back are in ``wire.responses``, the response object and the error
bodies in ``wire.responses_reply``, streaming in ``wire.responses_stream``; this module puts
them behind the one ``Codec`` protocol and reads a body into the conversation model: one part
per ``input`` item (``input[5]``), reasoning items with their encrypted content, hosted-tool
items, ``compaction`` and ``item_reference``; function, custom, namespaced (``{"type":
"namespace", "name": "multi_agent_v1", "tools": [...]}``) and hosted tools (``web_search``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from agentdbg.conversation import (
    JSON,
    AssistantText,
    Compaction,
    HostedCall,
    HostedResult,
    Instructions,
    JsonObject,
    Note,
    Other,
    Part,
    Reasoning,
    Reference,
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
from agentdbg.wire.codec import Codec, FindingLike, StreamReader, json_schema_error, schema_problem, type_word
from agentdbg.wire.common import ChatForm, ChatReply, as_dict
from agentdbg.wire.pairing import REFERENCE, Entry, entry
from agentdbg.wire.responses import AGENT_MESSAGE, CALL_OUTPUT, OUTPUT_CALL

CHAT_KEYS = ("input", "instructions", "tools", "tool_choice", "parallel_tool_calls")


def item_parts(items: list) -> list[Part]:
    """One part per input (or output) item, at ``input[i]``."""
    return [_part(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def _part(i: int, item: JsonObject) -> Part:
    at, kind, role = Where((i,), f"input[{i}]"), item.get("type"), item.get("role")
    if kind in (None, "message"):
        content = item.get("content")
        note = None if isinstance(content, (str, list)) else _odd(content)
        text = text_of(content)
        if role in ("system", "developer"):
            return Instructions(at, item, None, text, note=note)
        return AssistantText(at, item, None, text, note=note) if role == "assistant" else \
            UserText(at, item, None, text, note=note)
    if kind == AGENT_MESSAGE:      # one agent's message to another (Codex): the receiver's input
        return UserText(at, item, None, text_of(item.get("content")), note=_agent_message(item))
    if kind in CALL_OUTPUT:
        args = item.get("arguments") if kind == "function_call" else item.get("input") \
            if kind == "custom_tool_call" else {k: v for k, v in item.items()
                                                if k not in ("type", "id", "call_id")}
        return ToolCall(at, item, None, as_str(item.get("call_id")), as_str(item.get("name")) or str(kind),
                        args, "function" if kind == "function_call" else str(kind),
                        note=_arguments_note(item) if kind == "function_call" else None)
    if kind in OUTPUT_CALL:
        output = item.get("output")
        return ToolResult(at, item, None, as_str(item.get("call_id")), None, output,
                          note=None if isinstance(output, str) or (isinstance(output, list) and all(
                              isinstance(p, dict) and isinstance(p.get("text"), str) for p in output))
                          else _odd(output))
    if kind == "reasoning":
        return Reasoning(at, item, None, text_of(item.get("summary")) or text_of(item.get("content")),
                         None, as_str(item.get("encrypted_content")), as_str(item.get("id")))
    if kind == "compaction":
        return Compaction(at, item, None, as_str(item.get("encrypted_content")))
    if kind == "item_reference":
        return Reference(at, item, None, as_str(item.get("id")))
    if isinstance(kind, str) and kind.endswith("_call"):
        return HostedCall(at, item, None, as_str(item.get("id")), kind[:-len("_call")], item)
    if isinstance(kind, str) and kind.endswith(("_output", "_result", "_response")):
        return HostedResult(at, item, None, as_str(item.get("call_id") or item.get("id")), item)
    return Other(at, item, None, str(kind))


def _agent_message(item: JsonObject) -> Note:
    """Who wrote to whom (a remark shown above the text), and a mark where a part is encrypted
    (the model reads it; nobody else can)."""
    def who(value: JSON) -> str:
        return value if isinstance(value, str) else json_kind(value)
    content = item.get("content")
    sealed = isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "encrypted_content" for p in content)
    return Note("{author} → {recipient}" + ("  (encrypted_content)" if sealed else ""),
                (("author", who(item.get("author"))), ("recipient", who(item.get("recipient")))),
                wrong=False)


def _odd(value: JSON) -> Note:
    return Note(N_("   ({kind})"), (("kind", json_kind(value)),), shows=True, value=value)


def _arguments_note(item: JsonObject) -> Note | None:
    if "arguments" not in item:
        return Note(N_("(no arguments)"))
    if isinstance(item["arguments"], str):
        return None
    return Note(N_("   (arguments is {kind}, not a string)"), (("kind", json_kind(item["arguments"])),),
                shows=True, value=item["arguments"])


def tool_defs(tools: JSON, where: str = "tools", namespace: str | None = None) -> list[ToolDef]:
    """Function, custom, namespaced and hosted tools, namespaced ones under their group's name."""
    out: list[ToolDef] = []
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(t, dict):
            continue
        kind, name, at = t.get("type"), as_str(t.get("name")), f"{where}[{k}]"
        if isinstance(t.get("tools"), list) and name:       # a namespace of functions
            out.extend(tool_defs(t["tools"], f"{at}.tools", name))
        elif kind in ("function", "custom"):
            out.append(ToolDef(name or "", str(kind), namespace, as_str(t.get("description")),
                               t.get("parameters") if kind == "function" else t.get("format"), at, t))
        else:
            out.append(ToolDef(name or str(kind), "hosted", namespace,
                               as_str(t.get("description")), None, at, t))
    return out


class ResponsesCodec(Codec):
    name = "responses"
    label = "Responses API"
    paths = ("/responses",)
    stream_end = (b"response.completed", b"response.incomplete", b"response.failed")
    key = "input"
    unit = "item"
    stores = True
    text_input = True
    pairs_within = "request"      # an output answers the call of its call_id, anywhere
    result_texts: ClassVar[dict[str, str]] = {"orphan": "✗ orphan: no call in this request has this call_id",
                    "mismatch": "✗ call_id of a call of another kind",
                    "missing_id": "✗ no call_id"}
    no_result_id = "(no call_id)"

    def entry_label(self, item: JSON) -> str | None:
        """A message item's role, else the item's type (``function_call``)."""
        kind = item.get("type") if isinstance(item, dict) else None
        label = item.get("role") if kind in (None, "message") and isinstance(item, dict) else kind
        return label if isinstance(label, str) else None

    def pairing_entries(self, items: list) -> list[Entry]:
        out = []
        for i, item in enumerate(items):
            kind = item.get("type") if isinstance(item, dict) else None
            cid = item.get("call_id") if isinstance(item, dict) else None
            cid = cid if isinstance(cid, str) and cid else None
            if isinstance(kind, str) and kind in CALL_OUTPUT:
                out.append(entry("item", [((i,), cid, kind, False)]))
            elif isinstance(kind, str) and kind in OUTPUT_CALL:
                out.append(entry("item", results=[((i,), cid, kind, OUTPUT_CALL[kind])]))
            else:
                out.append(entry(REFERENCE if kind == "item_reference" else "item"))
        return out

    def shape_error(self, body: JSON) -> tuple[str, str | None] | None:
        if not isinstance(body, dict):
            return f"Invalid type for request body: expected an object, but got {type_word(body)} " \
                   "instead.", None
        items = body.get("input")
        if "input" in body and not isinstance(items, (str, list)):
            return (f"Invalid type for 'input': expected one of a string or an array of input items, "
                    f"but got {type_word(items)} instead.", "input")
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict):
                return (f"Invalid type for 'input[{i}]': expected an object, but got "
                        f"{type_word(item)} instead.", f"input[{i}]")
        prev = body.get("previous_response_id")
        if prev is not None and not isinstance(prev, str):
            return (f"Invalid type for 'previous_response_id': expected a string, but got "
                    f"{type_word(prev)} instead.", "previous_response_id")
        problem = schema_problem(body.get("tools"), "parameters", nested=False)
        return problem[:2] if problem else None

    def definition_error(self, body: JSON) -> tuple[str, str | None] | None:
        tools = body.get("tools") if isinstance(body, dict) else None
        found = json_schema_error(tools, "parameters", nested=False)
        if found is None:
            return None
        _, name, where, context, problem = found
        return f"Invalid schema for function '{name}': In context=({context}), {problem}.", where

    def chat_form(self, body: JsonObject) -> ChatForm:
        from agentdbg.wire.responses import to_chat

        return to_chat(body)

    def tools(self, body: JSON) -> list[ToolDef]:
        return tool_defs(body.get("tools") if isinstance(body, dict) else None)

    def top_parts(self, body: JSON) -> list[Part]:
        instructions = body.get("instructions") if isinstance(body, dict) else None
        if not isinstance(instructions, str):
            return []
        return [Instructions(Where((), "instructions"), instructions, None, instructions)]

    def entry_parts(self, i: int, item: JsonObject) -> list[Part]:
        return [_part(i, item)]

    def parse_request(self, body: JSON) -> Request:
        body = body if isinstance(body, dict) else {"input": body}
        parts = self.top_parts(body) + item_parts(self.items(body))
        return Request(self.name, parts, tool_defs(body.get("tools")), body.get("tool_choice"),
                       {k: v for k, v in body.items() if k not in CHAT_KEYS},
                       as_str(body.get("model")))

    def reasons(self, body: JsonObject) -> bool:
        reasoning = body.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        return isinstance(effort, str) and effort != "none"

    def answer_schema(self, body: JSON) -> JsonObject | None:
        text = as_dict(body.get("text")) if isinstance(body, dict) else {}
        fmt = as_dict(text.get("format"))
        if fmt.get("type") == "json_schema":
            return as_dict(fmt.get("schema"))
        return {} if fmt.get("type") == "json_object" else None

    def continues(self, body: JSON) -> str | None:
        prev = body.get("previous_response_id") if isinstance(body, dict) else None
        return prev if isinstance(prev, str) and prev else None

    def encode_request(self, messages: list[JsonObject], tools: list[JsonObject] | None = None,
                       tool_choice: JSON = None, parallel_tool_calls: bool | None = None, *,
                       params: JsonObject | None = None) -> JsonObject:
        from agentdbg.wire.responses import from_chat

        return from_chat(messages, tools, tool_choice, parallel_tool_calls, params=params)

    def tool_from_chat(self, tool: JsonObject) -> JsonObject:
        from agentdbg.wire.responses import tool_from_chat

        return tool_from_chat(tool)

    def rejection(self, findings: Sequence[FindingLike]) -> tuple[int, JsonObject] | None:
        from agentdbg.wire.responses_reply import rejection

        return rejection(findings)

    def answer(self, message: JsonObject, body: JsonObject, usage: JsonObject | None, finish: str | None,
               model_name: str = "offline") -> JsonObject:
        from agentdbg.wire.responses_reply import response_json

        return response_json(message, body, usage, finish, model_name)

    def stream(self, native: JsonObject, body: JsonObject) -> Iterator[bytes]:
        from agentdbg.wire.responses_stream import encode_stream

        return encode_stream(native)

    def accumulator(self) -> StreamReader:
        from agentdbg.wire.responses_stream import ResponsesAccumulator

        return ResponsesAccumulator()

    def reply(self, doc: JSON) -> ChatReply | None:
        from agentdbg.wire.responses_reply import chat_reply

        if not isinstance(doc, dict) or not isinstance(doc.get("output"), list):
            return None
        return chat_reply(doc)

    def output(self, native: JSON) -> list:
        out = native.get("output") if isinstance(native, dict) else None
        return [x for x in out if isinstance(x, dict)] if isinstance(out, list) else []
