"""The runs folder: where transcripts go when no --save is given, its retention, and
how a run is named on the command line (``resolve_run``: a path, a name or a number
that ``agentdbg runs`` shows, or ``last``).

Retention removes only agentdbg's own *finished* transcripts (a header of ours, and a
last line that is a stop event) that no process is writing: a user's other ``.jsonl``
files, a transcript whose writer still holds it, symlinks and files that vanish
meanwhile are left alone. A writer holds its transcript with a lock on the open file
(``run``, ``replay``, step mode: see ``create_exclusive``), or, when it writes many
without keeping them open (the proxy, one per conversation), with a ``Claim``: one locked
file in their folder that lists them.
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
    from agentdbg.transcript.files import create_exclusive

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


CLAIM_PREFIX = ".agentdbg-writing-"
_LAST_LINE_LIMIT = 64 << 20  # a longer stop event is not read: its transcript is kept


class Claim:
    """A process's hold on the transcripts it writes in ``folder`` without keeping them open.

    The claim is a file in that folder, named ``.agentdbg-writing-….lock``, that lists the
    transcripts' names, one a line, and that this process holds with an exclusive lock from
    its first ``add`` until ``close`` (or until it ends, however it ends: the lock goes with
    the process, and retention then removes the file). One descriptor for any number of
    transcripts."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.path: Path | None = None
        self._fd: int | None = None

    def add(self, transcript: Path) -> None:
        """Hold ``transcript`` (a file in the claim's folder) until ``close``."""
        if sys.platform == "win32":  # pragma: no cover - no flock: the stop event decides
            return
        if self._fd is None:
            self._fd, self.path = self._create()
        os.write(self._fd, os.fsencode(Path(transcript).name) + b"\n")

    def _create(self) -> tuple[int, Path]:
        """The claim file, locked before it is seen under its name: retention never finds it
        unheld while its process lives."""
        import fcntl
        import secrets

        stem = f"{CLAIM_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        pending = self.folder / f"{stem}.new"
        fd = os.open(pending, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(pending, self.folder / f"{stem}.lock")
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(pending)
            raise
        return fd, self.folder / f"{stem}.lock"

    def close(self) -> None:
        """Let go of every transcript (their stop events are written)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)  # type: ignore[arg-type]
            os.close(fd)


def claimed(folder: Path) -> set[str]:
    """The names of the transcripts in ``folder`` a live process holds with a ``Claim``; a
    claim no process holds any more (its writer was killed) is removed."""
    return set(_claims(folder))


def _claims(folder: Path) -> dict[str, str]:
    """``claimed``, each name with the claim file's name (which carries the writer's pid)."""
    names: dict[str, str] = {}
    for path in folder.glob(f"{CLAIM_PREFIX}*.lock") if folder.is_dir() else []:
        with contextlib.suppress(OSError):
            if path.is_symlink() or not path.is_file():
                continue
            with open(path, "rb") as fh:
                if _locked(fh):
                    names.update((os.fsdecode(n), path.name) for n in fh.read().split(b"\n") if n)
                    continue
            os.unlink(path)
    return names


def being_written(path: Path, *, locks: bool = True) -> str | None:
    """Why another process is writing the transcript at ``path`` (by any name: a symlink to it
    counts), or None: a proxy's ``Claim`` lists it, or (``locks``) a writer holds its lock."""
    real = Path(os.path.realpath(path))
    holder = _claims(real.parent).get(real.name)
    if holder is not None:
        pid = holder[len(CLAIM_PREFIX):].split("-", 1)[0]
        return f"an agentdbg proxy (pid {pid}) is writing this conversation's transcript right now"
    if not locks:
        return None
    try:
        with open(real, "rb") as fh:
            if os.path.isfile(real) and _locked(fh):
                return "another agentdbg is writing this transcript right now"
    except OSError:
        return None
    return None


def open_locked(path: Path) -> IO[str]:
    """``path`` for writing, held with an exclusive lock for as long as it is open.

    A second agentdbg writing the same path at the same time gets a clear error instead
    of interleaving its lines with ours."""
    import stat

    from agentdbg.errors import InputError
    from agentdbg.i18n import N_, Msg

    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    regular = stat.S_ISREG(os.fstat(fd).st_mode)  # not /dev/null, a pipe or a terminal
    if regular and sys.platform != "win32":
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(Msg(N_("{path}: another agentdbg is writing this transcript right "
                                    "now; choose another --save path"), {"path": path})) from None
    # the proxy holds its transcripts by a claim, not a lock (ours is held on this file now)
    busy = being_written(path, locks=False) if regular else None
    if busy is not None:
        os.close(fd)
        raise InputError(f"{path}: {busy}; choose another --save path")
    if regular:
        os.ftruncate(fd, 0)
    return os.fdopen(fd, "w", encoding="utf-8")


