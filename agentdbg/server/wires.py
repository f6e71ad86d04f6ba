"""The three wire formats as ``serve`` and ``proxy`` see them: one descriptor per endpoint.

``WIRES["chat"]``, ``WIRES["responses"]``, ``WIRES["anthropic"]`` each know the format's path,
how to tell a body that cannot be processed (``shape_error``, as the real API's schema check
words it), its chat form, how to judge it (the format's checker: findings and the pairing they
were judged on), how the real API rejects it, how to answer it (plain and streaming), how to
rebuild a relayed response (plain or streamed), and how it words an error. Chat Completions
is one of the three, so serve and the proxy have one code path for all of them.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentdbg.wire.common import ChatForm, ChatReply

OPENAI_BAD_JSON = ("We could not parse the JSON body of your request. (HINT: This likely means you "
                   "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
                   "but what was sent was not valid JSON.)")


def _type_word(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), "a value")


def _schema_problem(tools: Any, schema_key: str, nested: bool) -> tuple[str, str, int] | None:
    """(message, param, tool index) for a tool definition the API cannot read."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        return (f"Invalid type for 'tools': expected an array, but got {_type_word(tools)} instead.",
                "tools", 0)
    for k, t in enumerate(tools):
        if not isinstance(t, dict):
            return (f"Invalid type for 'tools[{k}]': expected an object, but got {_type_word(t)} "
                    "instead.", f"tools[{k}]", k)
        fn = t.get("function") if nested else t
        if not isinstance(fn, dict):
            continue
        where = f"tools[{k}].function.{schema_key}" if nested else f"tools[{k}].{schema_key}"
        schema = fn.get(schema_key)
        name = fn.get("name")
        if schema_key in fn and not isinstance(schema, dict):
            return f"Invalid schema for function '{name}': {schema!r} is not of type 'object'.", where, k
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(schema, dict) and "properties" in schema and not isinstance(props, dict):
            return (f"Invalid schema for function '{name}': {props!r} is not of type 'object'.",
                    f"{where}.properties", k)
    return None


def definition_error(wire_name: str, body: Any) -> tuple[str, str | None] | None:
    """(message, param) for a tool definition that is not a JSON Schema: the API validates
    each one (``serve`` answers 400; the proxy still checks and records such a request)."""
    from agentdbg.schemas import schema_error

    nested = wire_name == "chat"
    key = "input_schema" if wire_name == "anthropic" else "parameters"
    tools = body.get("tools") if isinstance(body, dict) else None
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        fn = t.get("function") if nested and isinstance(t, dict) else t
        if not isinstance(fn, dict) or not isinstance(fn.get(key), dict):
            continue
        schema = fn[key]
        problem = schema_error(schema)
        if problem is not None:
            context = ", ".join(repr(p) for p in problem[0]) + ("," if len(problem[0]) == 1 else "")
            where = f"tools[{k}].function.{key}" if nested else f"tools[{k}].{key}"
            if wire_name == "anthropic":
                return f"tools.{k}.custom.input_schema: {problem[1]}", None
            return (f"Invalid schema for function '{fn.get('name')}': In context=({context}), "
                    f"{problem[1]}.", where)
    return None


@dataclass(frozen=True)
class Wire(ABC):
    """What every format shares; subclasses fill in the format's own pieces."""

    name: str
    label: str                         # how the view names the format
    path: str                          # the endpoint under /v1
    stream_end: tuple[bytes, ...]      # bytes that say the stream is complete

    # -- reading a request --------------------------------------------------------------
    @abstractmethod
    def shape_error(self, body: Any) -> tuple[str, str | None] | None:
        """(message, param) when the body cannot be processed at all, else None."""

    @abstractmethod
    def chat_form(self, body: dict) -> ChatForm:
        ...

    @abstractmethod
    def analyze(self, body: dict, profile: str, *, prior: list | None = None,
                in_progress: bool = False) -> tuple[list, Any]:
        """The format checker's findings and the pairing they were judged on."""

    @abstractmethod
    def rejection(self, findings: list) -> tuple[int, dict] | None:
        ...

    def error(self, status: int, message: str, *, param: str | None = None,
              code: str | None = None, type_: str = "invalid_request_error", **extra: Any) -> dict:
        return {"error": {"message": message, "type": type_, "param": param, "code": code, **extra}}

    def bad_json(self) -> dict:
        return self.error(400, OPENAI_BAD_JSON)

    # -- answering ------------------------------------------------------------------------
    @abstractmethod
    def answer(self, message: dict, body: dict, usage: dict | None, finish: str | None,
               model_name: str = "offline") -> dict:
        ...

    @abstractmethod
    def stream(self, native: dict, body: dict) -> Iterator[bytes]:
        ...

    # -- reading a response ---------------------------------------------------------------
    @abstractmethod
    def accumulator(self) -> Any:
        ...

    @abstractmethod
    def reply(self, doc: Any) -> ChatReply | None:
        """The chat reply of a plain (non-streamed) response body, None when it is not one."""

    def output(self, native: Any) -> list:
        """The native items a response adds to the conversation (Responses: output items)."""
        return []


