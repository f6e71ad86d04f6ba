"""Anthropic Messages streaming: encode a ``message`` object as the real event sequence, and
rebuild the message (and the chat assistant message) from a relayed stream.

The real sequence: ``message_start`` (empty content), then per block ``content_block_start``
(a ``tool_use`` with ``input: {}``), its ``content_block_delta`` events (``text_delta``,
``thinking_delta`` + ``signature_delta``, ``input_json_delta`` whose ``partial_json`` pieces join
into the input, the first one empty), ``content_block_stop``; a ``ping`` after the first block
starts; ``message_delta`` with ``stop_reason`` and the output token count; ``message_stop``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator

from agentdbg.i18n import N_
from agentdbg.messages import loads_json
from agentdbg.wire.anthropic_reply import chat_reply
from agentdbg.wire.common import (
    SHORT_SHAPES,
    ChatReply,
    Pending,
    SSEParser,
    as_dict,
    as_list,
    parse_event,
    pieces,
    sse,
)

TEXT_PIECE = 16
ARG_PIECE = 12
TOOL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def encode_stream(message: dict, *, text_piece: int = TEXT_PIECE,
                  arg_piece: int = ARG_PIECE) -> Iterator[bytes]:
    """The server-sent events a real ``stream: true`` request gets for ``message``."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": 1}}
    yield sse("message_start", {"type": "message_start", "message": start})
    content = message.get("content") or []
    if not content:
        yield sse("ping", {"type": "ping"})
    for index, block in enumerate(content):
        yield from _block_events(index, block, text_piece, arg_piece)
    yield sse("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": message.get("stop_reason"),
                                          "stop_sequence": message.get("stop_sequence")},
                                "usage": {"output_tokens": usage.get("output_tokens", 0)}})
    yield sse("message_stop", {"type": "message_stop"})


def _block_events(index: int, block: dict, text_piece: int, arg_piece: int) -> Iterator[bytes]:
    kind = block.get("type")

    def delta(d: dict) -> bytes:
        return sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})

    if kind == "text":
        first, deltas = {**block, "text": ""}, [
            delta({"type": "text_delta", "text": p}) for p in pieces(block.get("text") or "", text_piece)]
    elif kind == "thinking":
        first = {**block, "thinking": "", "signature": ""}
        deltas = [delta({"type": "thinking_delta", "thinking": p})
                  for p in pieces(block.get("thinking") or "", text_piece)]
        deltas.append(delta({"type": "signature_delta", "signature": block.get("signature") or ""}))
    elif kind in TOOL_BLOCKS:
        text = json.dumps(block.get("input", {}), ensure_ascii=False)
        first = {**block, "input": {}}
        deltas = [delta({"type": "input_json_delta", "partial_json": p})
                  for p in ["", *pieces(text, arg_piece)]]
    else:
        first, deltas = block, []
    yield sse("content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": first})
    if index == 0:
        yield sse("ping", {"type": "ping"})
    yield from deltas
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