def finished_transcript(path: Path, held: set[str] | None = None) -> bool:
    """One of ours, whose last line is a stop event, and no process writing it.

    A stop event is a whole last line (ending with its newline) whose own ``type`` is
    ``stop``: a ``{"type": "stop"}`` nested in a recorded response is not one. ``held``:
    the names ``claimed`` found in the folder (read once for many files)."""
    from agentdbg.transcript.events import FORMAT

    try:
        if path.is_symlink() or not path.is_file():
            return False
        with open(path, "rb") as fh:
            if f'"{FORMAT}"'.encode() not in fh.read(300):
                return False
            if not _is_stop(_last_line(fh, os.fstat(fh.fileno()).st_size)):
                return False
            if path.name in (claimed(path.parent) if held is None else held):
                return False
            return not _locked(fh)
    except OSError:
        return False


def _last_line(fh: IO[bytes], size: int) -> bytes | None:
    """The file's last line without its newline; None when it has none yet (still being
    written) or is longer than the limit."""
    if size == 0:
        return None
    fh.seek(size - 1)
    if fh.read(1) != b"\n":
        return None
    end = start = size - 1
    parts = []
    while start > 0:
        n = min(65536, start)
        fh.seek(start - n)
        chunk = fh.read(n)
        start -= n
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            parts.append(chunk[cut + 1:])
            break
        parts.append(chunk)
        if end - start > _LAST_LINE_LIMIT:
            return None
    return b"".join(reversed(parts))


def _is_stop(line: bytes | None) -> bool:
    if not line or b'"stop"' not in line:
        return False
    try:
        from orjson import loads
    except ImportError:  # pragma: no cover - orjson is a dependency
        from json import loads  # type: ignore[assignment]
    try:
        event = loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(event, dict) and event.get("type") == "stop"


def _locked(fh: IO[bytes]) -> bool:
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
    held = claimed(folder)
    dated = []
    for path in folder.glob("*.jsonl") if folder.is_dir() else []:
        with contextlib.suppress(OSError):
            if finished_transcript(path, held):
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
    1, 2, … in this order (the most recently written first; the name breaks a tie; the
    conversations of one proxy run together, in their order, where its newest one is)."""
    from agentdbg.transcript.tree import grouped

    folder = runs_dir()
    dated = []
    for path in folder.glob("*.jsonl") if folder.is_dir() else []:
        with contextlib.suppress(OSError):
            if path.is_file():
                dated.append((path.stat().st_mtime, path.name, path))
    dated.sort(reverse=True)
    return grouped([path for _, _, path in dated])


def run_name(path: Path) -> str:
    """The name ``agentdbg runs`` shows for a saved run (accepted back by ``resolve_run``)."""
    return path.name[:-len(".jsonl")] if path.name.endswith(".jsonl") else path.name


def resolve_run(text: str | os.PathLike) -> Path:
    """What the user typed for a transcript: a path that exists, or what ``agentdbg runs``
    shows — a number from its list (1 is the newest), a run's name (with or without
    ``.jsonl``), or ``last``. Raises ``InputError`` (one line) when it is none of these."""
    from agentdbg.errors import InputError
    from agentdbg.i18n import N_, Msg

    raw = os.fspath(text)
    if not raw.strip():
        raise InputError(Msg(N_("no transcript given: a path, or a # or a name from 'agentdbg runs'")))
    path = Path(raw)
    if raw == "-" or path.exists():
        return path
    if raw == LAST or raw.isdecimal():
        runs = saved_runs()
        n = 1 if raw == LAST else int(raw)
        if not runs:
            raise InputError(Msg(N_("{name}: no such file, and no saved runs in {folder} yet"),
                                 {"name": raw, "folder": runs_dir()}))
        if not 1 <= n <= len(runs):
            raise InputError(Msg(N_("{name}: no such file, and no run #{n}: 'agentdbg runs' lists "
                                    "{count} (1 is the newest)"),
                                 {"name": raw, "n": n, "count": len(runs)}))
        return runs[n - 1]
    if os.sep not in raw and (os.altsep is None or os.altsep not in raw) and raw not in (".", ".."):
        folder = runs_dir()
        for candidate in (folder / raw, folder / f"{raw}.jsonl"):
            if candidate.is_file():
                return candidate
    raise InputError(Msg(N_("{name}: no such file, and no saved run by that name ('agentdbg runs' "
                            "lists them; a # from its list or 'last' works too)"), {"name": raw}))
