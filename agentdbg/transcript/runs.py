"""The runs folder: where transcripts go when no --save is given, its retention, and
how a run is named on the command line (``resolve_run``: a path, a name or a number
that ``agentdbg runs`` shows, or ``last``).

Retention removes only agentdbg's own *finished* transcripts (a header of ours and a
stop event at the end) that no process is writing: a user's other ``.jsonl`` files, a
conversation a running proxy is still recording, symlinks and files that vanish
meanwhile are left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from pathlib import Path
from typing import IO


def runs_dir() -> Path:
    from agentdbg.paths import data_dir

    return data_dir() / "runs"


def _slug(question: str) -> str:
    return re.sub(r"[^\w]+", "-", question, flags=re.UNICODE).strip("-")[:40] or "run"


def new_run_path(question: str) -> Path:
    """A name for a new transcript (not created: see ``create_run_file``)."""
    return runs_dir() / f"{time.strftime('%Y%m%d-%H%M%S')}-{_slug(question)}.jsonl"


def create_run_file(question: str, folder: Path | None = None,
                    stem: str | None = None) -> tuple[Path, IO[str]]:
    """Create a new transcript file exclusively: two runs started in the same second with
    the same question get two files (``…-2.jsonl``, ``…-3.jsonl``)."""
    from agentdbg.transcript.writer import create_exclusive

    folder = folder or runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    base = stem or f"{time.strftime('%Y%m%d-%H%M%S')}-{_slug(question)}"
    for n in range(1, 10_000):
        path = folder / (f"{base}.jsonl" if n == 1 else f"{base}-{n}.jsonl")
        try:
            return path, create_exclusive(path)
        except FileExistsError:
            continue
    raise OSError(f"{folder}: no free transcript name for {base}")


def finished_transcript(path: Path) -> bool:
    """One of ours, with its stop event, and no process writing it."""
    from agentdbg.transcript.writer import FORMAT

    try:
        if path.is_symlink() or not path.is_file():
            return False
        with open(path, "rb") as fh:
            if f'"{FORMAT}"'.encode() not in fh.read(300):
                return False
            fh.seek(max(0, path.stat().st_size - 65536))
            tail = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            if b'"type": "stop"' not in tail:
                return False
            return not _locked(fh)
    except OSError:
        return False


def _locked(fh) -> bool:
    if sys.platform == "win32":  # pragma: no cover
        return False
    import fcntl

    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return False


def prune_runs(keep: int) -> int:
    """Keep the newest ``keep`` finished transcripts; returns how many were removed."""
    folder = runs_dir()
    dated = []
    for path in folder.glob("*.jsonl") if folder.is_dir() else []:
        with contextlib.suppress(OSError):
            if finished_transcript(path):
                dated.append((path.stat().st_mtime, path))
    dated.sort(reverse=True)
    removed = 0
    for _, old in dated[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(old)
            removed += 1
    return removed


# -- naming a saved run on the command line -------------------------------------------------

LAST = "last"


def saved_runs() -> list[Path]:
    """The transcripts in the runs folder, newest first: ``agentdbg runs`` numbers them
    1, 2, … in this order (the most recently written first; the name breaks a tie)."""
    folder = runs_dir()
    dated = []
    for path in folder.glob("*.jsonl") if folder.is_dir() else []:
        with contextlib.suppress(OSError):
            if path.is_file():
                dated.append((path.stat().st_mtime, path.name, path))
    dated.sort(reverse=True)
    return [path for _, _, path in dated]


def run_name(path: Path) -> str:
    """The name ``agentdbg runs`` shows for a saved run (accepted back by ``resolve_run``)."""
    return path.name[:-len(".jsonl")] if path.name.endswith(".jsonl") else path.name


def resolve_run(text: str | os.PathLike) -> Path:
    """What the user typed for a transcript: a path that exists, or what ``agentdbg runs``
    shows — a number from its list (1 is the newest), a run's name (with or without
    ``.jsonl``), or ``last``. Raises ``InputError`` (one line) when it is none of these."""
    from agentdbg.errors import InputError

    raw = os.fspath(text)
    if not raw.strip():
        raise InputError("no transcript given: a path, or a # or a name from 'agentdbg runs'")
    path = Path(raw)
    if raw == "-" or path.exists():
        return path
    if raw == LAST or raw.isdecimal():
        runs = saved_runs()
        n = 1 if raw == LAST else int(raw)
        if not runs:
            raise InputError(f"{raw}: no such file, and no saved runs in {runs_dir()} yet")
        if not 1 <= n <= len(runs):
            raise InputError(f"{raw}: no such file, and no run #{n}: 'agentdbg runs' lists "
                             f"{len(runs)} (1 is the newest)")
        return runs[n - 1]
    if os.sep not in raw and (os.altsep is None or os.altsep not in raw) and raw not in (".", ".."):
        folder = runs_dir()
        for candidate in (folder / raw, folder / f"{raw}.jsonl"):
            if candidate.is_file():
                return candidate
    raise InputError(f"{raw}: no such file, and no saved run by that name ('agentdbg runs' "
                     "lists them; a # from its list or 'last' works too)")
