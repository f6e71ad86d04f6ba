"""Replay a transcript: recorded model responses and tool results, no network.

The recording is read as a stream (bounded memory). Recorded user actions
(edits, drops, rewinds, injections) are re-applied at the point they happened,
so the replayed messages array ends identical to the recorded one; where a
request differs from the recorded request, ``first_difference`` says where.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentdbg.errors import ProviderError
from agentdbg.providers.base import ModelReply, ModelRequest
from agentdbg.transcript import iter_transcript

_NOTHING = object()


def first_difference(a: Any, b: Any, path: str = "messages") -> tuple[str, Any, Any] | None:
    """The first path where ``a`` and ``b`` differ, with both values; None when equal."""
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            # an absent key and null mean the same in a message (e.g. content on a tool-call turn)
            va, vb = a.get(key), b.get(key)
            if va is None or vb is None:
                if va is not vb:
                    return f"{path}.{key}", _shown(a, key), _shown(b, key)
                continue
            found = first_difference(va, vb, f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        return first_difference_from(a, b, 0, path)
    return None if a == b else (path, a, b)


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def _shown(d: dict, key: str):
    return d.get(key, ABSENT)


def first_difference_from(a: list, b: list, start: int,
                          path: str = "messages") -> tuple[str, Any, Any] | None:
    """``first_difference`` of two lists, looking only at index ``start`` and after."""
    for i in range(start, min(len(a), len(b))):
        found = first_difference(a[i], b[i], f"{path}[{i}]")
        if found:
            return found
    if len(a) != len(b):
        n = min(len(a), len(b))
        return f"{path}[{n}]", a[n] if n < len(a) else None, b[n] if n < len(b) else None
    return None


def describe_difference(diff: tuple[str, Any, Any]) -> str:
    path, recorded, now = diff

    def show(value) -> str:
        return "(absent)" if value is ABSENT else json.dumps(value, ensure_ascii=False)[:200]
    return f"first difference at {path}: recorded {show(recorded)}, now {show(now)}"


@dataclass
class Recorded:
    """A recorded tool result, given to the executor in place of running the tool."""
    event: dict

    def content(self, tool: str) -> str:
        return self.event.get("content", "")

    @property
    def error_type(self):
        return self.event.get("error_type")

    @property
    def injected(self) -> bool:
        return bool(self.event.get("injected"))

    @property
    def note(self) -> str:
        return "replayed from the recording" + (" (injected then)" if self.injected else "")


class ReplayModel:
    """Serves the recording's responses in order; also the source of recorded tool results."""

    name = "replay"

    def __init__(self, path):
        self.path = path
        self._stream: Iterator = (e for _, e in iter_transcript(path, self.warnings_list()))
        self.header = next(self._stream)
        self._peeked: Any = _NOTHING
        self.expected: list = []
        self.tools: dict[str, dict] = {}
        self.knowingly = False     # keep playing although the history changed
        self.diverged: str | None = None
        self.turns_played = 0

    def warnings_list(self) -> list:
        self.warnings: list[str] = []
        return self.warnings

    # -- the stream ----------------------------------------------------------------------
    def peek(self) -> dict | None:
        if self._peeked is _NOTHING:
            self._peeked = next(self._stream, None)
        return self._peeked

    def pop(self) -> dict | None:
        event = self.peek()
        self._peeked = _NOTHING
        return event

    def _skip_to(self, kinds: set) -> dict | None:
        """Advance to the next event of ``kinds``, keeping tool events seen on the way."""
        while True:
            event = self.peek()
            if event is None or event["type"] in kinds:
                return event
            if event["type"] in ("action", "stop"):
                return None  # the driver applies these; do not run past them
            self.pop()
            if event["type"] == "tool":
                self.tools[str(event.get("tool_call_id"))] = event

    # -- provider protocol -----------------------------------------------------------------
    def stale(self, request: ModelRequest) -> tuple | None:
        """Where the live request differs from the next recorded one (None: it matches)."""
        event = self._skip_to({"request"})
        if event is None:
            return ("messages", "(the recording has no further request)", "(a new request)")
        expected = self.expected[:event["prefix"]] + list(event["append"])
        return first_difference(expected, request.messages)

    def complete(self, request: ModelRequest) -> ModelReply:
        event = self._skip_to({"request"})
        if event is None:
            raise ProviderError(f"replay: {self.path} has no further model request here")
        self.pop()
        prefix = event["prefix"]
        self.expected = self.expected[:prefix] + list(event["append"])
        # messages before ``prefix`` were verified with the previous request (and changes
        # to them since are recorded as actions, re-applied by the driver): compare the rest
        diff = first_difference_from(self.expected, request.messages, prefix)
        if diff and not self.knowingly:
            self.diverged = describe_difference(diff)
            raise ProviderError(f"replay diverged from {self.path}: {self.diverged}")
        answer = self._skip_to({"response", "model_error"})
        if answer is None:
            raise ProviderError(f"replay: {self.path} ends before the response to this request")
        self.pop()
        if answer["type"] == "model_error":
            raise ProviderError(answer.get("message") or "model error (recorded)",
                                status=answer.get("status"))
        self.turns_played += 1
        return ModelReply(message=answer["message"], usage=answer.get("usage") or {},
                          finish_reason=answer.get("finish_reason"),
                          note=f"replayed turn {answer.get('turn')}"
                               + (f"; recorded note: {answer['note']}" if answer.get("note") else ""))

    def recorded_tool(self, call: dict) -> Recorded | None:
        cid = str(call.get("id"))
        if cid not in self.tools:
            self._skip_to({"request", "response", "model_error", "blocked"})
        event = self.tools.pop(cid, None)
        return Recorded(event) if event is not None else None
