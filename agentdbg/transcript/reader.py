"""Reading a transcript: streamed line by line into typed events, one-line errors naming the line.

The one reader every command uses. Each line is decoded into its event class
(``transcript.events``); a field of the wrong type is an ``InputError`` naming the line and the
field. The reader also rebuilds each request's whole messages array (``Request.messages``) and
the stop event's, from ``prefix`` + ``append``, so no consumer does it again; it reads version 1
through the same path (its first request counted from no messages, its stop event held them all).
A file that is another tool's record of a run (a Claude Code session, a Codex CLI rollout,
OpenTelemetry traces: recognised by content) is imported first and read the same way; so is a run
saved as one JSON document (step mode's ``save`` when it writes from memory, ``run --json``).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.errors import InputError, located, where
from agentdbg.i18n import N_, Msg
from agentdbg.transcript.events import (
    FORMAT,
    READS,
    AgentNamed,
    AnyEvent,
    EventError,
    Header,
    JSONObject,
    Message,
    Request,
    Stop,
    convert,
    decode_line,
)


@dataclass
class Transcript:
    """A whole transcript in memory (``load_transcript``); commands that can stream use
    ``read_transcript`` instead."""
    path: Path
    header: Header
    events: list[AnyEvent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def agent(self) -> str | None:
        """The conversation's agent: the last one an ``agent`` event named, else the header's."""
        named = next((e.name for e in reversed(self.events) if isinstance(e, AgentNamed)), None)
        return named if named is not None else self.header.agent

    @property
    def stop(self) -> Stop | None:
        return next((e for e in reversed(self.events) if isinstance(e, Stop)), None)

    def final_messages(self) -> list[Message]:
        """The final messages: the stop event's, else those of the last request."""
        stop = self.stop
        if stop is not None and stop.messages is not None:
            return stop.messages
        last = next((e for e in reversed(self.events) if isinstance(e, Request)), None)
        return list(last.messages or []) if last is not None else []


Numbered = Iterator[tuple[int, AnyEvent]]


def read_transcript(path: str | os.PathLike[str], warnings: list[str] | None = None,
                    lines: Iterable[bytes] | None = None) -> tuple[Header, Numbered]:
    """The header, and a stream of (line number, event) for the rest. Bounded memory: one
    line at a time, and the messages of the request last read. ``lines``: the transcript's
    lines (bytes) from elsewhere (stdin), else the file is read."""
    p = Path(path)
    source = iter(lines) if lines is not None else _file_lines(p)
    first = next(source, None)
    if first is None:
        raise InputError(Msg(N_("{path}: empty transcript"), {"path": p}))
    if lines is None and FORMAT.encode() not in first[:4096]:
        if first.strip() == b"{":      # a run saved as one JSON document (step mode's 'save')
            document = _document(p)
            if document is not None:
                getattr(source, "close", lambda: None)()
                return read_transcript(p, warnings, document)
        if foreign(p):
            return _imported(p, warnings)
    header, version = _header(p, first)
    return header, _events(p, header, version, source, warnings)


def foreign(path: str | os.PathLike[str]) -> str | None:
    """The other tool whose record ``path`` is (a Claude Code session, a Codex CLI rollout,
    OpenTelemetry traces), None for anything else: such a file is read as a transcript."""
    from agentdbg.transcript.imported import foreign as detect

    return detect(Path(path))


def _document(p: Path) -> list[bytes] | None:
    """A run document's transcript lines (``transcript.document``), None for any other file."""
    from agentdbg.paths import open_input
    from agentdbg.transcript.saved_run import MAX_DOCUMENT, is_document, transcript_lines

    try:
        with open_input(p) as fh:
            head = fh.read(4096)
            if not is_document(head):
                return None
            data = head + fh.read(MAX_DOCUMENT + 1 - len(head))
    except OSError as exc:
        raise InputError(Msg(N_("{path}: cannot read: {reason}"),
                             {"path": p, "reason": exc.strerror or exc})) from None
    return transcript_lines(p, data)


def _imported(p: Path, warnings: list[str] | None) -> tuple[Header, Numbered]:
    """Another tool's record, imported into a temporary transcript and read from there (the
    temporary folder goes when the events are read, or dropped)."""
    from agentdbg.transcript.imported import as_transcript

    held = as_transcript(p)
    path, said = held.__enter__()
    try:
        header, events = read_transcript(path, warnings)
    except BaseException:
        held.__exit__(None, None, None)
        raise
    if warnings is not None:
        warnings.extend(said)

    def read() -> Numbered:
        try:
            yield from events
        finally:
            held.__exit__(None, None, None)
    return header, read()


def _file_lines(p: Path) -> Iterator[bytes]:
    from agentdbg.paths import open_input

    try:
        fh = open_input(p)
    except FileNotFoundError:
        raise InputError(Msg(N_("{path}: no such transcript"), {"path": p})) from None
    except IsADirectoryError:
        raise InputError(Msg(N_("{path}: is a folder, not a transcript"), {"path": p})) from None
    except TimeoutError as exc:
        raise InputError(f"{p}: {exc}") from None
    except OSError as exc:
        raise InputError(Msg(N_("{path}: cannot read: {reason}"),
                             {"path": p, "reason": exc.strerror})) from None
    with fh:
        yield from bounded_lines(p, fh)


MAX_LINE = 256 * 1024 * 1024   # bytes of one transcript line (one event)


def bounded_lines(name: Path, fh: Any) -> Iterator[bytes]:
    """``fh``'s lines, none longer than ``MAX_LINE``: ``/dev/zero`` or a line that never ends is
    one error naming the line, never read until memory runs out."""
    for n in itertools.count(1):
        line = fh.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE:
            raise InputError(Msg("{where}: longer than {limit} bytes; not a transcript line",
                                 {"where": where(name, n, None), "limit": MAX_LINE}))
        yield line


