"""Reading another tool's JSON Lines file: streamed, bounded, every error naming the line.

A session file can be a gigabyte: it is read one line at a time (never whole), a line longer
than ``MAX_LINE`` is refused with its number (a sane record is far smaller), and each line is
parsed as JSON into a plain value; what a line is not (not an object, a field of the wrong
type) is said by the source's reader with ``Where`` (``FILE:LINE: field 'message.content'
…``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.errors import InputError, where
from agentdbg.i18n import N_, Msg

MAX_LINE = 256 << 20      # bytes in one line (a huge tool output fits; a runaway file does not)


@dataclass(frozen=True)
class Where:
    path: Path
    line: int

    def error(self, message: Msg) -> InputError:
        return InputError(Msg("{where}: {problem}", {"where": where(self.path, self.line, None),
                                                     "problem": message}))


def open_lines(path: Path) -> Iterator[bytes]:
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise InputError(Msg(N_("{path}: no such file"), {"path": path})) from None
    except IsADirectoryError:
        raise InputError(Msg(N_("{path}: is a folder"), {"path": path})) from None
    except OSError as exc:
        raise InputError(Msg(N_("{path}: cannot read: {reason}"),
                             {"path": path, "reason": exc.strerror})) from None
    with fh:
        while True:
            raw = fh.readline(MAX_LINE + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE:
                raise InputError(Msg(N_("{path}: a line longer than {limit} MB; not a session "
                                        "file agentdbg can read"),
                                     {"path": path, "limit": MAX_LINE >> 20}))
            yield raw


def records(path: Path) -> Iterator[tuple[Where, dict[str, Any]]]:
    """Each non-empty line as a JSON object, with where it is. A last line cut mid-write (the
    client was still writing) is left out; any other line that is not JSON is an error."""
    previous: tuple[Where, bytes] | None = None
    for n, raw in enumerate(open_lines(path), start=1):
        if previous is not None:
            yield previous[0], _parsed(*previous, last=False)
        previous = (Where(path, n), raw) if raw.strip() else None
    if previous is not None:
        value = _parsed(*previous, last=True)
        if value is not None:
            yield previous[0], value


def _parsed(where: Where, raw: bytes, *, last: bool) -> Any:
    try:
        value = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise where.error(Msg("not UTF-8 text (byte {byte})", {"byte": exc.start + 1})) from None
    except RecursionError:
        raise where.error(Msg("JSON nested too deeply")) from None
    except ValueError as exc:
        if last and not raw.endswith(b"\n"):
            return None    # cut mid-write
        raise where.error(Msg("invalid JSON: {problem}", {"problem": getattr(exc, "msg", exc)})) from None
    if not isinstance(value, dict):
        raise where.error(Msg("each line must be a JSON object"))
    return value


def first_record(path: Path, limit: int = 64) -> list[dict[str, Any]]:
    """The first few JSON-object lines of ``path`` (what detection reads), [] when it is not
    JSON Lines at all. Never raises for content, only reads the start."""
    out: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as fh:
            for _ in range(limit):
                raw = fh.readline(1 << 20)
                if not raw:
                    break
                if not raw.strip():
                    continue
                try:
                    value = json.loads(raw)
                except (ValueError, RecursionError):
                    break
                if not isinstance(value, dict):
                    break
                out.append(value)
    except OSError:
        return []
    return out


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
