"""Where agentdbg keeps its own files (REPL history, saved runs)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO


def data_dir() -> Path:
    """``$AGENTDBG_HOME``, else ``$XDG_DATA_HOME/agentdbg``, else ``~/.local/share/agentdbg``."""
    home = os.environ.get("AGENTDBG_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "agentdbg"


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """``a`` and ``b`` name one file: the same path spelt otherwise, a symlink, a hard link.
    A path to nothing yet is the same only as itself (resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one names no file yet (or one that cannot be looked at)
        return Path(a).resolve() == Path(b).resolve()


#: how long a FIFO, a pipe or a device may keep agentdbg waiting for its first byte
IDLE_SECONDS = 30.0


def open_input(path: str | os.PathLike, *, idle: float = IDLE_SECONDS) -> BinaryIO:
    """``path`` opened for reading (binary) without hanging on a FIFO nobody writes.

    A regular file opens as usual. A FIFO, a pipe (``<(command)``) or a device is opened
    without blocking and waited on for its first byte at most ``idle`` seconds: ``TimeoutError``
    when nothing comes (``open()`` would wait for a writer for ever). After that it is read as
    it comes. ``OSError`` as ``open`` raises it (``IsADirectoryError`` for a folder)."""
    import select
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(mode) and hasattr(select, "poll"):
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLPRI)
            if not poller.poll(int(idle * 1000)):
                raise TimeoutError(f"nothing to read for {idle:g} s (a FIFO or a pipe nobody writes?)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike, limit: int, *, idle: float = IDLE_SECONDS) -> bytes:
    """At most ``limit + 1`` bytes of ``path`` (a caller that gets more knows it is too large):
    ``/dev/zero``, a FIFO or a pipe is never read until memory runs out (see ``open_input``)."""
    with open_input(path, idle=idle) as fh:
        return read_at_most(fh, limit)


def read_at_most(fh: BinaryIO, limit: int) -> bytes:
    """At most ``limit + 1`` bytes from ``fh``: a regular file in one read of its size (no
    copies joined: 17.8 MB took two copies in 1 MB chunks), anything else in chunks."""
    chunks, size = [], 0
    whole = _file_size(fh)
    while size <= limit:
        chunk = fh.read(min(max(whole + 1 - size, 1 << 20), limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _file_size(fh: BinaryIO) -> int:
    """The size of the regular file ``fh`` reads (0 for a pipe, a FIFO, a device)."""
    import stat

    try:
        st = os.fstat(fh.fileno())
    except (OSError, ValueError, AttributeError):   # no file descriptor (a BytesIO)
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0
