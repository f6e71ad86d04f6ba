"""Replay a transcript: recorded model responses and tool results, no network.

The recording is read as a stream (bounded memory). Recorded user actions
(edits, drops, rewinds, injections) are re-applied at the point they happened,
so the replayed messages array ends identical to the recorded one; where a
request differs from the recorded request, ``first_difference`` says where.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentdbg.errors import ProviderError
from agentdbg.providers.base import ModelReply, ModelRequest
from agentdbg.transcript import iter_transcript
from agentdbg.transcript.compare import describe_difference, first_difference, first_difference_from

_NOTHING = object()


class ReplayDiverged(ProviderError):
    """The live request no longer matches the recording; ``difference`` says where first."""

    def __init__(self, path, difference: str):
        super().__init__(f"replay diverged from {path}: {difference}")
        self.difference = difference


@dataclass
class RecordedResult:
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

    @property
    def duration_ms(self) -> float | None:
        """How long the call took when it was recorded (a replay takes no time of its own)."""
        return recorded_ms(self.event.get("duration_ms"))


def recorded_ms(value) -> float | None:
    """A recorded time in milliseconds; None when the recording holds none (or junk)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e12:
        return float(value)
    return None


class ReplayModel:
    """Serves the recording's responses in order; also the source of recorded tool results."""

    name = "replay"

    def __init__(self, path):
        self.path = path
        self._stream: Iterator = iter_transcript(path, self.warnings_list(), validate=True)
        self.header = next(self._stream)[1]
        #: the wire format the recording was made over (the engine works on its chat form)
        self.wire = str(self.header.get("api") or "chat")
        self._peeked: Any = _NOTHING
        self._peeked_line: int | None = None
        self.line: int | None = 1  # the transcript line of the event popped last
        self.expected: list = []
        self.tools: dict[str, dict] = {}
        self.knowingly = False     # keep playing although the history changed
        self.strict = False        # compare requests byte for byte, not as the API reads them
        self.diverged: str | None = None
        self.turns_played = 0

    def warnings_list(self) -> list:
        self.warnings: list[str] = []
        return self.warnings

    # -- the stream ----------------------------------------------------------------------
    def peek(self) -> dict | None:
        if self._peeked is _NOTHING:
            self._peeked_line, self._peeked = next(self._stream, (None, None))
        return self._peeked

    def pop(self) -> dict | None:
        event = self.peek()
        self.line, self._peeked = self._peeked_line, _NOTHING
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

    def next_request_messages(self) -> list | None:
        """The messages the next recorded request carries (nothing is consumed)."""
        event = self._skip_to({"request"})
        if event is None:
            return None
        return self.expected[:event["prefix"]] + list(event["append"])

    # -- provider protocol -----------------------------------------------------------------
    def stale(self, request: ModelRequest) -> tuple | None:
        """Where the live request differs from the next recorded one (None: it matches)."""
        event = self._skip_to({"request"})
        if event is None:
            return ("messages", "(the recording has no further request)", "(a new request)")
        expected = self.expected[:event["prefix"]] + list(event["append"])
        return first_difference(self._seen(expected), self._seen(request.messages))

    def complete(self, request: ModelRequest) -> ModelReply:
        event = self._skip_to({"request"})
        if event is None:
            raise ProviderError(f"replay: {self.path} has no further model request here")
        self.pop()
        prefix = event["prefix"]
        self.expected = self.expected[:prefix] + list(event["append"])
        # messages before ``prefix`` were verified with the previous request (and changes
        # to them since are recorded as actions, re-applied by the driver): compare the rest
        diff = first_difference_from(self._seen(self.expected), self._seen(request.messages), prefix,
                                     strict=self.strict)
        if diff and not self.knowingly:
            self.diverged = describe_difference(diff)
            raise ReplayDiverged(self.path, self.diverged)
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
                          latency_ms=recorded_ms(answer.get("latency_ms")),
                          note=f"replayed turn {answer.get('turn')}"
                               + (f"; recorded note: {answer['note']}" if answer.get("note") else ""))

    def _seen(self, messages: list) -> list:
        """Messages as compared: a Responses/Anthropic recording's chat form carries each
        message's native original under "wire", which says nothing about what changed."""
        from agentdbg.wire import codec
        from agentdbg.wire.common import strip_wire

        if not codec.known(self.wire) or codec.get(self.wire).chat_native:
            return messages

        return strip_wire(messages)

    def recorded_tool(self, call: dict) -> RecordedResult | None:
        cid = str(call.get("id"))
        if cid not in self.tools:
            self._skip_to({"request", "response", "model_error", "blocked"})
        event = self.tools.pop(cid, None)
        return RecordedResult(event) if event is not None else None
