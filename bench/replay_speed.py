"""Replay: turns per second replaying a 1,000-turn transcript, and peak memory.

The transcript is read as a stream. Baseline: a `python -c` process that only reads and
json-parses the same file line by line. Peak RSS of each child is reported.

    python bench/replay_speed.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import machine

TURNS = 1000


def record(path: Path) -> None:
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.scripted import ScriptedModel, parse_turns
    from agentdbg.toolspec import load_tools
    from agentdbg.transcript import start_transcript

    cities = ["北京", "上海", "杭州", "广州", "成都"]
    turns = [{"tool_calls": [{"name": "get_weather", "id": f"call_{i}",
                              "arguments": {"city": cities[i % 5]}}]} for i in range(TURNS - 1)]
    turns.append({"content": "done"})
    tools = load_tools(Path(__file__).resolve().parent.parent / "tools.yaml")
    s = Session.for_question(ScriptedModel(parse_turns(turns, "b"), "b"), tools, "q",
                             RunConfig(max_turns=TURNS, max_tool_calls=TURNS, repeat_limit=TURNS),
                             precheck=check_model_request)
    writer = start_transcript(s, path, model="m", provider="scripted", base_url=None, question="q")
    list(s.run())
    writer.close()
    assert s.stop_reason.value == "completed", s.stop_detail


def child(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {err.decode()[-400:]}")
    return wall, 0.0


def rss_of(cmd: list[str]) -> tuple[float, float]:
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            f"r = subprocess.run({cmd!r}, stdout=subprocess.DEVNULL)\n"
            "w = time.perf_counter() - t\n"
            "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, r.returncode)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    if out[2] != "0":
        raise SystemExit(f"{cmd} exited {out[2]}")
    return float(out[0]), float(out[1])


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    path = folder / "long.jsonl"
    record(path)
    mb = path.stat().st_size / 1e6
    base = min(rss_of([sys.executable, "-c",
                       f"import json\nfor line in open({str(path)!r}, encoding='utf-8'): json.loads(line)"])
               for _ in range(3))
    ours = min(rss_of([sys.executable, "-m", "agentdbg", "replay", str(path), "--json",
                       "--save", str(folder / "replay.jsonl")]) for _ in range(3))
    print(f"machine: {machine()}")
    print(f"transcript: {TURNS} turns, {2 * TURNS} messages, {mb:.1f} MB")
    print(f"read + parse lines (baseline)  {base[0]:6.2f} s   peak RSS {base[1]:6.1f} MB")
    print(f"agentdbg replay --json         {ours[0]:6.2f} s   peak RSS {ours[1]:6.1f} MB   "
          f"{TURNS / ours[0]:7.0f} turns/s   {ours[0] / base[0]:.1f}x")


if __name__ == "__main__":
    main()