class ChatWire(Wire):
    def shape_error(self, body: Any) -> tuple[str, str | None] | None:
        if not isinstance(body, dict):
            return f"Invalid type for request body: expected an object, but got {_type_word(body)} " \
                   "instead.", None
        messages = body.get("messages")
        if "messages" not in body:
            return "Missing required parameter: 'messages'.", "messages"
        if not isinstance(messages, list):
            return (f"Invalid type for 'messages': expected an array, but got {_type_word(messages)} "
                    "instead.", "messages")
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                return (f"Invalid type for 'messages[{i}]': expected an object, but got "
                        f"{_type_word(m)} instead.", f"messages[{i}]")
        problem = _schema_problem(body.get("tools"), "parameters", nested=True)
        return problem[:2] if problem else None

    def chat_form(self, body: dict) -> ChatForm:
        messages = body["messages"]
        keys = ("messages", "tools", "tool_choice", "parallel_tool_calls")
        return ChatForm(messages=messages, tools=body.get("tools") or [],
                        tool_choice=body.get("tool_choice"),
                        parallel_tool_calls=body.get("parallel_tool_calls"),
                        sources=[f"messages[{i}]" for i in range(len(messages))],
                        locs=[(i,) for i in range(len(messages))],
                        params={k: v for k, v in body.items() if k not in keys})

    def analyze(self, body: dict, profile: str, *, prior: list | None = None,
                in_progress: bool = False) -> tuple[list, Any]:
        from agentdbg.checker import check
        from agentdbg.checker.pairing import analyze

        return (check(body, profile, in_progress=in_progress),
                analyze(body.get("messages") or [], in_progress=in_progress))

    def rejection(self, findings: list) -> tuple[int, dict] | None:
        from agentdbg.wire.chat import rejection

        return rejection(findings)

    def answer(self, message: dict, body: dict, usage: dict | None, finish: str | None,
               model_name: str = "offline") -> dict:
        from agentdbg.wire.chat import completion_json

        return completion_json(message, body, usage, finish, model_name)

    def stream(self, native: dict, body: dict) -> Iterator[bytes]:
        from agentdbg.wire.chat import encode_stream

        include_usage = (body.get("stream_options") or {}).get("include_usage") \
            if isinstance(body.get("stream_options"), dict) else None
        choice = native["choices"][0]
        return encode_stream(choice["message"], completion_id=native["id"], model=native["model"],
                             created=0, finish_reason=choice["finish_reason"],
                             usage=native["usage"] if include_usage else None)

    def accumulator(self) -> Any:
        return ChatAccumulator()

    def reply(self, doc: Any) -> ChatReply | None:
        try:
            choice = (doc.get("choices") or [{}])[0]
            message = choice.get("message")
        except (AttributeError, TypeError, IndexError, KeyError):
            return None
        if not isinstance(message, dict):
            return None
        usage = doc.get("usage")
        return ChatReply(message, usage if isinstance(usage, dict) else {}, choice.get("finish_reason"))


class ChatAccumulator:
    """``wire.chat.StreamAccumulator`` with the interface of the other formats' accumulators."""

    def __init__(self) -> None:
        from agentdbg.wire.chat import StreamAccumulator

        self.inner = StreamAccumulator()
        self.native: dict = {}

    def feed(self, data: bytes) -> None:
        self.inner.feed(data)

    def close(self) -> None:
        self.inner.feed(b"\n")

    @property
    def reply(self) -> ChatReply:
        return ChatReply(self.inner.message, self.inner.usage, self.inner.finish_reason)

    def shape(self) -> list[str]:
        return self.inner.shape()


