"""The stdio server's process: its stderr (kept, bounded), its id, and killing its group.

The SDK spawns the server in a new session, so its process group id is its pid and a
Ctrl-C at the terminal does not reach it; agentdbg must stop it itself. The SDK does not
expose the process, so the server's stderr goes to a pipe made here and the child whose
fd 2 is that pipe is the server (Linux ``/proc``; elsewhere the pid stays unknown and only
the SDK's own shutdown applies).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from typing import TextIO

from agentdbg.mcp.errors import printable

STDERR_KEEP = 64 * 1024     # bytes of the server's stderr kept (the end)


class StderrTap:
    """A pipe for the server's stderr, drained by a thread into a bounded buffer."""

    def __init__(self, keep: int = STDERR_KEEP):
        self.keep = keep
        self._buf = bytearray()
        self.total = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        r, w = os.pipe()
        self.inode = os.fstat(w).st_ino
        self._r = r
        self.writer: TextIO | None = open(w, "w", encoding="utf-8", closefd=True)
        self._thread = threading.Thread(target=self._drain, name="agentdbg-mcp-stderr", daemon=True)
        self._thread.start()

    def close_writer(self) -> None:
        """Our copy of the write end: closed once the child holds its own."""
        if self.writer is not None:
            with contextlib.suppress(OSError):
                self.writer.close()
            self.writer = None

    def stop(self, wait: float = 0.5) -> None:
        self.close_writer()
        self._thread.join(wait)  # EOF normally ends it at once
        self._stop.set()

    def wait_eof(self, timeout: float) -> None:
        """Wait until everything the (exited) server wrote has been read."""
        self._thread.join(timeout)

    def text(self, max_chars: int = 4000) -> str:
        """The end of what the server wrote, decoded and free of terminal escapes."""
        with self._lock:
            data = bytes(self._buf[-max_chars * 4:])
        text = data.decode("utf-8", "replace")[-max_chars:]
        return printable(text).strip()

    def _drain(self) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([self._r], [], [], 0.2)
                if not ready:
                    continue
                chunk = os.read(self._r, 65536)
                if not chunk:
                    break
                with self._lock:
                    self.total += len(chunk)
                    self._buf += chunk
                    if len(self._buf) > self.keep:
                        del self._buf[: len(self._buf) - self.keep]
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self._r)


def child_with_stderr(inode: int) -> int | None:
    """The pid of our child process whose stderr is the pipe ``inode`` (Linux only)."""
    me, target = os.getpid(), f"pipe:[{inode}]"
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == me and os.readlink(f"/proc/{entry}/fd/2") == target:
                return int(entry)
        except (OSError, ValueError, IndexError):
            continue
    return None


def process_running(pid: int) -> bool:
    """Running (a zombie has exited); without /proc, whether its group is still there."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except OSError:
        return group_alive(pid)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def stop_group(pgid: int, grace: float = 1.0) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after ``grace`` seconds."""
    if not group_alive(pgid):
        return
    signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if group_alive(pgid):
        signal_group(pgid, signal.SIGKILL)
