"""Chat Completions streaming: encode a reply as server-sent events, and rebuild the
assistant message from a relayed stream (in time linear in its size, whatever the chunking).

Real servers send a tool call's ``id``, ``type`` and ``function.name`` only in its
first delta; later deltas carry argument pieces and must be joined by ``index``
(the root of lost-id bugs). ``encode_stream`` does the same, so an app's
accumulator is tested for real; ``StreamAccumulator`` rebuilds the message the app
should have assembled and notes how the stream was shaped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentdbg.i18n import N_
from agentdbg.messages import NestedTooDeeply, json_kind, loads_json, utf8_json
from agentdbg.wire.common import ChatReply, Pending

ARG_PIECE = 12  # characters of arguments per delta


def _loads(raw: bytes) -> Any:
    """One chunk's JSON: ``orjson`` (several times faster on the many small chunks of a long
    stream), and ``json`` where orjson refuses what ``json`` reads (NaN, a lone surrogate, an
    integer past 64 bits, deep nesting), so a chunk reads exactly as it always did."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return loads_json(raw, max_depth=None)


def _chunk(base: dict, delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
    payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        payload["usage"] = usage
    return b"data: " + utf8_json(payload).encode("utf-8") + b"\n\n"


def encode_stream(message: dict, *, completion_id: str, model: str, created: int,
                  finish_reason: str, usage: dict | None = None) -> Iterator[bytes]:
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
            "model": model}
    yield _chunk(base, {"role": "assistant", "content": None if message.get("tool_calls") else ""})
    content = message.get("content")
    if isinstance(content, str):
        for i in range(0, len(content), 16):
            yield _chunk(base, {"content": content[i:i + 16]})
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        yield _chunk(base, {"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                            "function": {"name": fn.get("name"), "arguments": ""}}]})
        args = fn.get("arguments") or ""
        for i in range(0, len(args), ARG_PIECE):
            yield _chunk(base, {"tool_calls": [{"index": index,
                                                "function": {"arguments": args[i:i + ARG_PIECE]}}]})
    yield _chunk(base, {}, finish_reason, usage)
    yield b"data: [DONE]\n\n"


@dataclass
class StreamAccumulator:
    """Feed raw SSE bytes as they pass; ``message`` is the assembled assistant message.

    Linear in the stream's size: the complete lines of what has arrived are cut in one
    ``split`` (the unfinished last line waits in the buffer, and a line split over many
    chunks is scanned for its end once), each chunk is parsed with ``orjson``, and argument
    pieces are joined once, at the end (``s += piece`` on a string kept in a dict copies it
    every time)."""

    content: list[str] = field(default_factory=list)
    calls: dict[int, dict] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict = field(default_factory=dict)
    chunks: int = 0
    notes: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    native: dict = field(default_factory=dict)     # no response object: a stream has chunks
    _buffer: bytearray = field(default_factory=bytearray)
    _scanned: int = 0                              # bytes of the buffer known to hold no line end
    _deltas: dict[int, int] = field(default_factory=dict)
    _pending: Pending = field(default_factory=Pending)

    def feed(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        end = buffer.rfind(b"\n", self._scanned)
        if end == -1:                   # no line ends yet: keep the bytes, scan them never again
            self._scanned = len(buffer)
            return
        lines = bytes(buffer[:end]).split(b"\n")     # every complete line, cut in one pass
        del buffer[:end + 1]
        self._scanned = len(buffer)
        event = self._event
        for line in lines:
            line = line.strip()
            if line.startswith(b"data:"):
                event(line[5:].strip())

    def close(self) -> None:
        """The stream ended: a last line without its newline is read too."""
        self.feed(b"\n")

    @property
    def reply(self) -> ChatReply:
        return ChatReply(self.message, self.usage, self.finish_reason)

    def _event(self, raw: bytes) -> None:
        """One ``data:`` line. What the stream carries is data of any shape: what cannot be
        read is left out of the message and said in a note, never raised."""
        if raw == b"[DONE]":
            return
        try:
            chunk = _loads(raw)
        except ValueError as exc:
            said = N_("a chunk that is nested too deeply: {raw}") if isinstance(exc, NestedTooDeeply) \
                else N_("a chunk that is not JSON: {raw}")
            self.notes.append(said.format(raw=repr(raw[:60])))
            return
        if not isinstance(chunk, dict):
            self.notes.append(N_("a chunk that is {kind}, not an object: {raw}").format(
                kind=json_kind(chunk), raw=repr(raw[:60])))
            return
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if choices is not None and not isinstance(choices, list):
            self.notes.append(N_("a chunk whose choices is {kind}, not an array: {raw}").format(
                kind=json_kind(choices), raw=repr(raw[:60])))
            return
        for choice in choices or []:
            if not isinstance(choice, dict):
                self.notes.append(N_("a choice that is {kind}, not an object: {raw}").format(
                    kind=json_kind(choice), raw=repr(raw[:60])))
                continue
            delta = choice.get("delta")
            if delta is not None and not isinstance(delta, dict):
                self.notes.append(N_("a delta that is {kind}, not an object: {raw}").format(
                    kind=json_kind(delta), raw=repr(raw[:60])))
                delta = None
            delta = delta or {}
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            if isinstance(delta.get("reasoning_content"), str):
                self.reasoning.append(delta["reasoning_content"])
            calls = delta.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                self.notes.append(N_("a delta whose tool_calls is {kind}, not an array: {raw}").format(
                    kind=json_kind(calls), raw=repr(raw[:60])))
                calls = None
            for tc in calls or []:
                if isinstance(tc, dict):
                    self._tool_delta(tc)
                else:
                    self.notes.append(N_("a tool call delta that is {kind}, not an object: {raw}").format(
                        kind=json_kind(tc), raw=repr(raw[:60])))
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                self.finish_reason = finish
            elif finish:
                self.notes.append(N_("a finish_reason that is {kind}, not a string: {raw}").format(
                    kind=json_kind(finish), raw=repr(raw[:60])))

    def _tool_delta(self, tc: dict) -> None:
        index = tc.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            self.notes.append(N_("a tool call delta whose index is {kind}: {value}; taken as index 0").format(
                kind=json_kind(index), value=json.dumps(index)[:40]))
            index = 0
        call = self.calls.setdefault(index, {"id": None, "type": "function",
                                             "function": {"name": None, "arguments": ""}})
        self._deltas[index] = self._deltas.get(index, 0) + 1
        cid = tc.get("id")
        if cid:
            if call["id"] and call["id"] != cid:
                self.notes.append(N_("two calls share index {index} ({first} and {second}): an "
                                     "accumulator keyed by index merges them").format(
                    index=index, first=call["id"], second=cid))
            call["id"] = call["id"] or cid
        fn = tc.get("function")
        fn = fn if isinstance(fn, dict) else {}
        if fn.get("name") and not call["function"]["name"]:
            call["function"]["name"] = fn["name"]
        if isinstance(fn.get("arguments"), str):
            self._pending.add((index,), call["function"], "arguments", fn["arguments"])

    @property
    def message(self) -> dict:
        self._pending.flush()
        msg: dict[str, Any] = {"role": "assistant",
                               "content": "".join(self.content) if self.content else None}
        if self.calls:
            msg["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        if self.reasoning:
            msg["reasoning_content"] = "".join(self.reasoning)
        return msg

    def shape(self) -> list[str]:
        """How the stream carried the tool calls, for the view."""
        out = list(self.notes)
        for index in sorted(self.calls):
            n = self._deltas.get(index, 0)
            cid = self.calls[index]["id"]
            if n > 1:
                out.append(N_("call {id} at index {index}: id sent once, {n} deltas joined by "
                              "index").format(id=cid or N_("(no id)"), index=index, n=n))
            if not cid:
                out.append(N_("call at index {index} never carried an id").format(index=index))
        return out
