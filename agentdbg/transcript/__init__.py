"""Transcripts: a versioned JSON Lines event log of one run, written as it happens.

Line 1 is the header::

    {"type": "header", "format": "agentdbg-transcript", "version": 1,
     "agentdbg_version", "created", "model", "provider", "base_url",
     "question", "tools": [...], "tools_hash", "tools_file", "options": {...},
     "parent": null | {"path", "from_index"}}

then one event per line, each with ``type`` and ``seq``:

* ``request``  {turn, prefix, append, params}: the messages sent are the
  previous request's first ``prefix`` messages plus ``append``; ``params``
  is the rest of the request body (tools are in the header).
* ``response`` {turn, message, usage, finish_reason, latency_ms, note}
* ``model_error`` {turn, message, status, latency_ms}
* ``blocked``  {turn, findings}: the pre-send check stopped a request.
* ``tool``     {turn, index, tool_call_id, name, arguments, ok, error_type,
  content, detail, duration_ms, injected, stubbed, ...}
* ``action``   {action: edit|drop|rewind|retry|inject|fail, ...}: the user's hand.
* ``stop``     {reason, detail, messages, usage}: the final messages array.

Every line is flushed when written, so a crash or a kill loses at most the
event in flight; a truncated last line loads with a warning. API keys are never
written, and values matching the redaction patterns are replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg import __version__
from agentdbg.errors import InputError, located

FORMAT = "agentdbg-transcript"
VERSION = 1
REDACTED = "[REDACTED]"
DEFAULT_REDACT = [
    r"sk-[A-Za-z0-9_\-]{16,}",                 # OpenAI-style and many compatible providers
    r"(?i:bearer)\s+[A-Za-z0-9._\-]{12,}",      # authorization headers
    r"AKIA[0-9A-Z]{16}",                        # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{30,}",              # GitHub tokens
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",           # Slack tokens
    r"AIza[0-9A-Za-z_\-]{35}",                  # Google API keys
]


class Redactor:
    def __init__(self, patterns: Iterable[str] = (), secrets: Iterable[str] = ()):
        self.pattern = re.compile("|".join(f"(?:{p})" for p in DEFAULT_REDACT))
        self.extra = []
        for p in patterns:
            try:
                self.extra.append(re.compile(p))
            except re.error as exc:
                from agentdbg.errors import ConfigError

                raise ConfigError(f"--redact {p!r} is not a valid regular expression: {exc}") from None
        self.secrets = [s for s in secrets if s and len(s) >= 4]

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        for pattern in self.extra:  # the user's patterns may match short values
            value = pattern.sub(REDACTED, value)
        if len(value) < 12:  # no default key format is that short
            return value
        return self.pattern.sub(REDACTED, value)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value


def tools_hash(tools: list) -> str:
    text = json.dumps(tools, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class TranscriptWriter:
    """A session observer appending one flushed JSON line per event."""

    def __init__(self, path: str | os.PathLike, header: dict, redactor: Redactor | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.redact = redactor or Redactor()
        self.fh = open(self.path, "w", encoding="utf-8")
        self.seq = 0
        self._last: list = []
        self.error: OSError | None = None
        self._write({"type": "header", "format": FORMAT, "version": VERSION,
                     "agentdbg_version": __version__,
                     "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **header})

    def __call__(self, kind: str, data: dict) -> None:
        if kind == "request":
            data = dict(data)
            current = list(data.pop("messages"))
            prefix = 0
            for a, b in zip(self._last, current):
                if a is not b and a != b:  # the engine keeps objects; a proxy re-parses them
                    break
                prefix += 1
            data["prefix"], data["append"] = prefix, current[prefix:]
            self._last = current
        self._write({"type": kind, **data})

    def _write(self, event: dict) -> None:
        if self.error is not None or self.fh.closed:
            return
        event = {"seq": self.seq, **event} if event.get("type") != "header" else event
        self.seq += 1
        try:
            self.fh.write(json.dumps(self.redact(event), ensure_ascii=False, default=str) + "\n")
            self.fh.flush()
        except OSError as exc:  # e.g. a full disk: keep running, report it once
            self.error = exc

    def copy_to(self, target: Path) -> None:
        """A copy of the transcript so far (step mode's 'save')."""
        import shutil

        self.fh.flush()
        shutil.copyfile(self.path, target)

    def close(self) -> None:
        if not self.fh.closed:
            try:
                self.fh.close()
            except OSError as exc:
                self.error = exc


def start_transcript(session, path, *, model: str, provider: str, base_url: str | None,
                     question: str | None, redact: Iterable[str] = (), secrets: Iterable[str] = (),
                     parent: dict | None = None) -> TranscriptWriter:
    """Attach a writer to ``session``: the header now, every event as it happens."""
    tools = session.toolset.openai_tools()
    header = {
        "model": model, "provider": provider, "base_url": base_url, "question": question,
        "tools": tools, "tools_hash": tools_hash(tools), "tools_file": str(session.toolset.path),
        "options": {k: v for k, v in session.config.__dict__.items()},
        "initial_messages": list(session.messages), "parent": parent,
    }
    writer = TranscriptWriter(path, header, Redactor(list(redact), list(secrets)))
    session.observers.append(writer)
    return writer


# -- reading --------------------------------------------------------------------------

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
        if self.stop is not None:
            return self.stop["messages"]
        messages: list = []
        for m in messages_over_time(self.events):
            messages = m
        return messages


def iter_transcript(path: str | os.PathLike, warnings: list | None = None
                    ) -> Iterator[tuple[int, dict]]:
    """Stream (line number, event) pairs; the header first. Bounded memory."""
    p = Path(path)
    try:
        fh = open(p, "rb")
    except FileNotFoundError:
        raise InputError(f"{p}: no such transcript") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror}") from None
    with fh:
        yield from iter_lines(p, fh, warnings)


def iter_lines(name, lines, warnings: list | None = None) -> Iterator[tuple[int, dict]]:
    """Parse transcript lines (bytes) from any iterable; ``name`` is for messages."""
    for n, raw in enumerate(lines, start=1):
        item = _parse_line(Path(str(name)), n, raw, first=n == 1, warnings=warnings)
        if item is not None:
            yield item


def _parse_line(p: Path, n: int, raw: bytes, *, first: bool, warnings):
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
    return n, event


def load_transcript(path: str | os.PathLike, lines=None) -> Transcript:
    """Load a whole transcript (from ``lines`` when given, e.g. stdin's)."""
    warnings: list[str] = []
    header = None
    events = []
    source = iter_transcript(path, warnings) if lines is None else iter_lines(path, lines, warnings)
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
    try:
        with open(path, "rb") as fh:
            head = fh.read(200)
    except OSError:
        return False
    return b'"agentdbg-transcript"' in head


# -- where runs are kept -----------------------------------------------------------------

def runs_dir() -> Path:
    from agentdbg.paths import data_dir

    return data_dir() / "runs"


def new_run_path(question: str) -> Path:
    slug = re.sub(r"[^\w]+", "-", question, flags=re.UNICODE).strip("-")[:40] or "run"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = runs_dir() / f"{stamp}-{slug}"
    path, n = base.with_suffix(".jsonl"), 1
    while path.exists():
        n += 1
        path = base.parent / f"{base.name}-{n}.jsonl"
    return path


def prune_runs(keep: int) -> int:
    """Keep the newest ``keep`` transcripts in the runs folder; returns how many were removed."""
    files = sorted(runs_dir().glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        old.unlink(missing_ok=True)
    return max(0, len(files) - keep)
