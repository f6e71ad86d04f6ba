"""The analysis backlog, bounded in memory: past a budget, bodies wait on disk.

The relay hands every request and response to the analyst, which may fall behind (it runs on
CPU time nobody else wants). Jobs queue in order; while the bodies queued in memory stay under
``MEMORY_BUDGET`` they travel through the queue itself, past it each body is written to a file
of its own in a private folder (``0700``, files ``0600``, created exclusively, never through a
symlink) and the job carries the file's name instead; the analyst reads and removes it when the
job's turn comes. The spool has a disk limit too: a body past it is not kept, and its exchange
is counted and named at stop as relayed but not recorded.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agentdbg.i18n import N_, Msg

MEMORY_BUDGET = 64 << 20     # bytes of bodies the queue may hold in memory
DISK_LIMIT = 8 << 30         # bytes of bodies the spool may hold on disk
JOB_COST = 512               # what a job costs in memory besides its body
#: where each kind of job carries its body (the request's or the response's bytes; an OTLP
#: export's, for ``collect``)
BODY_AT = {"request": 2, "response": 3, "export": 2}


@dataclass(frozen=True)
class Spooled:
    """A body waiting on disk."""

    path: str
    size: int


@dataclass(frozen=True)
class Dropped:
    """A body that could not be kept (the spool was full or unwritable): why, and its size.
    ``why`` is a ``Msg``: English where it is recorded (``str``), the chosen language where it is
    shown (``tr``)."""

    size: int
    why: Msg


def body_of(job: tuple) -> bytes | Spooled | Dropped | None:
    at = BODY_AT.get(job[0])
    return job[at] if at is not None else None


def weight(job: tuple) -> int:
    """What ``job`` costs in the queue's memory."""
    body = body_of(job)
    return JOB_COST + (len(body) if isinstance(body, (bytes, bytearray)) else 0)


def with_body(job: tuple, body: bytes | Spooled | Dropped) -> tuple:
    at = BODY_AT[job[0]]
    return (*job[:at], body, *job[at + 1:])


class Spool:
    """A private folder of bodies for one proxy; the analyst empties it as it goes."""

    def __init__(self, parent: Path, disk_limit: int = DISK_LIMIT):
        parent.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix=f"proxy-{os.getpid()}-", dir=parent))  # 0700
        self.disk_limit = disk_limit
        self.written = 0                  # bytes ever written (the analyst counts what it read)
        self._names = itertools.count(1)

    def keep(self, data: bytes, on_disk: int) -> Spooled | Dropped:
        """``data`` as a file; ``on_disk``: the bytes still waiting there."""
        if on_disk + len(data) > self.disk_limit:
            return Dropped(len(data), Msg(N_("the analysis backlog was full ({size} waiting on "
                                             "disk in {folder})"),
                                          {"size": _mb(self.disk_limit), "folder": str(self.folder)}))
        path = self.folder / f"{next(self._names)}.body"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | \
            getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(path)
            return Dropped(len(data), Msg(N_("the analysis backlog could not be written to "
                                             "{folder} ({error})"),
                                          {"folder": str(self.folder),
                                           "error": exc.strerror or type(exc).__name__}))
        self.written += len(data)
        return Spooled(str(path), len(data))

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def take(ref: Spooled) -> bytes | Dropped:
    """The body ``ref`` names, read and removed (the analyst's side)."""
    try:
        fd = os.open(ref.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return Dropped(ref.size, Msg(N_("its body was gone from the spool ({error})"),
                                     {"error": exc.strerror or type(exc).__name__}))
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(ref.size + 1)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(ref.path)
    if len(data) != ref.size:
        return Dropped(ref.size, Msg(N_("its body in the spool was changed")))
    return data


def _mb(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB"