def _header(p: Path, raw: bytes) -> tuple[Header, int]:
    value = _parse(p, 1, raw)
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise InputError(Msg(N_("{where}: each line must be a JSON object with a 'type'"),
                             {"where": where(p, 1, None)}))
    if value.get("format") != FORMAT:
        raise InputError(Msg(N_("{where}: not an agentdbg transcript (format {format})"),
                             {"where": where(p, 1, None), "format": _shown(value.get("format"))}))
    version = value.get("version")
    if isinstance(version, bool) or version not in READS:
        raise InputError(Msg(N_("{where}: unsupported transcript version {version}; this agentdbg "
                                "reads versions {versions}"),
                             {"where": where(p, 1, None), "version": _shown(version),
                              "versions": ", ".join(map(str, READS))}))
    try:
        header = convert(value, header=True)
    except EventError as exc:
        raise InputError(Msg("{where}: {problem}", {"where": where(p, 1, None), "problem": exc.args[0]})) \
            from None
    assert isinstance(header, Header)
    return header, int(version)


def _parse(p: Path, n: int, raw: bytes) -> object:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Msg(N_("{where}: not UTF-8 text"),
                             {"where": where(p, n, exc.start + 1)})) from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(Msg(N_("{where}: invalid JSON: {problem}"),
                             {"where": where(p, n, getattr(exc, "colno", None)),
                              "problem": getattr(exc, "msg", exc)})) from None


def _events(p: Path, header: Header, version: int, lines: Iterator[bytes],
            warnings: list[str] | None) -> Numbered:
    current: list[Message] = [] if version == 1 else list(header.initial_messages or [])
    body: JSONObject | None = None   # the last request's native body, whole
    tools = header.tools
    for n, raw in enumerate(lines, start=2):
        event = _event(p, n, raw, warnings)
        if event is None:
            continue
        if isinstance(event, Request):
            current = _rebuilt(p, n, "request", current, event.prefix, event.append)
            event.messages = current
            if version >= 2 and tools and (event.params is None or "tools" not in event.params):
                event.params = {**(event.params or {}), "tools": tools}
            if event.body is not None and event.body_prefix:
                event.body = _whole_body(p, n, event.body, event.body_prefix, body)
            body = event.body
        elif isinstance(event, Stop) and event.messages is None and event.append is not None:
            event.messages = _rebuilt(p, n, "stop", current, event.prefix or 0, event.append)
        yield n, event


def _rebuilt(p: Path, n: int, kind: str, current: list[Message], prefix: int,
             append: list[Message]) -> list[Message]:
    if prefix > len(current):
        raise InputError(located(p, n, None, f"{kind} event: field 'prefix' is {prefix}, but the "
                                             f"request before it held {len(current)} message(s)"))
    return current + append if prefix == len(current) else current[:prefix] + append


def _whole_body(p: Path, n: int, stored: JSONObject, cuts: dict[str, int],
                before: JSONObject | None) -> JSONObject:
    """A request's native body with each array's first items from the previous body."""
    whole = dict(stored)
    for key, count in cuts.items():
        previous, rest = (before or {}).get(key), stored.get(key)
        if not isinstance(previous, list) or count > len(previous) or not isinstance(rest, list):
            raise InputError(located(p, n, None, f"request event: field 'body_prefix.{key}' is "
                                                 f"{count}, but the body before it has no such items"))
        whole[key] = previous[:count] + rest
    return whole


def _event(p: Path, n: int, raw: bytes, warnings: list[str] | None) -> AnyEvent | None:
    try:
        event = decode_line(raw, header=False)
    except EventError as exc:
        raise InputError(Msg("{where}: {problem}", {"where": where(p, n, None), "problem": exc.args[0]})) \
            from None
    except UnicodeDecodeError as exc:
        raise InputError(Msg(N_("{where}: not UTF-8 text"),
                             {"where": where(p, n, exc.start + 1)})) from None
    except (ValueError, RecursionError) as exc:
        if not raw.endswith(b"\n"):  # the last line, cut mid-write
            if warnings is not None:
                warnings.append(f"{p}:{n}: last line is truncated (the run was interrupted "
                                "while writing it); loaded every complete event before it")
            return None
        raise InputError(Msg(N_("{where}: invalid JSON: {problem}"),
                             {"where": where(p, n, getattr(exc, "colno", None)),
                              "problem": getattr(exc, "msg", exc)})) from None
    assert not isinstance(event, Header)
    return event


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:40] + "…"


def load_transcript(path: str | os.PathLike[str], lines: Iterable[bytes] | None = None) -> Transcript:
    """Load a whole transcript (from ``lines`` when given, e.g. stdin's); another tool's
    record (``foreign``) is read as its first conversation."""
    warnings: list[str] = []
    header, events = read_transcript(path, warnings, lines)
    return Transcript(Path(path), header, [e for _, e in events], warnings)


def messages_over_time(events: Iterable[AnyEvent]) -> Iterator[list[Message]]:
    """The messages of each request, in order."""
    for e in events:
        if isinstance(e, Request) and e.messages is not None:
            yield e.messages


def is_run(path: str | os.PathLike[str]) -> bool:
    """A transcript, or another tool's record read as one (``foreign``)."""
    return is_transcript(path) or foreign(path) is not None


def is_transcript(path: str | os.PathLike[str]) -> bool:
    from agentdbg.paths import open_input

    try:
        with open_input(path) as fh:
            head = fh.read(200)
    except OSError:   # TimeoutError too: a FIFO nobody writes is no transcript
        return False
    return f'"{FORMAT}"'.encode() in head
