"""What every source of outside records is read into: conversations of model exchanges.

A source (a Claude Code session, a Codex rollout, OpenTelemetry spans) says, for each call of
the model, the request it was sent (a native body of one wire format: ``anthropic``,
``responses`` or ``chat``) and the reply it got (a native response object), in order. An
``Exchange`` is one such call; a ``Thread`` is one conversation of them, with the agent that
held it and, for a subagent's, the call of its parent that started it (``Link``).

What a source does not record is said once per thread (``Thread.missing``: the tool
definitions, the request's parameters …), so the transcript and the import's output can say
it and the checker skips only the rules that need it (a body without ``tools`` is judged
without ``unknown-tool``).

Everything here is data read from outside: bodies hold what the source held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import N_, Join, Msg

#: what a source may leave unrecorded, and how the import says it
MISSING_WORDS = {
    "tools": N_("the tool definitions the model was offered"),
    "params": N_("the requests' parameters (temperature, max tokens …)"),
    "system": N_("the system prompt"),
    "reminders": N_("the reminders and attachments the client added to each request"),
    "timing": N_("how long each request took"),
    "instructions": N_("the instructions exactly as sent (the session's base instructions stand in)"),
}
#: the sentence naming what a source did not record, a template per source
NOT_RECORDED = {"claude-code": N_("a Claude Code session file does not record {what}"),
                "codex": N_("a Codex CLI rollout file does not record {what}"),
                "otlp": N_("the spans do not record {what}")}
SKIPPED = N_("{said}; the checks that need them are skipped")
SKIPPED_TOOLS = N_("{said}; the checks that need them are skipped (no unknown-tool finding "
                   "without tool definitions)")


@dataclass(frozen=True)
class Link:
    """Where a child conversation comes from: its parent thread's key and the call that
    started it (a Claude Code ``Task``/``Agent`` call, a span's parent)."""

    thread: str
    call_id: str | None = None


@dataclass
class Exchange:
    """One call of the model: the native request body, and the native reply (None: the
    source recorded no reply, e.g. a failed call, ``error`` says why)."""

    body: dict[str, Any]
    reply: dict[str, Any] | None
    latency_ms: float | None = None
    started: float | None = None       # seconds since the epoch, when the source says
    error: str | None = None


@dataclass
class Thread:
    """One conversation read from a source."""

    key: str                           # the source's own id (session, agent, trace)
    wire: str                          # the codec its bodies are in
    source: str                        # "claude-code", "codex", "otlp"
    agent: str | None = None
    parent: Link | None = None
    model: str | None = None
    missing: tuple[str, ...] = ()      # keys of MISSING_WORDS
    notes: list[str] = field(default_factory=list)
    started: float | None = None

    def missing_text(self) -> str | None:
        """One plain sentence naming what the source did not record (None: nothing): English,
        as a transcript records it."""
        note = self.missing_note()
        return None if note is None else str(note)

    def missing_note(self) -> Msg | None:
        """That sentence, to show in the chosen language."""
        if not self.missing:
            return None
        words = tuple(Msg(MISSING_WORDS[m]) if m in MISSING_WORDS else m for m in self.missing)
        what = words[0] if len(words) == 1 else Join((Join(words[:-1]), words[-1]), N_(" or "))
        template = NOT_RECORDED.get(self.source)
        said = Msg(template, {"what": what}) if template else \
            Msg(N_("{source} does not record {what}"), {"source": self.source, "what": what})
        if "tools" in self.missing:
            return Msg(SKIPPED_TOOLS, {"said": said})
        if "params" in self.missing:
            return Msg(SKIPPED, {"said": said})
        return said


@dataclass
class Called:
    """An exchange of the thread called ``key`` (a source yields these in the order the calls
    happened, threads interleaved)."""

    key: str
    exchange: Exchange


@dataclass
class Ended:
    """The thread called ``key`` has no more calls (a compaction started a new one): what was
    kept for it can go (a long session is read in the memory of one conversation)."""

    key: str


#: what a source's reader yields: each thread once, before its first exchange, then calls,
#: and when the source knows it, the end of a thread
Item = Thread | Called | Ended


def epoch(stamp: object) -> float | None:
    """An ISO 8601 timestamp (``2026-12-01T18:29:37.590Z``) as seconds since the epoch."""
    from datetime import datetime

    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