class AnthropicAccumulator:
    """Feed raw SSE bytes as they pass (any chunking); ``native`` is the rebuilt message,
    ``message`` the chat assistant message; ``shape()`` says how the stream was built.
    Never raises: garbage and protocol slips become ``notes``."""

    def __init__(self) -> None:
        self._parser = SSEParser()
        self.events = 0
        self.pings = 0
        self.notes: list[str] = []
        self.snapshot: dict | None = None
        self.blocks: dict[int, dict] = {}
        self.json: dict[int, list[str]] = {}  # index -> partial_json pieces so far
        self._pending = Pending()             # text and thinking being joined
        self.deltas: dict[int, int] = {}
        self.broken: dict[int, str] = {}      # index -> joined input text that is not JSON
        self.stopped = False

    def feed(self, data: bytes) -> None:
        for event, raw in self._parser.feed(data):
            self._safely(event, raw)

    def close(self) -> None:
        for event, raw in self._parser.close():
            self._safely(event, raw)
        if not self.stopped and self.events:
            self.notes.append(N_("the stream ended before message_stop: the message is partial"))

    def _safely(self, event: str, raw: str) -> None:
        try:
            self._event(event, raw)
        except Exception as exc:  # noqa: BLE001 - a relay must never depend on analysis succeeding
            self.notes.append(N_("an event agentdbg could not read ({error}): {raw}").format(
                error=type(exc).__name__, raw=repr(raw[:60])))

    def _event(self, event: str, raw: str) -> None:
        obj = parse_event(raw, self.notes)
        if obj is None:
            return
        self.events += 1
        kind = obj.get("type")
        if event and kind != event:
            self.notes.append(N_("an 'event: {event}' line carried a {kind} payload").format(
                event=event, kind=repr(kind)))
        if kind != "message_start" and self.snapshot is None and kind not in ("ping", "error"):
            self.notes.append(N_("{kind} before message_start").format(kind=kind))
            self.snapshot = {"type": "message", "role": "assistant", "content": []}
        handler = getattr(self, f"_on_{kind}", None) if isinstance(kind, str) else None
        if handler is not None:
            handler(obj)

    def _on_message_start(self, obj: dict) -> None:
        msg = obj.get("message")
        self.snapshot = copy.deepcopy(msg) if isinstance(msg, dict) else {"content": []}

    def _on_ping(self, obj: dict) -> None:
        self.pings += 1

    def _on_error(self, obj: dict) -> None:
        err = as_dict(obj.get("error"))
        self.notes.append(N_("the stream carried an error: {type}: {message}").format(
            type=err.get("type"), message=err.get("message")))

    def _on_content_block_start(self, obj: dict) -> None:
        index, block = obj.get("index"), obj.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            self.notes.append(N_("a content_block_start without index or content_block"))
            return
        if index in self.blocks:
            self._pending.drop(index)
            self.notes.append(N_("two blocks started at index {index}: an accumulator keyed by "
                                 "index merges them").format(index=index))
        elif index != len(self.blocks):
            self.notes.append(N_("block index {index} after {n} block(s)").format(
                index=index, n=len(self.blocks)))
        self.blocks[index] = copy.deepcopy(block)
        if block.get("type") in TOOL_BLOCKS:
            self.json[index] = []
            if not block.get("id"):
                self.notes.append(N_("the {type} block at index {index} came without an id").format(
                    type=block.get("type"), index=index))

    def _on_content_block_delta(self, obj: dict) -> None:
        index, delta = obj.get("index"), obj.get("delta")
        block = self.blocks.get(index) if isinstance(index, int) else None
        if block is None or not isinstance(index, int) or not isinstance(delta, dict):
            self.notes.append(N_("a delta for block {index} that never started").format(
                index=repr(index)))
            return
        kind = delta.get("type")
        self.deltas[index] = self.deltas.get(index, 0) + 1
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            self._pending.add((index, "text"), block, "text", delta["text"])
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            if index not in self.json:
                self.notes.append(N_("input_json_delta for a {type} block at {index}").format(
                    type=block.get("type"), index=index))
            self.json.setdefault(index, []).append(delta["partial_json"])
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            self._pending.add((index, "thinking"), block, "thinking", delta["thinking"])
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            block["signature"] = delta["signature"]
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        else:
            self.notes.append(N_("an unknown delta {kind} for block {index}").format(
                kind=repr(kind), index=index))

    def _on_content_block_stop(self, obj: dict) -> None:
        index = obj.get("index")
        block = self.blocks.get(index) if isinstance(index, int) else None
        if block is None or not isinstance(index, int):
            self.notes.append(N_("content_block_stop for block {index} that never started").format(
                index=repr(index)))
            return
        text = "".join(self.json.get(index) or [])
        if not text:
            return
        try:
            block["input"] = loads_json(text, max_depth=None)
        except ValueError as exc:
            self.broken[index] = text
            self.notes.append(N_("call {id}: its input_json_delta pieces do not join into JSON "
                                 "({error})").format(id=block.get("id"), error=exc))

    def _on_message_delta(self, obj: dict) -> None:
        delta = as_dict(obj.get("delta"))
        snap = self.snapshot or {}
        for key in ("stop_reason", "stop_sequence"):
            if key in delta:
                snap[key] = delta[key]
        usage = obj.get("usage")
        if isinstance(usage, dict):
            merged = dict(as_dict(snap.get("usage")))
            merged.update({k: v for k, v in usage.items() if v is not None})
            snap["usage"] = merged

    def _on_message_stop(self, obj: dict) -> None:
        self.stopped = True

    # -- results -------------------------------------------------------------------------

    @property
    def native(self) -> dict:
        self._pending.flush()
        base = dict(self.snapshot or {"type": "message", "role": "assistant"})
        base["content"] = [self.blocks[k] for k in sorted(self.blocks)]
        return base

    @property
    def reply(self) -> ChatReply:
        reply = chat_reply(self.native)
        order = [k for k in sorted(self.blocks) if self.blocks[k].get("type") == "tool_use"]
        for n, call in enumerate(as_list(reply.message.get("tool_calls"))):
            if n < len(order) and order[n] in self.broken:   # keep the text the stream carried
                as_dict(as_dict(call).get("function"))["arguments"] = self.broken[order[n]]
        return reply

    @property
    def message(self) -> dict:
        return self.reply.message

    def shape(self) -> list[str]:
        """How the stream carried the content, for the view (anomalies first)."""
        self._pending.flush()
        out = list(self.notes)
        for k in sorted(self.blocks):
            block, n = self.blocks[k], self.deltas.get(k, 0)
            kind = block.get("type")
            if kind in TOOL_BLOCKS:
                out.append(N_("call {id} ({name}): input in {n} input_json_delta(s)").format(
                    id=block.get("id") or N_("(no id)"), name=block.get("name"), n=n))
            elif kind in ("text", "thinking"):
                out.append(N_("{kind} block {index}: {n} delta(s)").format(kind=kind, index=k, n=n))
            else:
                out.append(SHORT_SHAPES[0].format(kind=kind, index=k))
        return out
