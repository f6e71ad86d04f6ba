"""`report` and `diff` on a 1,000-turn transcript vs `agentdbg replay --json` on it; peak memory.

Each figure is the best of 3 `agentdbg` child processes (wall time from start to exit, peak RSS).
`report` writes the HTML page (timeline, findings, context budget with the real tokenizer);
`diff` compares the transcript with its own replay (every turn aligned and compared).
Target: both under 2x the replay's time, with bounded memory.

    python bench/report_diff.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _util import machine
from replay_speed import TURNS, record, rss_of


def best(cmd: list[str]) -> tuple[float, float]:
    runs = [rss_of(cmd) for _ in range(3)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    path = folder / "long.jsonl"
    record(path)
    replayed = folder / "replay.jsonl"
    mb = path.stat().st_size / 1e6
    replay = best([sys.executable, "-m", "agentdbg", "replay", str(path), "--json",
                   "--save", str(replayed)])
    report = best([sys.executable, "-m", "agentdbg", "report", str(path),
                   "-o", str(folder / "long.html")])
    diff = best([sys.executable, "-m", "agentdbg", "diff", str(path), str(replayed)])
    html_mb = (folder / "long.html").stat().st_size / 1e6
    print(f"machine: {machine()}")
    print(f"transcript: {TURNS} turns, {2 * TURNS} messages, {mb:.1f} MB; report page {html_mb:.1f} MB")
    print(f"agentdbg replay --json (baseline)  {replay[0]:6.2f} s   peak RSS {replay[1]:6.1f} MB")
    for name, (wall, rss) in (("report", report), ("diff (vs its replay)", diff)):
        print(f"{name:<34} {wall:6.2f} s   peak RSS {rss:6.1f} MB   {wall / replay[0]:.2f}x replay"
              f"{'' if wall <= 2 * replay[0] else '   OVER the 2x target'}")


if __name__ == "__main__":
    main()
