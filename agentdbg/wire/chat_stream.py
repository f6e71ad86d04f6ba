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
            why = "nested too deeply" if isinstance(exc, NestedTooDeeply) else "not JSON"
            self.notes.append(f"a chunk that is {why}: {raw[:60]!r}")
            return
        if not isinstance(chunk, dict):
            self.notes.append(f"a chunk that is {json_kind(chunk)}, not an object: {raw[:60]!r}")
            return
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if choices is not None and not isinstance(choices, list):
            self.notes.append(f"a chunk whose choices is {json_kind(choices)}, not an array: "
                              f"{raw[:60]!r}")
            return
        for choice in choices or []:
            if not isinstance(choice, dict):
                self.notes.append(f"a choice that is {json_kind(choice)}, not an object: "
                                  f"{raw[:60]!r}")
                continue
            delta = choice.get("delta")
            if delta is not None and not isinstance(delta, dict):
                self.notes.append(f"a delta that is {json_kind(delta)}, not an object: {raw[:60]!r}")
                delta = None
            delta = delta or {}
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            if isinstance(delta.get("reasoning_content"), str):
                self.reasoning.append(delta["reasoning_content"])
            calls = delta.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                self.notes.append(f"a delta whose tool_calls is {json_kind(calls)}, not an "
                                  f"array: {raw[:60]!r}")
                calls = None
            for tc in calls or []:
                if isinstance(tc, dict):
                    self._tool_delta(tc)
                else:
                    self.notes.append(f"a tool call delta that is {json_kind(tc)}, not an "
                                      f"object: {raw[:60]!r}")
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                self.finish_reason = finish
            elif finish:
                self.notes.append(f"a finish_reason that is {json_kind(finish)}, not a string: "
                                  f"{raw[:60]!r}")

    def _tool_delta(self, tc: dict) -> None:
        index = tc.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            self.notes.append(f"a tool call delta whose index is {json_kind(index)}: "
                              f"{json.dumps(index)[:40]}; taken as index 0")
            index = 0
        call = self.calls.setdefault(index, {"id": None, "type": "function",
                                             "function": {"name": None, "arguments": ""}})
        self._deltas[index] = self._deltas.get(index, 0) + 1
        cid = tc.get("id")
        if cid:
            if call["id"] and call["id"] != cid:
                self.notes.append(f"two calls share index {index} ({call['id']} and {cid}): an "
                                  "accumulator keyed by index merges them")
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
                out.append(f"call {cid or '(no id)'} at index {index}: id sent once, "
                           f"{n} deltas joined by index")
            if not cid:
                out.append(f"call at index {index} never carried an id")
        return out
