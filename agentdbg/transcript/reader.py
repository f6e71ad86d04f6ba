"""Reading a transcript: streamed line by line, one-line errors naming the line."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.errors import InputError, located
from agentdbg.transcript.schema import event_problem
from agentdbg.transcript.writer import FORMAT, VERSION


@dataclass
class Transcript:
    path: Path
    header: dict
    events: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def stop(self) -> dict | None:
        return next((e for e in reversed(self.events) if e["type"] == "stop"), None)

    def final_messages(self) -> list:
        """The final messages: the stop event's, else rebuilt from the last request/response."""
        if self.stop is not None and "messages" in self.stop:
            return self.stop["messages"]
        messages: list = []
        for m in messages_over_time(self.events):
            messages = m
        return messages


def iter_transcript(path: str | os.PathLike, warnings: list | None = None, *,
                    validate: bool = False) -> Iterator[tuple[int, dict]]:
    """Stream (line number, event) pairs; the header first. Bounded memory.

    ``validate``: every field a replay relies on must have its type (``transcript.schema``),
    else a one-line ``InputError`` naming the line and the field. Without it, events are
    read as data (the report draws odd fields as they are)."""
    from agentdbg.paths import open_input

    p = Path(path)
    try:
        fh = open_input(p)
    except FileNotFoundError:
        raise InputError(f"{p}: no such transcript") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a folder, not a transcript") from None
    except TimeoutError as exc:
        raise InputError(f"{p}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror}") from None
    with fh:
        yield from iter_lines(p, bounded_lines(p, fh), warnings, validate=validate)


MAX_LINE = 256 * 1024 * 1024   # bytes of one transcript line (one event)


def bounded_lines(name: Path, fh) -> Iterator[bytes]:
    """``fh``'s lines, none longer than ``MAX_LINE``: ``/dev/zero`` or a line that never ends is
    one error naming the line, never read until memory runs out."""
    for n in itertools.count(1):
        line = fh.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE:
            raise InputError(located(name, n, None, f"longer than {MAX_LINE} bytes; not a "
                                                    "transcript line"))
        yield line


def iter_lines(name, lines, warnings: list | None = None, *,
               validate: bool = False) -> Iterator[tuple[int, dict]]:
    """Parse transcript lines (bytes) from any iterable; ``name`` is for messages."""
    for n, raw in enumerate(lines, start=1):
        item = _parse_line(Path(str(name)), n, raw, first=n == 1, warnings=warnings,
                           validate=validate)
        if item is not None:
            yield item


def _parse_line(p: Path, n: int, raw: bytes, *, first: bool, warnings, validate: bool):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(located(p, n, exc.start + 1, "not UTF-8 text")) from None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if not text.endswith("\n") and not first:  # the last line, cut mid-write
            if warnings is not None:
                warnings.append(f"{p}:{n}: last line is truncated (the run was interrupted "
                                "while writing it); loaded every complete event before it")
            return None
        raise InputError(located(p, n, getattr(exc, "colno", None),
                                 f"invalid JSON: {getattr(exc, 'msg', exc)}")) from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise InputError(located(p, n, None, "each line must be a JSON object with a 'type'"))
    if first:
        if event.get("format") != FORMAT:
            raise InputError(located(p, n, None, f"not an agentdbg transcript (format "
                                                 f"{event.get('format')!r})"))
        if event.get("version") != VERSION:
            raise InputError(located(p, n, None, f"unsupported transcript version "
                                                 f"{event.get('version')!r}; this agentdbg "
                                                 f"reads version {VERSION}"))
    problem = event_problem(event, header=first) if validate else None
    if problem is not None:
        raise InputError(located(p, n, None, problem))
    return n, event


def load_transcript(path: str | os.PathLike, lines=None, *, validate: bool = False) -> Transcript:
    """Load a whole transcript (from ``lines`` when given, e.g. stdin's); ``validate`` as
    for ``iter_transcript``."""
    warnings: list[str] = []
    header = None
    events = []
    source = (iter_transcript(path, warnings, validate=validate) if lines is None else
              iter_lines(path, lines, warnings, validate=validate))
    for _, event in source:
        if header is None:
            header = event
        else:
            events.append(event)
    if header is None:
        raise InputError(f"{path}: empty transcript")
    return Transcript(Path(path), header, events, warnings)


def messages_over_time(events) -> Iterator[list]:
    """The messages of each request, rebuilt from prefix + append."""
    current: list = []
    for e in events:
        if e["type"] == "request":
            current = current[:e["prefix"]] + list(e["append"])
            yield current


def is_transcript(path: str | os.PathLike) -> bool:
    from agentdbg.paths import open_input

    try:
        with open_input(path) as fh:
            head = fh.read(200)
    except OSError:   # TimeoutError too: a FIFO nobody writes is no transcript
        return False
    return b'"agentdbg-transcript"' in head
