"""Transcript files: created exclusively (two runs never share one) or opened under a lock.

Every file is held with a lock while it is written, so retention (``transcript.runs``) never
removes it; here, below both the writer and the runs folder, so neither imports the other.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO

from agentdbg.errors import InputError


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


def open_locked(path: Path) -> IO[str]:
    """``path`` for writing, held with an exclusive lock for as long as it is open.

    A second agentdbg writing the same path at the same time gets a clear error instead
    of interleaving its lines with ours."""
    import stat

    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    regular = stat.S_ISREG(os.fstat(fd).st_mode)  # not /dev/null, a pipe or a terminal
    if regular and sys.platform != "win32":
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(f"{path}: another agentdbg is writing this transcript right now; "
                             "choose another --save path") from None
    if regular:
        os.ftruncate(fd, 0)
    return os.fdopen(fd, "w", encoding="utf-8")
