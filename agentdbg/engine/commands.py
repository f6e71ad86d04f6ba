"""Command tools: a process per call, JSON on stdin, JSON on stdout.

Each command runs under a supervisor (Linux: ``engine/supervise.py``, a child subreaper)
in its own process group: a timeout, Ctrl-C or the command's end kills the command *and*
every process it started, also one that called ``setsid`` to leave the group. Elsewhere
(no ``prctl``/``/proc``) the process group is killed: a descendant that left it survives.
Output is read in bounded chunks (a tool printing gigabytes is cut at ``MAX_OUTPUT`` and
killed, never read whole). The tool gets the caller's environment without secrets:
variables whose name says they hold one (``*_API_KEY``, ``*TOKEN*``, ``*SECRET*``,
``*PASSWORD*``, ``MYSQL_PWD``, ``*WEBHOOK*`` …),
whose value looks like a key, a JWT, a webhook URL, a URL with credentials (an empty user
too: ``redis://:pw@host``) or a connection string with ``Password=``/``Pwd=``, or holds one
of the run's secrets (its API key), unless the tools file passes them by name
(``env: [NAME, …]``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable
from typing import IO

MAX_OUTPUT = 10_000_000     # bytes read from a command's stdout
MAX_STDERR = 64_000         # bytes of stderr kept (the tail)
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|"
                         r"SESSION|WEBHOOK|(^|_)PWD($|_))", re.IGNORECASE)   # MYSQL_PWD, not PWD
NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})                         # the working directory
SECRET_VALUE = re.compile(
    r"sk-[A-Za-z0-9_\-]{16,}|(?i:bearer)\s+\S{12,}|AKIA[0-9A-Z]{16}|"
    r"gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35}|"
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*|"      # a JWT
    r"(?i:https?://\S*(?:webhook|hooks\.slack\.com)\S*)|"                      # webhook URLs
    r"(?i:(?:^|;)\s*(?:password|pwd)\s*=\s*[^;\s])")                         # Password=… ;


class CommandFailed(Exception):
    """The command could not run to completion: ``kind`` is timeout | start | output."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


class Processes:
    """The command tools running now, so an interrupt can kill them (one set per executor)."""

    def __init__(self) -> None:
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()

    def add(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._running.add(proc)

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._running.discard(proc)

    def kill_all(self) -> None:
        with self._lock:
            procs = list(self._running)
        for proc in procs:       # each supervisor kills its tree at once; no waiting here
            kill_group(proc, wait=False)


SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervise.py")
SUPERVISED = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
STOP_GRACE = 2.0   # seconds a supervisor has to kill its tree before its group is killed


def kill_group(proc: subprocess.Popen, wait: bool = True) -> None:
    """Kill the command and everything it started. A supervised command: its supervisor is
    sent SIGTERM and kills the whole tree (then, after ``STOP_GRACE``, the process group is
    killed anyway); else the process group is killed."""
    if sys.platform == "win32":  # pragma: no cover - no process groups
        with contextlib.suppress(OSError):
            proc.kill()
        return
    if getattr(proc, "supervised", False) and proc.poll() is None:
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGTERM)
        if not wait:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_GRACE)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


#: a URL carrying credentials (``https://user:password@host``, ``redis://:password@host``, a
#: token as the user ``https://TOKEN@host``), whatever the variable's name
URL_CREDENTIALS = re.compile(r"://[^/\s:@]*:[^/\s@]+@|://[^/\s:@]{16,}@")


def tool_environment(passed: Iterable[str] = (), secrets: Iterable[str] = ()) -> dict[str, str]:
    """The environment a command tool gets: this one, minus secrets not passed by name —
    by the variable's name, by a value shaped like a key or a URL with credentials, and by
    value: any variable holding one of the run's own ``secrets`` (its API key, …)."""
    keep = set(passed)
    known = [s for s in secrets if isinstance(s, str) and len(s) >= 4]
    return {k: v for k, v in os.environ.items()
            if k in keep or k in NOT_SECRET_NAMES
            or not (SECRET_NAME.search(k) or SECRET_VALUE.search(v)
                    or URL_CREDENTIALS.search(v) or any(s in v for s in known))}


def run_command(argv: list[str], stdin: bytes, *, cwd: str, timeout: float,
                env: dict[str, str], processes: Processes) -> tuple[int, bytes, str]:
    """Run ``argv``; (exit status, stdout, stderr tail). Raises ``CommandFailed``."""
    started = [sys.executable, "-I", "-S", SUPERVISOR, "--", *argv] if SUPERVISED else argv
    try:
        proc = subprocess.Popen(started, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=cwd, env=env,
                                start_new_session=True)
    except OSError as exc:
        raise CommandFailed("start", f"command {argv!r}: {exc}") from None
    proc.supervised = SUPERVISED  # type: ignore[attr-defined]
    processes.add(proc)
    out, err = bytearray(), bytearray()
    overflow = threading.Event()
    readers = [threading.Thread(target=_read, args=(proc.stdout, out, MAX_OUTPUT, overflow, proc),
                                daemon=True),
               threading.Thread(target=_read_tail, args=(proc.stderr, err), daemon=True),
               threading.Thread(target=_write, args=(proc.stdin, stdin), daemon=True)]
    try:
        for t in readers:
            t.start()
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.wait()
            raise CommandFailed("timeout", f"command {argv!r} and its children killed after "
                                           f"{timeout:g}s") from None
        kill_group(proc)  # children that outlive the command die with it
        for t in readers:
            t.join(timeout=5)
    except BaseException:        # Ctrl-C, SIGTERM: the supervisor kills the tree on its own
        kill_group(proc, wait=False)
        raise
    finally:
        processes.discard(proc)
    if overflow.is_set():
        raise CommandFailed("output", f"command {argv!r} printed more than {MAX_OUTPUT} bytes; "
                                      "it was stopped there")
    stderr = err.decode("utf-8", "replace")[-2000:]
    if SUPERVISED and status == 127 and "agentdbg-supervise: cannot start" in stderr:
        raise CommandFailed("start", f"command {argv!r}: {stderr.split(': ', 2)[-1].strip()}")
    return status, bytes(out), stderr


def _read(stream: IO[bytes], sink: bytearray, limit: int, overflow: threading.Event,
          proc: subprocess.Popen) -> None:
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            return
        sink.extend(chunk)
        if len(sink) > limit:
            del sink[limit:]
            overflow.set()
            kill_group(proc)
            return


def _read_tail(stream: IO[bytes], sink: bytearray) -> None:
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            return
        sink.extend(chunk)
        if len(sink) > MAX_STDERR:
            del sink[:len(sink) - MAX_STDERR]


def _write(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError):
        stream.write(data)
        stream.close()
