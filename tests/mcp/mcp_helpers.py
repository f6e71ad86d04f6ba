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


# -- tools files and CLI runs ---------------------------------------------------
def demo_yaml(path: Path, *servers: dict, tools: str = "") -> Path:
    """A tools.yaml naming demo servers: each dict is merged over a stdio demo server entry
    (``mode`` and ``events`` become its environment)."""
    import yaml

    entries = []
    for server in servers:
        server = dict(server)
        env = {"AGENTDBG_MCP_TEST_MODE": server.pop("mode", ""), **server.pop("env", {})}
        if "tag" in server:
            env["AGENTDBG_MCP_TEST_TAG"] = server.pop("tag")
        if "events" in server:
            env["AGENTDBG_MCP_TEST_EVENTS"] = str(server.pop("events"))
        entries.append({"name": "demo", "command": "python", "args": [str(DEMO)], "env": env, **server})
    text = "version: 1\n" + tools + yaml.safe_dump({"mcp_servers": entries}, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def server_pids(events: Path) -> set[int]:
    """The pids of every demo server that wrote to ``events`` (each lists its tools once)."""
    return {e["pid"] for e in read_events(events) if e["event"] == "list_page"}


def write_script(path: Path, *turns: dict) -> Path:
    """A --script file: each turn a dict with ``calls`` [(name, args), …] or ``content``."""
    import yaml

    out = []
    for i, turn in enumerate(turns, start=1):
        if "calls" in turn:
            out.append({"tool_calls": [{"name": n, "arguments": a, "id": f"call_{i}_{j}"}
                                       for j, (n, a) in enumerate(turn["calls"], start=1)]})
        else:
            out.append({"content": turn["content"]})
    path.write_text(yaml.safe_dump({"turns": out}, allow_unicode=True), encoding="utf-8")
    return path


def transcript(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return lines[0], lines[1:]


def tagged(tag: str) -> list[int]:
    """Live processes whose environment carries ``AGENTDBG_MCP_TEST_TAG=tag`` (our own only)."""
    needle = f"AGENTDBG_MCP_TEST_TAG={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and running(int(entry)):
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found