class ResponsesWire(Wire):
    def shape_error(self, body: Any) -> tuple[str, str | None] | None:
        if not isinstance(body, dict):
            return f"Invalid type for request body: expected an object, but got {_type_word(body)} " \
                   "instead.", None
        items = body.get("input")
        if "input" in body and not isinstance(items, (str, list)):
            return (f"Invalid type for 'input': expected one of a string or an array of input items, "
                    f"but got {_type_word(items)} instead.", "input")
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict):
                return (f"Invalid type for 'input[{i}]': expected an object, but got "
                        f"{_type_word(item)} instead.", f"input[{i}]")
        prev = body.get("previous_response_id")
        if prev is not None and not isinstance(prev, str):
            return (f"Invalid type for 'previous_response_id': expected a string, but got "
                    f"{_type_word(prev)} instead.", "previous_response_id")
        problem = _schema_problem(body.get("tools"), "parameters", nested=False)
        return problem[:2] if problem else None

    def chat_form(self, body: dict) -> ChatForm:
        from agentdbg.wire.responses import to_chat

        return to_chat(body)

    def analyze(self, body: dict, profile: str, *, prior: list | None = None,
                in_progress: bool = False) -> tuple[list, Any]:
        from agentdbg.checker.formats import analyze_responses

        return analyze_responses(body, profile, prior=prior, in_progress=in_progress)

    def rejection(self, findings: list) -> tuple[int, dict] | None:
        from agentdbg.wire.responses_reply import rejection

        return rejection(findings)

    def answer(self, message: dict, body: dict, usage: dict | None, finish: str | None,
               model_name: str = "offline") -> dict:
        from agentdbg.wire.responses_reply import response_json

        return response_json(message, body, usage, finish, model_name)

    def stream(self, native: dict, body: dict) -> Iterator[bytes]:
        from agentdbg.wire.responses_stream import encode_stream

        return encode_stream(native)

    def accumulator(self) -> Any:
        from agentdbg.wire.responses_stream import ResponsesAccumulator

        return ResponsesAccumulator()

    def reply(self, doc: Any) -> ChatReply | None:
        from agentdbg.wire.responses_reply import chat_reply

        if not isinstance(doc, dict) or not isinstance(doc.get("output"), list):
            return None
        return chat_reply(doc)

    def output(self, native: Any) -> list:
        out = native.get("output") if isinstance(native, dict) else None
        return [x for x in out if isinstance(x, dict)] if isinstance(out, list) else []


class AnthropicWire(Wire):
    def shape_error(self, body: Any) -> tuple[str, str | None] | None:
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
        problem = _schema_problem(body.get("tools"), "input_schema", nested=False)
        if problem:
            return f"tools.{problem[2]}.custom.input_schema: Input should be a valid dictionary", None
        return None

    def error(self, status: int, message: str, *, param: str | None = None,
              code: str | None = None, type_: str = "invalid_request_error", **extra: Any) -> dict:
        from agentdbg.wire.anthropic_reply import ERROR_STATUS, error_body

        if type_ not in ERROR_STATUS:
            type_ = {404: "not_found_error", 413: "request_too_large"}.get(
                status, "api_error" if status >= 500 else "invalid_request_error")
        body = error_body(message, type_)
        body["error"].update(extra)
        return body

    def bad_json(self) -> dict:
        return self.error(400, "There was an error parsing the body of your request: it is not "
                               "valid JSON.")

    def chat_form(self, body: dict) -> ChatForm:
        from agentdbg.wire.anthropic import to_chat

        return to_chat(body)

    def analyze(self, body: dict, profile: str, *, prior: list | None = None,
                in_progress: bool = False) -> tuple[list, Any]:
        from agentdbg.checker.formats import analyze_anthropic

        return analyze_anthropic(body, profile, in_progress=in_progress)

    def rejection(self, findings: list) -> tuple[int, dict] | None:
        from agentdbg.wire.anthropic_reply import rejection

        return rejection(findings)

    def answer(self, message: dict, body: dict, usage: dict | None, finish: str | None,
               model_name: str = "offline") -> dict:
        from agentdbg.wire.anthropic_reply import message_json

        return message_json(message, body, usage, finish, model_name)

    def stream(self, native: dict, body: dict) -> Iterator[bytes]:
        from agentdbg.wire.anthropic_stream import encode_stream

        return encode_stream(native)

    def accumulator(self) -> Any:
        from agentdbg.wire.anthropic_stream import AnthropicAccumulator

        return AnthropicAccumulator()

    def reply(self, doc: Any) -> ChatReply | None:
        from agentdbg.wire.anthropic_reply import chat_reply

        if not isinstance(doc, dict) or doc.get("type") != "message":
            return None
        return chat_reply(doc)

    def output(self, native: Any) -> list:
        content = native.get("content") if isinstance(native, dict) else None
        return [{"role": "assistant", "content": content}] if isinstance(content, list) else []


WIRES: dict[str, Wire] = {
    "chat": ChatWire("chat", "Chat Completions", "/chat/completions", (b"data: [DONE]",)),
    "responses": ResponsesWire("responses", "Responses API", "/responses",
                               (b"response.completed", b"response.incomplete", b"response.failed")),
    "anthropic": AnthropicWire("anthropic", "Anthropic Messages", "/messages", (b"message_stop",)),
}


def error_text(doc: Any) -> str:
    """The message of an error body in any of the three shapes (for one line on a console)."""
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"])
    return json.dumps(doc, ensure_ascii=False)[:300]
