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

#: what a source may leave unrecorded, and how the import says it
MISSING_WORDS = {
    "tools": "the tool definitions the model was offered",
    "params": "the requests' parameters (temperature, max tokens …)",
    "system": "the system prompt",
    "reminders": "the reminders and attachments the client added to each request",
    "timing": "how long each request took",
    "instructions": "the instructions exactly as sent (the session's base instructions stand in)",
}


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
        """One plain sentence naming what the source did not record (None: nothing)."""
        if not self.missing:
            return None
        words = [MISSING_WORDS.get(m, m) for m in self.missing]
        skipped = "; the checks that need them are skipped" if {"tools", "params"} & set(self.missing) else ""
        if "tools" in self.missing:
            skipped += " (no unknown-tool finding without tool definitions)"
        verb = "do" if self.source == "otlp" else "does"
        return f"{_source_name(self.source)} {verb} not record {_joined(words)}{skipped}"


def _source_name(source: str) -> str:
    return {"claude-code": "a Claude Code session file", "codex": "a Codex CLI rollout file",
            "otlp": "the spans"}.get(source, source)


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


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
