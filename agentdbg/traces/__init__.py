"""Other tools' records of model calls, read as conversations (``exchange``): Claude Code
session files (``claude_code``), Codex CLI rollout files (``codex``) and OpenTelemetry traces
(``otlp``: JSON or protobuf, GenAI semantic conventions and OpenInference attributes).

A file is recognised by its content, never its name (``detect``); reading one streams it
(``read_items``). Writing the conversations as transcripts is ``transcript.imported``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agentdbg.traces.exchange import Item

SOURCES = ("claude-code", "codex", "otlp")


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
