"""Other tools' records of model calls, read as conversations (``exchange``): Claude Code
session files (``claude_code``), Codex CLI rollout files (``codex``) and OpenTelemetry traces
(``otlp``: JSON or protobuf, GenAI semantic conventions and OpenInference attributes).

A file is recognised by its content, never its name (``detect``); reading one streams it
(``read_items``). Writing the conversations as transcripts is ``transcript.imported``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdbg.traces.exchange import Item

SOURCES = ("claude-code", "codex", "otlp")
#: a record of a Claude Code session or a Codex rollout has one of these keys (``looks_like``)
RECORD_KEYS = ("sessionId", "leafUuid", "payload")
#: what the start of most such files shows (a file without them may still be one: ``detect``)
MARKS = (b'"resource', b'"sessionId"', b'"leafUuid"', b'"payload"')


def none_in(data: bytes, doc: object) -> bool:
    """True: ``detect`` says None for a file whose bytes ``data`` parse as the one JSON
    document ``doc``, told without reading it again or loading a reader: its start has no
    OTLP mark, and the only record ``lines.first_record`` could read in it (the document
    itself, on its first line) has none of a session record's keys. False: ask ``detect``."""
    head = data[:1 << 16]
    if head[:1] == b"\n" or b'"resource' in head:    # otlp.looks_like, protobuf or JSON
        return False
    return not (isinstance(doc, dict) and any(key in doc for key in RECORD_KEYS))


def detect(path: Path) -> str | None:
    """Which source ``path`` holds (None: none agentdbg reads, or an agentdbg transcript)."""
    from agentdbg.traces import claude_code, codex, otlp
    from agentdbg.traces.lines import first_record

    if otlp.looks_like(path):
        return "otlp"
    first = first_record(path)
    if not first or first[0].get("format") == "agentdbg-transcript":
        return None
    if codex.looks_like(first):
        return "codex"
    if claude_code.looks_like(first):
        return "claude-code"
    return None


def read_items(path: Path, source: str) -> Iterator[Item]:
    """The threads and calls of ``path``, read as ``source``."""
    from agentdbg.traces import claude_code, codex, otlp

    reader = {"claude-code": claude_code.read, "codex": codex.read, "otlp": otlp.read}[source]
    return reader(path)
