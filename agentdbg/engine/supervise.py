"""A command tool's supervisor (Linux): it runs the command, and when the command ends, or
when agentdbg stops it, it kills every process the command started — also one that left the
command's process group or session (``setsid``), which a process-group kill misses.

Run as a script, standard library only, few imports: it starts for every call
(``python -I -S supervise.py -- ARGV…``). It makes
itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): a descendant whose parent
dies is re-parented to it, not to init, so every descendant stays in its tree, found through
``/proc``. SIGTERM (agentdbg stopping it, or agentdbg itself dying: ``PR_SET_PDEATHSIG``)
kills the tree and exits 143. Its exit status is the command's (128 + N for a signal N);
127 with a line starting ``agentdbg-supervise: cannot start`` when the command cannot run.
The command inherits its stdin, stdout and stderr: nothing is relayed.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
START_FAILED = "agentdbg-supervise: cannot start"


def descendants(root: int) -> list[int]:
    """Every process whose parent chain leads to ``root`` (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def kill_tree() -> None:
    """SIGKILL every descendant until none is left (an orphan comes back to us: we reap it)."""
    for _ in range(200):
        pids = descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:  # noqa: SIM105 - contextlib would cost this per-call script an import
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()
        time.sleep(0.005)


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        kill_tree()
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if os.getppid() == 1:          # agentdbg is gone already
        return 143
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as exc:
        print(f"{START_FAILED}: {exc}", file=sys.stderr, flush=True)
        return 127
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if done == pid:
            break
    kill_tree()                    # what the command left running dies with it
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    sys.exit(main(args) if args else 2)
