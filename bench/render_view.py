"""Rendering: the messages view of a 1,000-message run at 120 columns, and step mode's
redraw of only what changed.

Baseline: the same messages printed by the same Rich console as one plain Text line
each (the cost of putting that much text on screen with no pairing, folding or checks).

    python bench/render_view.py
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

from _util import machine
from rich.console import Console
from rich.text import Text

sys.path.insert(0, str(Path(__file__).parent))
from check_scaling import history


def timed(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    from agentdbg.checker import check
    from agentdbg.render.view import render_messages

    messages = history(1000)
    console = Console(file=io.StringIO(), width=120, no_color=True)

    def baseline():
        for m in messages:
            console.print(Text(json.dumps(m, ensure_ascii=False)))

    def full_view():
        console.print(render_messages(messages, findings=check(messages)))

    def redraw():  # step mode after one phase: the last 2 messages plus a folded summary
        console.print(Text("  (messages 0–997 unchanged; 'messages' shows all)"))
        console.print(render_messages(messages, findings=check(messages), start=len(messages) - 2))

    base, full, step = timed(baseline), timed(full_view), timed(redraw)
    print(f"machine: {machine()}")
    print(f"plain Text per message (baseline)  {base * 1000:8.1f} ms")
    print(f"full view, 1,000 messages, 120 col {full * 1000:8.1f} ms  {full / base:.2f}x")
    print(f"step-mode redraw (2 new messages)  {step * 1000:8.1f} ms  {step / full:.3f}x of the full view")


if __name__ == "__main__":
    main()
