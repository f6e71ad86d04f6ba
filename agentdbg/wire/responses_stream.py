"""Responses API streaming: encode a ``response`` object as the real event sequence, and
rebuild the response (and the chat assistant message) from a relayed stream.

The real sequence: ``response.created``, ``response.in_progress``, then per output item
``response.output_item.added`` … its content events … ``response.output_item.done``, and
``response.completed`` (``response.incomplete`` when cut short); every event carries a
``sequence_number``. A function call's arguments arrive as ``response.function_call_arguments
.delta`` pieces joined by ``output_index`` and closed by ``.done``.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

from agentdbg.i18n import N_
from agentdbg.wire.common import (
    SHORT_SHAPES,
    ChatReply,
    Pending,
    SSEParser,
    as_dict,
    parse_event,
    pieces,
    sse,
)
from agentdbg.wire.responses_reply import chat_reply

TEXT_PIECE = 16   # characters of text per delta
ARG_PIECE = 12    # characters of arguments per delta


def encode_stream(response: dict, *, text_piece: int = TEXT_PIECE,
                  arg_piece: int = ARG_PIECE) -> Iterator[bytes]:
    """The server-sent events a real ``stream: true`` request gets for ``response``."""
    seq = itertools.count()

    def ev(kind: str, **fields: Any) -> bytes:
        return sse(kind, {"type": kind, **fields, "sequence_number": next(seq)})

    base = {**response, "status": "in_progress", "output": [], "usage": None,
            "incomplete_details": None}
    yield ev("response.created", response=base)
    yield ev("response.in_progress", response=base)
    for k, item in enumerate(response.get("output") or []):
        yield from _item_events(ev, k, item, text_piece, arg_piece)
    final = {"completed": "response.completed", "incomplete": "response.incomplete",
             "failed": "response.failed"}.get(str(response.get("status")), "response.completed")
    yield ev(final, response=response)


def _item_events(ev: Any, k: int, item: dict, text_piece: int, arg_piece: int) -> Iterator[bytes]:
    kind, item_id = item.get("type"), item.get("id") or ""
    added = {**item, "status": "in_progress"} if "status" in item else dict(item)
    if kind == "message":
        yield ev("response.output_item.added", output_index=k, item={**added, "content": []})
        for c, part in enumerate(item.get("content") or []):
            yield from _part_events(ev, k, item_id, c, part, text_piece)
    elif kind == "function_call":
        yield ev("response.output_item.added", output_index=k, item={**added, "arguments": ""})
        args = item.get("arguments") or ""
        for piece in pieces(args, arg_piece):
            yield ev("response.function_call_arguments.delta", item_id=item_id, output_index=k,
                     delta=piece)
        yield ev("response.function_call_arguments.done", item_id=item_id, output_index=k,
                 name=item.get("name"), arguments=args)
    elif kind == "custom_tool_call":
        yield ev("response.output_item.added", output_index=k, item={**added, "input": ""})
        text = item.get("input") or ""
        for piece in pieces(text, arg_piece):
            yield ev("response.custom_tool_call_input.delta", item_id=item_id, output_index=k,
                     delta=piece)
        yield ev("response.custom_tool_call_input.done", item_id=item_id, output_index=k, input=text)
    elif kind == "reasoning":
        yield ev("response.output_item.added", output_index=k, item={**added, "summary": []})
        for s, part in enumerate(item.get("summary") or []):
            text = part.get("text") or ""
            yield ev("response.reasoning_summary_part.added", item_id=item_id, output_index=k,
                     summary_index=s, part={"type": "summary_text", "text": ""})
            for piece in pieces(text, text_piece):
                yield ev("response.reasoning_summary_text.delta", item_id=item_id,
                         output_index=k, summary_index=s, delta=piece)
            yield ev("response.reasoning_summary_text.done", item_id=item_id, output_index=k,
                     summary_index=s, text=text)
            yield ev("response.reasoning_summary_part.done", item_id=item_id, output_index=k,
                     summary_index=s, part=part)
    else:
        yield ev("response.output_item.added", output_index=k, item=added)
    yield ev("response.output_item.done", output_index=k, item=item)


def _part_events(ev: Any, k: int, item_id: str, c: int, part: dict,
                 text_piece: int) -> Iterator[bytes]:
    where = {"item_id": item_id, "output_index": k, "content_index": c}
    if part.get("type") == "refusal":
        text = part.get("refusal") or ""
        yield ev("response.content_part.added", **where, part={**part, "refusal": ""})
        for piece in pieces(text, text_piece):
            yield ev("response.refusal.delta", **where, delta=piece)
        yield ev("response.refusal.done", **where, refusal=text)
    else:
        text = part.get("text") or ""
        yield ev("response.content_part.added", **where, part={**part, "text": ""})
        for piece in pieces(text, text_piece):
            yield ev("response.output_text.delta", **where, delta=piece, logprobs=[])
        yield ev("response.output_text.done", **where, text=text, logprobs=[])
    yield ev("response.content_part.done", **where, part=part)


class ResponsesAccumulator:
    """Feed raw SSE bytes as they pass (any chunking); ``native`` is the rebuilt response,
    ``message`` the chat assistant message; ``shape()`` says how the stream was built.
    Never raises: garbage and protocol slips become ``notes``."""

    def __init__(self) -> None:
        self._parser = SSEParser()
        self.events = 0
        self.notes: list[str] = []
        self.snapshot: dict | None = None      # from response.created / in_progress
        self.final: dict | None = None         # from response.completed / incomplete / failed
        self.items: dict[int, dict] = {}       # output_index -> item as assembled
        self.deltas: dict[int, int] = {}       # output_index -> argument/text deltas
        self._pending = Pending()              # text and arguments being joined
        self._seq: int | None = None

    def feed(self, data: bytes) -> None:
        for event, raw in self._parser.feed(data):
            self._safely(event, raw)

    def close(self) -> None:
        """The stream ended: flush a last unterminated event, note a missing completion."""
        for event, raw in self._parser.close():
            self._safely(event, raw)
        if self.final is None and self.events:
            self.notes.append(N_("the stream ended before response.completed: the response is "
                                 "partial"))

    def _safely(self, event: str, raw: str) -> None:
        try:
            self._event(event, raw)
        except Exception as exc:  # noqa: BLE001 - a relay must never depend on analysis succeeding
            self.notes.append(N_("an event agentdbg could not read ({error}): {raw}").format(
                error=type(exc).__name__, raw=repr(raw[:60])))

    def _event(self, event: str, raw: str) -> None:
        if raw.strip() == "[DONE]":
            return
        obj = parse_event(raw, self.notes)
        if obj is None:
            return
        self.events += 1
        kind = obj.get("type")
        if event and kind != event:
            self.notes.append(N_("an 'event: {event}' line carried a {kind} payload").format(
                event=event, kind=repr(kind)))
        self._sequence(obj.get("sequence_number"))
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, obj)

    def _sequence(self, seq: Any) -> None:
        if not isinstance(seq, int):
            return
        if self._seq is not None and seq != self._seq + 1:
            self.notes.append(N_("sequence_number {seq} after {last}: events lost or reordered").format(
                seq=seq, last=self._seq))
        self._seq = seq

    def _item(self, obj: dict) -> dict | None:
        k = obj.get("output_index")
        item = self.items.get(k) if isinstance(k, int) else None
        if item is None:
            self.notes.append(N_("{type} for output_index {index} before its output_item.added").format(
                type=obj.get("type"), index=repr(k)))
        return item

    # -- handlers ------------------------------------------------------------------------

    def _lifecycle(self, obj: dict) -> None:
        if isinstance(obj.get("response"), dict):
            self.snapshot = obj["response"]

    def _finished(self, obj: dict) -> None:
        final = self.final = as_dict(obj.get("response"))
        if obj.get("type") != "response.completed":
            details = final.get("incomplete_details") or final.get("error")
            self.notes.append(N_("the response ended as {type}: {details}").format(
                type=obj.get("type"), details=details))

    def _added(self, obj: dict) -> None:
        k, item = obj.get("output_index"), obj.get("item")
        if not isinstance(k, int) or not isinstance(item, dict):
            self.notes.append(N_("an output_item.added without output_index or item"))
            return
        if k in self.items:
            self.notes.append(N_("two items added at output_index {index}: an accumulator keyed by "
                                 "index merges them").format(index=k))
        self.items[k] = copy.deepcopy(item)
        if item.get("type") == "function_call" and not item.get("call_id"):
            self.notes.append(N_("the function_call at output_index {index} came without a "
                                 "call_id").format(index=k))

    def _part_added(self, obj: dict) -> None:
        item = self._item(obj)
        if item is not None and isinstance(obj.get("part"), dict):
            item.setdefault("content", []).append(copy.deepcopy(obj["part"]))

    def _text(self, obj: dict, key: str, done: bool) -> None:
        item = self._item(obj)
        parts = item.get("content") if item is not None else None
        c = obj.get("content_index")
        if not isinstance(parts, list) or not isinstance(c, int) or not 0 <= c < len(parts):
            if item is not None:
                self.notes.append(N_("{type} for content_index {index}, never added").format(
                    type=obj.get("type"), index=repr(c)))
            return
        k = obj["output_index"]
        if done:
            self._pending.close((k, c, key))
            if isinstance(obj.get(key), str):
                parts[c][key] = obj[key]
        elif isinstance(obj.get("delta"), str):
            self._pending.add((k, c, key), parts[c], key, obj["delta"])
            self.deltas[k] = self.deltas.get(k, 0) + 1

    def _args(self, obj: dict, key: str, done: bool) -> None:
        item = self._item(obj)
        if item is None:
            return
        k = obj["output_index"]
        if done:
            self._pending.close((k, key))
            final = obj.get(key)
            if isinstance(final, str) and final != item.get(key, ""):
                self.notes.append(N_("call {id}: the deltas joined to {joined} but .done says "
                                     "{final}").format(id=item.get("call_id"),
                                                       joined=repr(item.get(key, "")[:40]),
                                                       final=repr(final[:40])))
            if isinstance(final, str):
                item[key] = final
        elif isinstance(obj.get("delta"), str):
            self._pending.add((k, key), item, key, obj["delta"])
            self.deltas[k] = self.deltas.get(k, 0) + 1

    def _summary(self, obj: dict) -> None:
        item = self._item(obj)
        s = obj.get("summary_index")
        if item is None or not isinstance(s, int):
            return
        summary = item.setdefault("summary", [])
        while len(summary) <= s:
            summary.append({"type": "summary_text", "text": ""})
        if obj.get("type") == "response.reasoning_summary_text.delta" and isinstance(obj.get("delta"), str):
            self._pending.add((obj["output_index"], "summary", s), summary[s], "text", obj["delta"])
        elif isinstance(obj.get("text"), str):
            self._pending.close((obj["output_index"], "summary", s))
            summary[s]["text"] = obj["text"]

    def _done(self, obj: dict) -> None:
        k, item = obj.get("output_index"), obj.get("item")
        if not isinstance(k, int) or not isinstance(item, dict):
            self.notes.append(N_("an output_item.done without output_index or item"))
            return
        self._pending.flush()
        self._pending.drop(k)
        before = self.items.get(k)
        if before is None:
            self.notes.append(N_("output_item.done for output_index {index} that was never "
                                 "added").format(index=k))
        elif before.get("arguments", "") != item.get("arguments", "") and item.get("type") == "function_call":
            self.notes.append(N_("call {id}: output_item.done carries other arguments than its "
                                 "deltas").format(id=item.get("call_id")))
        self.items[k] = copy.deepcopy(item)

    def _error(self, obj: dict) -> None:
        err = as_dict(obj.get("error")) or obj
        self.notes.append(N_("the stream carried an error: {type}: {message}").format(
            type=err.get("code"), message=err.get("message")))

    # -- results -------------------------------------------------------------------------

    @property
    def output(self) -> list[dict]:
        self._pending.flush()
        return [self.items[k] for k in sorted(self.items)]

    @property
    def native(self) -> dict:
        """The response object: the final event's, else the one assembled so far."""
        if self.final is not None:
            if self.final.get("output") or not self.items:
                return self.final
            return {**self.final, "output": self.output}
        base = dict(self.snapshot or {"object": "response"})
        base["output"] = self.output
        return base

    @property
    def reply(self) -> ChatReply:
        return chat_reply(self.native)

    @property
    def message(self) -> dict:
        return self.reply.message

    def shape(self) -> list[str]:
        """How the stream carried the output, for the view (anomalies first)."""
        self._pending.flush()
        out = list(self.notes)
        for k in sorted(self.items):
            item, n = self.items[k], self.deltas.get(k, 0)
            kind = item.get("type")
            if kind in ("function_call", "custom_tool_call"):
                what = "arguments" if kind == "function_call" else "input"
                out.append(N_("call {id} ({name}): {what} in {n} delta(s), item {item}").format(
                    id=item.get("call_id") or N_("(no call_id)"), name=item.get("name"), what=what,
                    n=n, item=item.get("id")))
            elif kind == "message":
                out.append(N_("text of {item}: {n} delta(s)").format(item=item.get("id"), n=n))
            elif kind is not None:
                out.append(SHORT_SHAPES[1].format(kind=kind, item=item.get("id")))
        return out


