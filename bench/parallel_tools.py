"""Parallel tools: 8 independent read-only calls of 200 ms each with the default pool,
and 3 side-effecting calls of 100 ms each (which must stay sequential).

Target: the 8 read-only calls within 1.3x of 200 ms. Baseline: one 200 ms call.

    python bench/parallel_tools.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _util import machine

TOOLS = """
version: 1
tools:
  - name: read
    description: A 200 ms read. Use when benchmarking.
    parameters: {type: object, properties: {i: {type: integer}}}
    handler: {python: "bench_handlers:read"}
  - name: write
    description: A 100 ms write. Use when benchmarking.
    parameters: {type: object, properties: {i: {type: integer}}}
    side_effects: true
    handler: {python: "bench_handlers:write"}
"""
HANDLERS = """
import time
def read(i=0):
    time.sleep(0.2)
    return {"i": i}
def write(i=0):
    time.sleep(0.1)
    return {"i": i}
"""


def call(name: str, i: int) -> dict:
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": f'{{"i": {i}}}'}}


def main() -> None:
    from agentdbg.engine.executor import ToolExecutor
    from agentdbg.toolspec import load_tools

    folder = Path(tempfile.mkdtemp())
    (folder / "tools.yaml").write_text(TOOLS)
    (folder / "bench_handlers.py").write_text(HANDLERS)
    toolset = load_tools(folder / "tools.yaml")
    ex = ToolExecutor(toolset)
    ex.run([call("read", 0)], approved=lambda c: True)  # warm-up: imports, validators
    start = time.perf_counter()
    ex.run([call("read", 0)], approved=lambda c: True)
    one = time.perf_counter() - start
    start = time.perf_counter()
    outcomes = ex.run([call("read", i) for i in range(8)], approved=lambda c: True)
    eight = time.perf_counter() - start
    start = time.perf_counter()
    writes = ex.run([call("write", i) for i in range(3)], approved=lambda c: True)
    three = time.perf_counter() - start
    overlap = all(writes[k].ended <= writes[k + 1].started for k in range(2))
    print(f"machine: {machine()}")
    print(f"default pool: {toolset.parallel}")
    print(f"1 read-only call (200 ms)     {one * 1000:7.1f} ms  (baseline)")
    print(f"8 read-only calls (200 ms)    {eight * 1000:7.1f} ms  {eight / one:.2f}x  (target <= 1.3x)")
    print(f"3 side-effecting calls (100 ms) {three * 1000:5.1f} ms  sequential: {overlap}")
    assert all(o.ok for o in outcomes)
    sys.exit(0)


if __name__ == "__main__":
    main()
