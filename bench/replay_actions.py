"""Replay of a recording with many user actions (issue 21's 10^6-action transcript).

An offline run of the bundled tools, with N recorded ``send`` actions (step mode's 'send')
inserted after its first turn, is replayed in batch (``agentdbg replay FILE --save …``,
output to /dev/null) at each size given; prints the transcript's size, the time and the peak
RSS of each replay, with the load average (the machine may be shared). Time should grow
linearly with N and memory stay flat.

    python bench/replay_actions.py [N ...]        # default: 10000 100000 1000000
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _util import machine

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def base_recording(path: Path) -> list[str]:
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import bundled_tools_path, load_tools
    from agentdbg.transcript import start_transcript

    s = Session.for_question(OfflineModel(), load_tools(bundled_tools_path()),
                             "北京和上海今天天气怎么样?", RunConfig(approve="all"))
    writer = start_transcript(s, path, model="offline", provider="offline", base_url=None,
                              question="q")
    s.step()
    s.send_once()                 # the action line to repeat
    while not s.done:
        s.step()
    writer.close()
    return path.read_text(encoding="utf-8").splitlines()


def with_actions(lines: list[str], n: int, path: Path) -> None:
    at = next(k for k, line in enumerate(lines) if '"type": "action"' in line)
    action = json.loads(lines[at])
    with path.open("w", encoding="utf-8") as fh:
        for line in lines[:at]:
            fh.write(line + "\n")
        for k in range(n):
            action["at_ms"] = round(k * 0.001, 3)
            fh.write(json.dumps(action) + "\n")
        for line in lines[at + 1:]:
            fh.write(line + "\n")


def measure(cmd: list[str]) -> tuple[float, float, int]:
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            f"r = subprocess.run({cmd!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "w = time.perf_counter() - t\n"
            "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, r.returncode)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=ENV).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
    folder = Path(tempfile.mkdtemp())
    lines = base_recording(folder / "base.jsonl")
    replay = [sys.executable, "-m", "agentdbg", "replay"]
    measure([*replay, str(folder / "base.jsonl"), "--save", str(folder / "warm.jsonl")])
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    for n in sizes:
        path = folder / f"actions-{n}.jsonl"
        with_actions(lines, n, path)
        out = folder / f"replay-{n}.jsonl"
        wall, rss, code = measure([*replay, str(path), "--save", str(out)])
        print(f"{n:>9,} actions  transcript {path.stat().st_size / 1e6:7.1f} MB  "
              f"replay {wall:7.2f} s  peak RSS {rss:7.1f} MB  exit {code}  "
              f"its transcript {out.stat().st_size / 1e6 if out.exists() else 0:.1f} MB  "
              f"(load average {os.getloadavg()[0]:.1f})")
        path.unlink()
        out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
