"""Transcript files: created exclusively (two runs never share one) or opened under a lock.

Every file is held with a lock while it is written, so retention (``transcript.runs``) never
removes it; here, below both the writer and the runs folder, so neither imports the other (a
``--save`` path is opened in ``runs``, which knows who else is writing one).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO


def create_exclusive(path: Path) -> IO[str]:
    """A new file at ``path``; ``FileExistsError`` when one is there already.

    The file is held with an exclusive lock for as long as it is open, so retention (see
    ``finished_transcript``) leaves it alone however it ends, even after a stop event: a step
    session at its prompt may rewind and write more."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    if sys.platform != "win32":
        import fcntl

        # new, so no writer holds it (retention's probe lets go at once); a filesystem
        # without locks refuses, and the file is then written unlocked
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
    return os.fdopen(fd, "w", encoding="utf-8")


class Replaced(OSError):
    """The transcript's file is no longer the one this writer created."""


def append_to(path: Path, data: bytes) -> None:
    """Append ``data`` to the file this writer created at ``path`` (the proxy opens it for each
    event): never through a symlink planted in its place, never to a FIFO, a device or a file
    with other names (a hard link), never re-created once removed."""
    import stat

    flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise Replaced(exc.errno, "it was replaced by a symlink; agentdbg does not write "
                                      "through one") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise Replaced(0, "it was replaced by something else than the file agentdbg created "
                              "(a hard link, a device or a pipe); agentdbg does not write to it")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
