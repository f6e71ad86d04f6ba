"""Helpers for the MCP tests: demo server configs, an HTTP server process, the /proc process table."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO = HERE / "servers" / "demo_server.py"
DRIVER = HERE / "mcp_driver.py"


def demo_config(name: str = "demo", *, mode: str = "", events: Path | None = None, **extra):
    """A stdio config for the demo server; ``env`` entries are merged over the mode's."""
    from agentdbg.mcp.config import parse_server_config

    env = {"AGENTDBG_MCP_TEST_MODE": mode, **extra.pop("env", {})}
    if events is not None:
        env["AGENTDBG_MCP_TEST_EVENTS"] = str(events)
    return parse_server_config({"name": name, "command": "python", "args": [str(DEMO)], "env": env,
                                **extra})


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def wait_until(predicate, timeout: float = 5.0, step: float = 0.02):
    """Poll a real process's state; returns the last value of ``predicate``."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(step)
        value = predicate()
    return value


# -- the process table, from /proc -------------------------------------------
def _stat(pid: int) -> tuple[int, int, str] | None:
    """(ppid, pgid, state) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().decode("ascii", "replace").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[2]), fields[0]


def running(pid: int) -> bool:
    """Exists and is not a zombie."""
    stat = _stat(pid)
    return stat is not None and stat[2] != "Z"


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in a process group."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pgid and stat[2] != "Z":
                out.append(int(entry))
    return out


def descendants(root: int) -> list[int]:
    """Live processes below ``root`` in the process tree."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[2] != "Z":
                children.setdefault(stat[0], []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def gone(pids) -> bool:
    return not any(running(p) for p in pids)


# -- an HTTP server -------------------------------------------------------------
class HttpServer:
    def __init__(self, env: dict):
        full = {**os.environ, **env}
        self.proc = subprocess.Popen([sys.executable, str(DEMO), "--http"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=full, start_new_session=True)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 20)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"demo HTTP server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