def _h(method: str, *args: Any) -> Any:
    return lambda self, obj: getattr(self, method)(obj, *args)


_HANDLERS: dict[str, Any] = {
    "response.created": _h("_lifecycle"), "response.in_progress": _h("_lifecycle"),
    "response.queued": _h("_lifecycle"),
    "response.completed": _h("_finished"), "response.incomplete": _h("_finished"),
    "response.failed": _h("_finished"),
    "response.output_item.added": _h("_added"), "response.output_item.done": _h("_done"),
    "response.content_part.added": _h("_part_added"),
    "response.output_text.delta": _h("_text", "text", False),
    "response.output_text.done": _h("_text", "text", True),
    "response.refusal.delta": _h("_text", "refusal", False),
    "response.refusal.done": _h("_text", "refusal", True),
    "response.function_call_arguments.delta": _h("_args", "arguments", False),
    "response.function_call_arguments.done": _h("_args", "arguments", True),
    "response.custom_tool_call_input.delta": _h("_args", "input", False),
    "response.custom_tool_call_input.done": _h("_args", "input", True),
    "response.reasoning_summary_text.delta": _h("_summary"),
    "response.reasoning_summary_text.done": _h("_summary"),
    "response.reasoning_summary_part.added": _h("_summary"),
    "error": _h("_error"),
}
