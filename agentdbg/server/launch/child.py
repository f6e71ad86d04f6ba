"""The wrapped command: run it with the terminal, wait for it, leave nothing of it behind.

The command inherits agentdbg's standard input, output and error as they were (its terminal,
raw mode and all), in agentdbg's own process group — the terminal's Ctrl-C, Ctrl-\\ and
Ctrl-Z reach it directly, as they would without agentdbg. While it runs, agentdbg:

* ignores a SIGINT or SIGQUIT the terminal sent (the command got it too and decides what it
  means; a full-screen agent may just clear its prompt), and passes one that came from
  elsewhere (``kill -INT``, no terminal) on to the command;
* passes SIGTERM and SIGHUP on to the command, and goes on waiting for it to end;
* takes in the command's orphaned descendants (Linux: a child subreaper), so that once the
  command has ended, any process it left behind is ended too.

agentdbg's own output meanwhile goes to its log file (``Redirect``), never onto the screen.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

FORWARDED = (signal.SIGTERM, signal.SIGHUP)
TERMINAL_SENT = (signal.SIGINT, signal.SIGQUIT)
LEFTOVER_GRACE = 2.0     # seconds a leftover process gets between SIGTERM and SIGKILL


@dataclass
class Ended:
    status: int            # what agentdbg exits with: the command's status, 128+N for signal N
    how: str               # "exited with status 0", "was killed by SIGTERM"
    seconds: float
    signals: list[str]     # the signals agentdbg received while it ran
    signal: str | None = None   # the signal that ended the command (None: it exited)


class Redirect:
    """agentdbg's stdout and stderr into ``log_fd`` until ``restore``; the originals are kept
    (``stdout``/``stderr``) for the command and for the summary at the end."""

    def __init__(self, log_fd: int):
        sys.stdout.flush()
        sys.stderr.flush()
        self.stdout, self.stderr = os.dup(1), os.dup(2)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)

    def restore(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.stdout, 1)
        os.dup2(self.stderr, 2)
        os.close(self.stdout)
        os.close(self.stderr)


def become_subreaper() -> bool:
    """Orphans of the command become agentdbg's children (Linux), so they can be ended."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0     # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _from_terminal() -> bool:
    """Would a terminal's Ctrl-C have reached the command too (we are its foreground group)?"""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(fd)


def run(argv: list[str], env: dict[str, str], stdout: int, stderr: int) -> Ended:
    """Run the command to its end (see the module's docstring for signals)."""
    received: list[str] = []
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=stdout, stderr=stderr, close_fds=True)

    def handler(signum: int, _frame: object) -> None:
        received.append(signal.Signals(signum).name)
        if signum in TERMINAL_SENT and _from_terminal():
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)
    previous = {s: signal.signal(s, handler) for s in (*TERMINAL_SENT, *FORWARDED)}
    try:
        code = proc.wait()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    seconds = time.monotonic() - start
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return Ended(128 - code, f"was killed by {name}", seconds, received, name)
    return Ended(code, f"exited with status {code}", seconds, received)


def children(exclude: set[int]) -> list[int]:
    """This process's children still there (Linux: from /proc), but for ``exclude``."""
    me = os.getpid()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit() or int(name) in exclude:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def end_leftovers(exclude: set[int]) -> int:
    """End what the command left running (SIGTERM, then SIGKILL); returns how many there were."""
    left = children(exclude)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + LEFTOVER_GRACE
    pending = set(left)
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                gone = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                gone = True
            if gone:
                pending.discard(pid)
        time.sleep(0.05)
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return len(left)
