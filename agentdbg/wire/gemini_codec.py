"""The Gemini API codec: ``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse`` (the same under ``/v1``).

The chat form and its way back are in ``wire.gemini``; here: the conversation model (one part
per ``contents[i].parts[j]``, ``thought`` parts and ``thoughtSignature`` as reasoning), the
response object (``candidates[0].content``, ``usageMetadata``), streaming (one JSON
``GenerateContentResponse`` per ``data:`` event, text arriving in pieces, calls whole), and the
error body ``{"error": {"code", "message", "status"}}``. The key travels in ``x-goog-api-key``
or ``?key=``; the model in the path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import ClassVar

from agentdbg.conversation import (
    JSON,
    AssistantText,
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
    Usage,
    UserText,
    Where,
    as_str,
    count,
    text_of,
)
from agentdbg.i18n import N_
from agentdbg.wire.codec import Codec, FindingLike, StreamReader, type_word
from agentdbg.wire.common import (
    WIRE,
    ChatForm,
    ChatReply,
    SSEParser,
    as_dict,
    as_list,
    canonical,
    digest,
    hex_id,
    parse_event,
    pieces,
    seal,
    strip_wire,
    usage_counts,
    utf8,
)
from agentdbg.wire.gemini import CHAT_KEYS, _model, field
from agentdbg.wire.pairing import CallRow, Entry, ResultRow

VERSIONS = ("/v1beta", "/v1")
MODEL_PATH = re.compile(r"/models/([^/:]+):")
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
          404: "NOT_FOUND", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
          503: "UNAVAILABLE"}
FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
          "RECITATION": "content_filter", "PROHIBITED_CONTENT": "content_filter"}


def usage_of(meta: JSON) -> Usage:
    m = as_dict(meta)
    output, thoughts = count(m.get("candidatesTokenCount")), count(m.get("thoughtsTokenCount"))
    return Usage(input=count(m.get("promptTokenCount")),
                 output=None if output is None and thoughts is None else (output or 0) + (thoughts or 0),
                 cached=count(m.get("cachedContentTokenCount")), reasoning=thoughts)


def content_parts(contents: list) -> list[Part]:
    return [part for i, content in enumerate(contents) for part in entry_parts(i, as_dict(content))]


def entry_parts(i: int, content: JsonObject) -> list[Part]:
    """The parts of ``contents[i]``: one per part."""
    model = content.get("role") == "model"
    parts = content.get("parts")
    if isinstance(parts, list) and parts:
        return [_part(model, Where((i, j), f"contents[{i}].parts[{j}]"), as_dict(part))
                for j, part in enumerate(parts)]
    return [Other(Where((i,), f"contents[{i}].parts"), content, None, "parts", note=Note(
        N_("parts: [] (empty)")) if isinstance(parts, list) else Note(
        N_("   (parts is not an array)"), shows=True, value=parts))]


def _part(model: bool, at: Where, part: JsonObject) -> Part:
    signature = as_str(field(part, "thoughtSignature"))
    call, response = field(part, "functionCall"), field(part, "functionResponse")
    if isinstance(call, dict):
        return ToolCall(at, part, None, as_str(call.get("id")), as_str(call.get("name")),
                        call.get("args"), signature=signature)
    if isinstance(response, dict):
        return ToolResult(at, part, None, as_str(response.get("id")), as_str(response.get("name")),
                          response.get("response"))
    text = part.get("text")
    if isinstance(text, str):
        if part.get("thought"):
            return Reasoning(at, part, None, text, signature, kind="thought")
        note = None if text else Note('text: ""', wrong=False)
        return AssistantText(at, part, None, text, note=note) if model else \
            UserText(at, part, None, text, note=note)
    return Other(at, part, None, next(iter(part), ""))


def tool_defs(tools: JSON) -> list[ToolDef]:
    out: list[ToolDef] = []
    for k, t in enumerate(as_list(tools)):
        declarations = field(t, "functionDeclarations")
        if isinstance(declarations, list):
            for n, d in enumerate(declarations):
                d = as_dict(d)
                out.append(ToolDef(as_str(d.get("name")) or "", "function", None,
                                   as_str(d.get("description")),
                                   field(d, "parametersJsonSchema") or d.get("parameters"),
                                   f"tools[{k}].functionDeclarations[{n}]", d))
        elif isinstance(t, dict) and t:
            out.append(ToolDef(next(iter(t)), "hosted", None, None, None, f"tools[{k}]", t))
    return out


def chat_reply(doc: JsonObject) -> ChatReply:
    """The chat assistant message (+ usage, finish reason) of a GenerateContentResponse."""
    candidate = as_dict(as_list(doc.get("candidates"))[0]) if as_list(doc.get("candidates")) else {}
    content = as_dict(candidate.get("content"))
    form = ChatForm()
    _model(form, 0, {"role": "model", "parts": as_list(content.get("parts"))})
    message = form.messages[0]
    seal(message)
    reason = candidate.get("finishReason")
    finish = "tool_calls" if message.get("tool_calls") else FINISH.get(str(reason), "stop")
    return ChatReply(message, usage_of(doc.get("usageMetadata")).counts(), finish)


def response_json(message: JsonObject, body: JsonObject, usage: JsonObject | None, finish: str | None,
                  model_name: str) -> JsonObject:
    """A GenerateContentResponse for a chat assistant reply (ids derive from the request). A
    thinking request gets the reasoning as a thought part and a signature on the first call."""
    from agentdbg.wire.gemini import _model_content

    seed = digest(body)
    wire = as_dict(message.get(WIRE))
    content = as_dict(wire["content"]) if "seen" in wire and wire["seen"] == canonical(strip_wire(message)) \
        else _model_content(message)
    parts: list[JsonObject] = [dict(as_dict(p)) for p in as_list(content.get("parts"))]
    first = next((p for p in parts if isinstance(field(p, "functionCall"), dict)), None)
    if first is not None and not field(first, "thoughtSignature") and _thinks(body):
        first["thoughtSignature"] = hex_id("", seed, "signature", length=64)
    prompt, completion = usage_counts(usage)
    reason = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}.get(finish or "", "STOP")
    return {"candidates": [{"content": {"role": "model", "parts": list[JSON](parts)},
                            "finishReason": reason,
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                              "totalTokenCount": prompt + completion},
            "modelVersion": body.get("model") or model_name,
            "responseId": hex_id("", seed, "response", length=24)}


def _thinks(body: JsonObject) -> bool:
    config = as_dict(field(as_dict(field(body, "generationConfig")), "thinkingConfig"))
    return bool(config) and config.get("thinkingBudget") != 0


class GeminiAccumulator:
    """Feed raw SSE bytes as they pass; each event is a whole GenerateContentResponse whose
    parts continue the ones before (text in pieces, calls whole). Never raises."""

    def __init__(self) -> None:
        self._parser = SSEParser()
        self.events = 0
        self.notes: list[str] = []
        self.parts: list[JsonObject] = []
        self._texts: dict[int, list[str]] = {}   # part -> its text pieces, joined once at the end
        self.last: JsonObject = {}
        self.finish: str | None = None

    def feed(self, data: bytes) -> None:
        for _, raw in self._parser.feed(data):
            self._event(raw)

    def close(self) -> None:
        for _, raw in self._parser.close():
            self._event(raw)
        if self.events and self.finish is None:
            self.notes.append(N_("the stream ended before a candidate's finishReason: the "
                                 "response is partial"))

    def _event(self, raw: str) -> None:
        doc = parse_event(raw, self.notes)
        if doc is None:
            return
        self.events += 1
        self.last = doc
        candidates = as_list(doc.get("candidates"))
        candidate = as_dict(candidates[0]) if candidates else {}
        reason = candidate.get("finishReason")
        if isinstance(reason, str):
            self.finish = reason
        for part in as_list(as_dict(candidate.get("content")).get("parts")):
            if not isinstance(part, dict):
                self.notes.append(N_("a part that is {kind}: {raw}").format(kind=type_word(part),
                                                                           raw=repr(raw[:60])))
                continue
            prev = self.parts[-1] if self.parts else None
            if prev is not None and _continues(prev, part):
                self._texts.setdefault(len(self.parts) - 1, [str(prev["text"])]).append(str(part["text"]))
                if field(part, "thoughtSignature"):
                    prev["thoughtSignature"] = field(part, "thoughtSignature")
            else:
                self._join()
                self.parts.append(dict(part))

    def _join(self) -> None:
        """The text pieces of a part as one string (linear: no ``s += piece`` per event)."""
        for k, pieces_ in self._texts.items():
            self.parts[k]["text"] = "".join(pieces_)
        self._texts.clear()

    @property
    def native(self) -> JsonObject:
        self._join()
        candidate: JsonObject = {"content": {"role": "model", "parts": list[JSON](self.parts)},
                                 "index": 0}
        if self.finish is not None:
            candidate["finishReason"] = self.finish
        return {**self.last, "candidates": [candidate]}

    @property
    def reply(self) -> ChatReply:
        return chat_reply(self.native)

    def shape(self) -> list[str]:
        out = list(self.notes)
        for part in self.parts:
            call = field(part, "functionCall")
            if isinstance(call, dict):
                said = N_("call {name} in one part, with its thoughtSignature") \
                    if field(part, "thoughtSignature") else N_("call {name} in one part")
                out.append(said.format(name=call.get("name")))
        return out


def _continues(prev: JsonObject, part: JsonObject) -> bool:
    return (isinstance(prev.get("text"), str) and isinstance(part.get("text"), str)
            and bool(prev.get("thought")) == bool(part.get("thought"))
            and set(part) <= {"text", "thought", "thoughtSignature", "thought_signature"})


def encode_stream(native: JsonObject) -> Iterator[bytes]:
    """The events a real ``:streamGenerateContent?alt=sse`` answer sends: text in pieces,
    each call whole, the finish reason and usage on the last event."""
    candidate = as_dict(as_list(native.get("candidates"))[0])
    parts = as_list(as_dict(candidate.get("content")).get("parts"))
    base = {k: v for k, v in native.items() if k not in ("candidates", "usageMetadata")}
    chunks: list[list[JSON]] = []
    for part in parts:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(part, dict) and isinstance(text, str) and len(part) <= 2:
            chunks += [[{**part, "text": piece}] for piece in pieces(text, 16) or [""]]
        else:
            chunks.append([part])
    for n, chunk in enumerate(chunks or [[]]):
        first: JsonObject = {"content": {"role": "model", "parts": list[JSON](chunk)}, "index": 0}
        event: JsonObject = {"candidates": [first], **base}
        if n == len(chunks or [[]]) - 1:
            first["finishReason"] = candidate.get("finishReason", "STOP")
            event["usageMetadata"] = native.get("usageMetadata")
        yield b"data: " + utf8(json.dumps(event, ensure_ascii=False)) + b"\r\n\r\n"


def _pairing_entry(i: int, content: JSON) -> Entry:
    entry = content if isinstance(content, dict) else {}
    listed = entry.get("parts")
    parts = listed if isinstance(listed, list) else []
    model = entry.get("role") == "model"
    calls: list[CallRow] = []
    results: list[ResultRow] = []
    for j, part in enumerate(parts):
        if model:
            call = field(part, "functionCall")
            if isinstance(call, dict):    # no id: the call is known by where it is
                cid = call.get("id") if isinstance(call.get("id"), str) and call["id"] else f"call_{i}_{j}"
                calls.append(((i, j), cid, "functionCall", False))
            continue
        response = field(part, "functionResponse")
        if isinstance(response, dict):
            rid = response.get("id")
            results.append(((i, j), rid if isinstance(rid, str) else None, "functionResponse", None))
    return ("model" if model else "user", calls, results)


class GeminiCodec(Codec):
    name = "gemini"
    label = "Gemini API"
    paths = tuple(f"{v}/models/{{model}}:{m}" for v in VERSIONS
                  for m in ("generateContent", "streamGenerateContent"))
    stream_end = (b'"finishReason"',)
    key = "contents"
    unit = "content"
    secret_headers = ("x-goog-api-key",)
    secret_params = ("key",)
    provider = "gcp.gemini"
    pairs_by = "position"         # the k-th functionResponse answers the k-th functionCall
    pairs_within = "turn"         # of the model content just before
    calling_role = "model"
    parts_key = "parts"
    result_texts: ClassVar[dict[str, str]] = {
        "orphan": "✗ orphan: no function call in the model turn before it answers to it"}

    def pairing_entries(self, items: list) -> list[Entry]:
        return [_pairing_entry(i, c) for i, c in enumerate(items)]

    def routes(self) -> list[str]:
        return list(self.paths)

    def upstream_url(self, upstream: str, path: str) -> str:
        root = upstream.rstrip("/")
        for version in VERSIONS:
            if root.endswith(version):
                root = root[:-len(version)]
                break
        return root + path

    def streams(self, path: str, body: JSON) -> bool:
        return ":streamGenerateContent" in path

    def model_of(self, path: str, body: JSON) -> str | None:
        match = MODEL_PATH.search(path)
        if match:
            return match.group(1)
        model = body.get("model") if isinstance(body, dict) else None
        return model.removeprefix("models/") if isinstance(model, str) else None

    def shape_error(self, body: JSON) -> tuple[str, str | None] | None:
        if not isinstance(body, dict):
            return f"Invalid JSON payload received. Expected an object, got {type_word(body)}.", None
        contents = field(body, "contents")
        if not isinstance(contents, list):
            return ("* GenerateContentRequest.contents: contents is not specified" if contents is None
                    else "Invalid JSON payload received. Invalid value at 'contents'."), None
        for i, content in enumerate(contents):
            if not isinstance(content, dict) or not isinstance(content.get("parts", []), list):
                return f"Invalid JSON payload received. Invalid value at 'contents[{i}]'.", None
            if any(not isinstance(p, dict) for p in content.get("parts", [])):
                return f"Invalid JSON payload received. Invalid value at 'contents[{i}].parts'.", None
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            return "Invalid JSON payload received. Invalid value at 'tools'.", None
        return None

    def chat_form(self, body: JsonObject) -> ChatForm:
        from agentdbg.wire.gemini import to_chat

        return to_chat(body)

    def tools(self, body: JSON) -> list[ToolDef]:
        return tool_defs(body.get("tools") if isinstance(body, dict) else None)

    def top_parts(self, body: JSON) -> list[Part]:
        system = field(body, "systemInstruction")
        if system is None:
            return []
        return [Instructions(Where((), "systemInstruction"), system, None,
                             text_of(as_dict(system).get("parts")))]

    def entry_parts(self, i: int, item: JsonObject) -> list[Part]:
        return entry_parts(i, item)

    def parse_request(self, body: JSON) -> Request:
        body = body if isinstance(body, dict) else {"contents": body}
        parts = self.top_parts(body) + content_parts(as_list(field(body, "contents")))
        return Request(self.name, parts, self.tools(body), field(body, "toolConfig"),
                       {k: v for k, v in body.items() if k not in CHAT_KEYS},
                       as_str(body.get("model")))

    def items(self, body: JSON) -> list:
        value = field(body, "contents") if isinstance(body, dict) else body
        return [x if isinstance(x, dict) else {} for x in as_list(value)]

    def reasons(self, body: JsonObject) -> bool:
        return _thinks(body)

    def answer_schema(self, body: JSON) -> JsonObject | None:
        config = as_dict(field(body, "generationConfig"))
        if str(field(config, "responseMimeType")).lower() != "application/json":
            return None
        schema = field(config, "responseJsonSchema")
        schema = schema if isinstance(schema, dict) else field(config, "responseSchema")
        return schema if isinstance(schema, dict) else {}

    def encode_request(self, messages: list[JsonObject], tools: list[JsonObject] | None = None,
                       tool_choice: JSON = None, parallel_tool_calls: bool | None = None, *,
                       params: JsonObject | None = None) -> JsonObject:
        from agentdbg.wire.gemini import from_chat

        return from_chat(messages, tools, tool_choice, parallel_tool_calls, params=params)

    def tool_from_chat(self, tool: JsonObject) -> JsonObject:
        from agentdbg.wire.gemini import tool_from_chat

        return {"functionDeclarations": [tool_from_chat(tool)]}

    def error(self, status: int, message: str, *, param: str | None = None,
              code: str | None = None, type_: str = "invalid_request_error", **extra: JSON) -> JsonObject:
        return {"error": {"code": status, "message": message,
                          "status": STATUS.get(status, "INTERNAL" if status >= 500 else
                                               "INVALID_ARGUMENT"), **extra}}

    def bad_json(self) -> JsonObject:
        return self.error(400, "Invalid JSON payload received.")

    def rejection(self, findings: Sequence[FindingLike]) -> tuple[int, JsonObject] | None:
        for f in findings:
            if f.severity == "error" and f.api_error and not getattr(f, "api_source", None):
                return 400, self.error(400, f.api_error)
        return None

    def answer(self, message: JsonObject, body: JsonObject, usage: JsonObject | None, finish: str | None,
               model_name: str = "offline") -> JsonObject:
        return response_json(message, body, usage, finish, model_name)

    def stream(self, native: JsonObject, body: JsonObject) -> Iterator[bytes]:
        return encode_stream(native)

    def accumulator(self) -> StreamReader:
        return GeminiAccumulator()

    def reply(self, doc: JSON) -> ChatReply | None:
        if not isinstance(doc, dict) or not isinstance(doc.get("candidates"), list) \
                or not doc["candidates"]:
            return None
        return chat_reply(doc)

    def output(self, native: JSON) -> list:
        candidates = as_list(as_dict(native).get("candidates"))
        content = as_dict(as_dict(candidates[0]).get("content")) if candidates else {}
        return [{"role": "model", "parts": as_list(content.get("parts"))}] if content else []
