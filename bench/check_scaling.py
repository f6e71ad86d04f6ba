"""How `agentdbg check --json` scales: 1k, 10k, 100k and 1M messages.

Each size is a valid multi-round history (parallel calls, Chinese text, a large
tool result every 50 rounds). Both the whole `agentdbg check --json` process and
a `python -c` process that only json.loads the same file are timed (best of
REPEAT), so the ratio is comparable across machines; the CPU columns (user + system time)
hold steadier on a machine other work is loading.

    python bench/check_scaling.py            # all sizes
    python bench/check_scaling.py 1000 10000 # chosen sizes
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

SIZES = [1_000, 10_000, 100_000, 1_000_000]
REPEAT = 3
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "查询指定城市的实时天气。当用户询问天气时使用。",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]


def history(n: int) -> list[dict]:
    msgs: list[dict] = []
    r = 0
    while len(msgs) < n:
        a, b = f"call_{r}_a", f"call_{r}_b"
        big = "杭州转运中心已发出，" * 400 if r % 50 == 0 else "小雨"
        msgs += [
            {"role": "user", "content": f"北京和上海今天哪个更热？第 {r} 问"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": a, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"北京"}'}},
                {"id": b, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"上海"}'}}]},
            {"role": "tool", "tool_call_id": b, "content": json.dumps({"temperature": 29, "condition": big}, ensure_ascii=False)},
            {"role": "tool", "tool_call_id": a, "content": json.dumps({"temperature": 24}, ensure_ascii=False)},
            {"role": "assistant", "content": "上海更热（29°C），北京 24°C。"},
        ]
        r += 1
    return msgs[:n - (n % 5)] if n % 5 else msgs[:n]


def best(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of ``cmd``, each the best of REPEAT runs.
    On a loaded machine the CPU time is the steadier figure (waiting for a core is not in it)."""
    times, cpus = [], []
    for _ in range(REPEAT):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()[-500:]}")
    return min(times), min(cpus)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or SIZES
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; best of {REPEAT}")
    print(f"{'messages':>10} {'MB':>7} {'json.load s':>12} {'check s':>9} {'ratio':>6} "
          f"{'msgs/s':>10} {'growth':>7} {'cpu ratio':>10} {'cpu growth':>11}")
    prev = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"h{n}.json")
            with open(path, "w", encoding="utf-8") as fh:
                json.dump({"messages": history(n), "tools": TOOLS}, fh, ensure_ascii=False)
            mb = os.path.getsize(path) / 1e6
            base, base_cpu = best([sys.executable, "-c",
                                   f"import json; json.load(open({path!r}, encoding='utf-8'))"])
            ours, cpu = best([sys.executable, "-m", "agentdbg", "check", path, "--json"])
            growth = f"{ours / prev[1]:.1f}x/{n / prev[0]:.0f}x" if prev else "-"
            cpu_growth = f"{cpu / prev[2]:.1f}x/{n / prev[0]:.0f}x" if prev else "-"
            print(f"{n:>10} {mb:>7.1f} {base:>12.3f} {ours:>9.3f} {ours / base:>6.2f} "
                  f"{n / ours:>10.0f} {growth:>7} {cpu / base_cpu:>10.2f} {cpu_growth:>11}")
            prev = (n, ours, cpu)
            os.unlink(path)


if __name__ == "__main__":
    main()
