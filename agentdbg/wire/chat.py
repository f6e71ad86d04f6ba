"""The Chat Completions codec (``POST /v1/chat/completions``): agentdbg's own chat form.

A Chat Completions body is its own chat form; its conversation model (``wire.chat_model``,
loaded when asked for: ``check`` on a chat history never needs it) has one part per text,
call and result, and the message ``name`` is the agent that wrote it. Streaming is in
``wire.chat_stream``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar, cast

from agentdbg.i18n import N_
from agentdbg.messages import canonical_json
from agentdbg.wire.chat_stream import StreamAccumulator, encode_stream
from agentdbg.wire.codec import Codec, FindingLike, json_schema_error, schema_problem, type_word
from agentdbg.wire.common import ChatForm, ChatReply, as_dict

if TYPE_CHECKING:
    from agentdbg.conversation import JSON, JsonObject, Part, Request, ToolDef
    from agentdbg.wire.pairing import Entry as PairingEntry

__all__ = ["ChatCodec", "StreamAccumulator", "completion_json", "encode_stream"]

PARAM_SUFFIX = re.compile(r"\s*\(param: ([^)]*)\)\s*$")
CHAT_KEYS = ("messages", "tools", "tool_choice", "parallel_tool_calls")


def completion_json(message: JsonObject, body: JsonObject, usage: JsonObject | None = None,
                    finish: str | None = None, model_name: str = "offline") -> JsonObject:
    """A chat.completion object; id and created derive from the request (deterministic)."""
    digest = hashlib.sha256(canonical_json(body).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return {"id": f"chatcmpl-{digest}", "object": "chat.completion", "created": 0,
            "model": body.get("model") or model_name,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish or ("tool_calls" if message.get("tool_calls")
                                                     else "stop")}],
            "usage": {k: v for k, v in (usage or {}).items() if k != "estimated"}}


def _call_id(call: object) -> str | None:
    cid = call.get("id") if type(call) is dict else None
    return cid if isinstance(cid, str) and cid else None


def _call_kind(call: object) -> str:
    kind = call.get("type") if type(call) is dict else None
    return kind if isinstance(kind, str) else "function"


class ChatCodec(Codec):
    name = "chat"
    label = "Chat Completions"
    paths = ("/chat/completions",)
    stream_end = (b"data: [DONE]",)
    chat_native = True
    parts_key = "tool_calls"
    result_texts: ClassVar[dict[str, str]] = {"orphan": N_("✗ orphan: no assistant tool_calls before it"),
                    "mismatch": N_("✗ tool_call_id not in the previous tool_calls"),
                    "missing_id": N_("✗ no tool_call_id")}
    no_result_id = N_("(no tool_call_id)")
    hidden_text = N_("({n} earlier message(s) unchanged, no findings; --full shows them)")
    ids_unique_in = "entry"      # frameworks number their calls call_0, call_1 … on every turn

    def shown_at(self, loc: tuple[int, ...]) -> str:
        return f"[{loc[0]}]"     # a call is shown at its assistant message

    def part_prefix(self, loc: tuple[int, ...]) -> str:
        return ""                # a message's calls are listed under it, each with its id

    def pairing_entries(self, items: list) -> list[PairingEntry]:
        """A ``role: "tool"`` message is one result; an assistant message's ``tool_calls``
        are its calls (this runs on every check of every request: one pass, little work)."""
        from agentdbg.wire.pairing import NO_CALLS, NO_RESULTS

        plain: dict[object, PairingEntry] = {}
        out: list[PairingEntry] = []
        append = out.append
        for i, m in enumerate(items):
            role = m.get("role") if type(m) is dict else None
            if role == "tool":
                tid = m.get("tool_call_id")
                append(("tool", NO_CALLS, [((i,), tid if type(tid) is str and tid else None,
                                           "tool", None)]))
                continue
            calls = m.get("tool_calls") if role == "assistant" else None
            if type(calls) is list and calls:
                append(("assistant", [((i, pos), _call_id(c), _call_kind(c), False)
                                     for pos, c in enumerate(calls)], NO_RESULTS))
                continue
            key = role if isinstance(role, str) else None
            entry = plain.get(key)
            if entry is None:
                entry = plain[key] = (key or "", NO_CALLS, NO_RESULTS)
            append(entry)
        return out

    def shape_error(self, body: JSON) -> tuple[str, str | None] | None:
        if not isinstance(body, dict):
            return f"Invalid type for request body: expected an object, but got {type_word(body)} " \
                   "instead.", None
        messages = body.get("messages")
        if "messages" not in body:
            return "Missing required parameter: 'messages'.", "messages"
        if not isinstance(messages, list):
            return (f"Invalid type for 'messages': expected an array, but got {type_word(messages)} "
                    "instead.", "messages")
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                return (f"Invalid type for 'messages[{i}]': expected an object, but got "
                        f"{type_word(m)} instead.", f"messages[{i}]")
        problem = schema_problem(body.get("tools"), "parameters", nested=True)
        return problem[:2] if problem else None

    def definition_error(self, body: JSON) -> tuple[str, str | None] | None:
        tools = body.get("tools") if isinstance(body, dict) else None
        found = json_schema_error(tools, "parameters", nested=True)
        if found is None:
            return None
        _, name, where, context, problem = found
        return f"Invalid schema for function '{name}': In context=({context}), {problem}.", where

    def chat_form(self, body: JsonObject) -> ChatForm:
        # shape_error has checked the body: messages an array of objects, tools an array
        messages = cast("list[JsonObject]", body["messages"])
        return ChatForm(messages=messages, tools=cast("list[JsonObject]", body.get("tools") or []),
                        tool_choice=body.get("tool_choice"),
                        parallel_tool_calls=cast("bool | None", body.get("parallel_tool_calls")),
                        sources=[f"messages[{i}]" for i in range(len(messages))],
                        locs=[(i,) for i in range(len(messages))],
                        params={k: v for k, v in body.items() if k not in CHAT_KEYS})

    def answer_schema(self, body: JSON) -> JsonObject | None:
        fmt = as_dict(body.get("response_format")) if isinstance(body, dict) else {}
        if fmt.get("type") == "json_schema":
            schema = as_dict(fmt.get("json_schema")).get("schema")
            return schema if isinstance(schema, dict) else {}
        return {} if fmt.get("type") == "json_object" else None

    def tools(self, body: JSON) -> list[ToolDef]:
        from agentdbg.wire.chat_model import tool_defs

        return tool_defs(body.get("tools") if isinstance(body, dict) else None)

    def entry_parts(self, i: int, item: JsonObject) -> list[Part]:
        from agentdbg.wire.chat_model import entry_parts

        return entry_parts(i, item)

    def parse_request(self, body: JSON) -> Request:
        from agentdbg.conversation import Request
        from agentdbg.wire.chat_model import as_str, message_parts, tool_defs

        body = body if isinstance(body, dict) else {"messages": body}
        messages = body.get("messages")
        return Request(self.name, message_parts(messages if isinstance(messages, list) else []),
                       tool_defs(body.get("tools")), body.get("tool_choice"),
                       {k: v for k, v in body.items() if k not in CHAT_KEYS},
                       as_str(body.get("model")))

    def encode_request(self, messages: list[JsonObject], tools: list[JsonObject] | None = None,
                       tool_choice: JSON = None, parallel_tool_calls: bool | None = None, *,
                       params: JsonObject | None = None) -> JsonObject:
        body: JsonObject = {**(params or {}), "messages": cast("list[JSON]", messages)}
        if tools:
            body["tools"] = cast("list[JSON]", tools)
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            body["parallel_tool_calls"] = parallel_tool_calls
        return body

    def rejection(self, findings: Sequence[FindingLike]) -> tuple[int, JsonObject] | None:
        for f in findings:
            # a text another provider returns (api_source) is not what this API answers
            if f.severity == "error" and f.api_error and not getattr(f, "api_source", None):
                match = PARAM_SUFFIX.search(f.api_error)
                text = f.api_error[:match.start()] if match else f.api_error
                param = match.group(1) if match else (f"messages[{f.index}]" if f.index is not None
                                                      else None)
                return 400, self.error(400, text, param=param)
        return None

    def answer(self, message: JsonObject, body: JsonObject, usage: JsonObject | None, finish: str | None,
               model_name: str = "offline") -> JsonObject:
        return completion_json(message, body, usage, finish, model_name)

    def stream(self, native: JsonObject, body: JsonObject) -> Iterator[bytes]:
        options = body.get("stream_options")
        include_usage = options.get("include_usage") if isinstance(options, dict) else None
        # ``native`` is this codec's own completion_json: its shape is known
        choice = cast("list[JsonObject]", native["choices"])[0]
        return encode_stream(cast("JsonObject", choice["message"]),
                             completion_id=cast(str, native["id"]), model=cast(str, native["model"]),
                             created=0, finish_reason=cast(str, choice["finish_reason"]),
                             usage=cast("JsonObject", native["usage"]) if include_usage else None)

    def accumulator(self) -> StreamAccumulator:
        return StreamAccumulator()

    def reply(self, doc: JSON) -> ChatReply | None:
        if not isinstance(doc, dict):
            return None
        choices = doc.get("choices") or [{}]
        choice = choices[0] if isinstance(choices, list) else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(message, dict):
            return None
        usage = doc.get("usage")
        return ChatReply(message, usage if isinstance(usage, dict) else {},
                         cast("str | None", choice.get("finish_reason")))
