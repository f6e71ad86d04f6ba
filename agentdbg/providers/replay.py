"""Replay a transcript: recorded model responses and tool results, no network.

The recording is read as a stream (bounded memory). Recorded user actions
(edits, drops, rewinds, injections) are re-applied at the point they happened,
so the replayed messages array ends identical to the recorded one; where a
request differs from the recorded request, ``first_difference`` says where.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentdbg.errors import ProviderError
from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelReply, ModelRequest
from agentdbg.transcript import read_transcript
from agentdbg.transcript.compare import describe_difference, first_difference, first_difference_from
from agentdbg.transcript.events import (
    Action,
    AnyEvent,
    Blocked,
    Message,
    ModelError,
    Request,
    Response,
    Stop,
    Tool,
)

if TYPE_CHECKING:
    from agentdbg.checker.inputs import TranscriptItems

_NOTHING = object()


class ReplayDiverged(ProviderError):
    """The live request no longer matches the recording; ``difference`` says where first."""

    def __init__(self, path: object, difference: str):
        super().__init__(f"replay diverged from {path}: {difference}")
        self.difference = difference


@dataclass
class RecordedResult:
    """A recorded tool result, given to the executor in place of running the tool."""
    event: Tool

    def content(self, tool: str, sample: str | None = None) -> str:
        return self.event.content or ""

    @property
    def error_type(self) -> str | None:
        return self.event.error_type

    @property
    def injected(self) -> bool:
        return bool(self.event.injected)

    @property
    def note(self) -> str:
        return "replayed from the recording" + (" (injected then)" if self.injected else "")

    @property
    def recorded_note(self) -> str | None:
        """The note the result was recorded with (an injected fault's says which one)."""
        return self.event.note

    @property
    def cause(self) -> str | None:
        return self.event.cause

    @property
    def duration_ms(self) -> float | None:
        """How long the call took when it was recorded (a replay takes no time of its own)."""
        return recorded_ms(self.event.duration_ms)


def recorded_ms(value: object) -> float | None:
    """A recorded time in milliseconds; None when the recording holds none (or junk)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e12:
        return float(value)
    return None


class ReplayModel:
    """Serves the recording's responses in order; also the source of recorded tool results."""

    name = "replay"

    def __init__(self, path: str | os.PathLike[str]):
        self.path = path
        self.warnings: list[str] = []
        self.header, self._stream = read_transcript(path, self.warnings)
        #: the wire format the recording was made over (the engine works on its chat form)
        self.wire = self.header.wire
        self._peeked: AnyEvent | object | None = _NOTHING
        self._peeked_line: int | None = None
        self.line: int | None = 1  # the transcript line of the event popped last
        self.expected: list[Message] = []
        self.tools: dict[str, Tool] = {}
        self.knowingly = False     # keep playing although the history changed
        self.strict = False        # compare requests byte for byte, not as the API reads them
        self.diverged: str | None = None
        self.turns_played = 0
        #: what the verdict needs of the recording, kept as it streams by (``drain``)
        self.recorded_stop: Stop | None = None     # its last stop event
        self.ends_with_stop = False                # ... and that is its last event
        self.last_request: Request | None = None
        #: told of each call's result an app-driven recording's next request carries (the app
        #: ran the tools: no tool event), e.g. to re-run it with --live-tools
        self.on_app_result: Callable[[dict, Tool], None] | None = None
        #: blocked requests (the proxy's --block-invalid) passed on the way to the next event
        #: asked for, until the driver takes them (``Replay.sync``)
        self.blocked_passed: list[Blocked] = []
        #: given each event as it is popped, from the first on (the verdict's requests are
        #: gathered so as the replay reads them: ``engine.replaying.replay_session``)
        self.on_pop: Callable[[AnyEvent], None] | None = None
        self.check_items: TranscriptItems | None = None
        self._strip: Callable[[list[Message]], list[Message]] | None = None   # ``_seen``

    # -- the stream ----------------------------------------------------------------------
    def peek(self) -> AnyEvent | None:
        if self._peeked is _NOTHING:
            self._peeked_line, self._peeked = next(self._stream, (None, None))
        return self._peeked  # type: ignore[return-value]

    def pop(self) -> AnyEvent | None:
        event = self.peek()
        self.line, self._peeked = self._peeked_line, _NOTHING
        if event is not None:
            if self.on_pop is not None:
                self.on_pop(event)
            self.ends_with_stop = isinstance(event, Stop)
            if isinstance(event, Stop):
                self.recorded_stop = event
            elif isinstance(event, Request):
                self.last_request = event
        return event

    def drain(self) -> None:
        """Read the rest of the recording (nothing more is played), for the verdict."""
        while self.pop() is not None:
            pass

    def final_messages(self) -> list[Message]:
        """The recording's final messages (after ``drain``): its stop event's, else its last
        request's."""
        if self.recorded_stop is not None and self.recorded_stop.messages is not None:
            return self.recorded_stop.messages
        return list(self.last_request.messages or []) if self.last_request is not None else []

    def _skip_to(self, *kinds: type[AnyEvent]) -> AnyEvent | None:
        """Advance to the next event of ``kinds``, keeping tool events seen on the way."""
        while True:
            event = self.peek()
            if event is None or isinstance(event, kinds):
                return event
            if isinstance(event, (Action, Stop)):
                return None  # the driver applies these; do not run past them
            self.pop()
            if isinstance(event, Tool):
                self.tools[str(event.tool_call_id)] = event
            elif isinstance(event, Blocked):
                self.blocked_passed.append(event)

    def next_request(self) -> Request | None:
        """The next recorded request (nothing is consumed)."""
        event = self._skip_to(Request)
        return event if isinstance(event, Request) else None

    def next_request_messages(self) -> list[Message] | None:
        """The messages the next recorded request carries (nothing is consumed)."""
        event = self.next_request()
        return list(event.messages or []) if event is not None else None

    # -- provider protocol -----------------------------------------------------------------
    def stale(self, request: ModelRequest) -> tuple[str, object, object] | None:
        """Where the live request differs from the next recorded one (None: it matches)."""
        event = self.next_request()
        if event is None:
            return ("messages", N_("(the recording has no further request)"), N_("(a new request)"))
        return first_difference(self._seen(event.messages or []), self._seen(request.messages))

    def complete(self, request: ModelRequest) -> ModelReply:
        event = self.next_request()
        if event is None:
            raise ProviderError(f"replay: {self.path} has no further model request here")
        self.pop()
        prefix = event.prefix
        self.expected = event.messages or []
        # messages before ``prefix`` were verified with the previous request (and changes
        # to them since are recorded as actions, re-applied by the driver): compare the rest
        diff = first_difference_from(self._seen(self.expected), self._seen(request.messages), prefix,
                                     strict=self.strict)
        if diff and not self.knowingly:
            self.diverged = describe_difference(diff)
            raise ReplayDiverged(self.path, self.diverged)
        answer = self._skip_to(Response, ModelError)
        if answer is None:
            raise ProviderError(f"replay: {self.path} ends before the response to this request")
        self.pop()
        if isinstance(answer, ModelError):
            raise recorded_error(answer)
        assert isinstance(answer, Response)
        self.turns_played += 1
        number = answer.turn if answer.turn is not None else self.turns_played  # in time
        turn = request.turn or number     # as the history counts it, as the screen does
        if turn == number:    # English, as transcripts record it: read back where it is shown
            note = (N_("replayed turn {turn}; recorded note: {note}").format(
                turn=turn, note=answer.note)
                    if answer.note else N_("replayed turn {turn}").format(turn=turn))
        else:   # a rewind or retry since: the recording's request count said apart
            note = (N_("replayed turn {turn} (request {request} of the recording); recorded note: "
                       "{note}").format(turn=turn, request=number, note=answer.note)
                    if answer.note else N_("replayed turn {turn} (request {request} of the "
                                           "recording)").format(turn=turn, request=number))
        return ModelReply(message=answer.message, usage=answer.usage or {},
                          finish_reason=answer.finish_reason,
                          latency_ms=recorded_ms(answer.latency_ms), note=note)

    def _seen(self, messages: list[Message]) -> list[Message]:
        """Messages as compared: a Responses/Anthropic recording's chat form carries each
        message's native original under "wire", which says nothing about what changed."""
        if self._strip is None:   # the format's, asked once
            from agentdbg.wire import codec
            from agentdbg.wire.common import strip_wire

            chat = not codec.known(self.wire) or codec.get(self.wire).chat_native
            self._strip = _as_is if chat else strip_wire
        return self._strip(messages)

    def recorded_tool(self, call: dict[str, object]) -> RecordedResult | None:
        cid = str(call.get("id"))
        if cid not in self.tools:
            self._skip_to(Request, Response, ModelError, Blocked)
        event = self.tools.pop(cid, None)
        return RecordedResult(event) if event is not None else None


def _as_is(messages: list[Message]) -> list[Message]:
    return messages


def recorded_error(event: ModelError) -> ProviderError:
    """A recorded model error, raised again. Its text is what was recorded (the API's own words
    stay verbatim); the offline model's rejection is shown in the chosen language again."""
    from agentdbg.providers.judged import REJECTED

    if not event.message:
        unsaid = Msg(N_("model error (recorded)"))
        return ProviderError(str(unsaid), status=event.status, shown=unsaid)
    return ProviderError(event.message, status=event.status, shown=Msg.parse(REJECTED, event.message))
