"""Replay: turns per second replaying a 1,000-turn transcript, and peak memory.

The transcript is read as a stream. Baseline: a `python -c` process that only reads and
json-parses the same file line by line. Peak RSS of each child is reported; three runs each,
as a range, with the load average (the machine may be shared). Beside the wall-clock time,
each child's CPU time (user + system) and the turns per CPU-second: on a loaded machine the
wall clock mostly measures the wait for a core, the CPU time much less so.

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed) after one
warm-up run, as an installed agentdbg runs: the warm-up writes the bytecode caches and the
context budget's compact vocabulary (``~/.cache/agentdbg``, render/vocab.py), which a user's
first ``--json`` builds once.

    python bench/replay_speed.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _util import machine

TURNS = 1000
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


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


def rss_of(cmd: list[str]) -> tuple[float, float, float]:
    """Wall-clock seconds, peak RSS (MB) and CPU seconds of ``cmd``."""
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            f"r = subprocess.run({cmd!r}, stdout=subprocess.DEVNULL)\n"
            "w = time.perf_counter() - t\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(w, u.ru_maxrss / 1024, r.returncode, u.ru_utime + u.ru_stime)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=ENV).stdout.split()
    if out[2] != "0":
        raise SystemExit(f"{cmd} exited {out[2]}")
    return float(out[0]), float(out[1]), float(out[3])


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    path = folder / "long.jsonl"
    record(path)
    mb = path.stat().st_size / 1e6
    replay = [sys.executable, "-m", "agentdbg", "replay", str(path), "--json", "--save"]
    rss_of([*replay, str(folder / "warm.jsonl")])          # bytecode and vocabulary caches
    load = os.getloadavg()
    base = [rss_of([sys.executable, "-c", f"import json\nfor line in open({str(path)!r}, "
                    "encoding='utf-8'): json.loads(line)"]) for _ in range(3)]
    ours = [rss_of([*replay, str(folder / f"replay{k}.jsonl")]) for k in range(3)]
    print(f"machine: {machine()}; load average {load[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")
    print(f"transcript: {TURNS} turns, {2 * TURNS} messages, {mb:.1f} MB")

    def span(values, fmt):
        return f"{fmt.format(min(values))}–{fmt.format(max(values))}"

    print(f"read + parse lines (baseline)  {span([w for w, _, _ in base], '{:.2f}')} s   "
          f"CPU {span([c for _, _, c in base], '{:.2f}')} s   "
          f"peak RSS {span([m for _, m, _ in base], '{:.1f}')} MB")
    print(f"agentdbg replay --json         {span([w for w, _, _ in ours], '{:.2f}')} s   "
          f"CPU {span([c for _, _, c in ours], '{:.2f}')} s   "
          f"peak RSS {span([m for _, m, _ in ours], '{:.1f}')} MB   "
          f"{span(sorted(TURNS / w for w, _, _ in ours), '{:.0f}')} turns/s   "
          f"{span(sorted(TURNS / c for _, _, c in ours), '{:.0f}')} turns/CPU-s   "
          f"{min(w for w, _, _ in ours) / min(w for w, _, _ in base):.1f}x the best baseline")

if __name__ == "__main__":
    main()
