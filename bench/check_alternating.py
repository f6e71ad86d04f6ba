"""`check --json` of two source trees, alternating, against a `json.load` process (CPU time).

On a machine other work loads, wall-clock figures move by more than a change buys; the CPU
time of each process (user + system), taken in alternating runs of the two trees and divided
by the mean of the `json.load` runs just before and after, holds steadier.

    git archive main | tar -x -C /tmp/main-src
    python bench/check_alternating.py /tmp/main-src . FILE [PAIRS]

FILE: e.g. the 100k history `bench/check_scaling.py` writes (`history(100_000)` with its tools).
Bytecode is cached (`PYTHONDONTWRITEBYTECODE` unset; run `python -m compileall -q` on both trees
first), and the order of the two trees alternates from pair to pair.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys


def cpu(cmd: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd="/")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {run.stderr.decode()[-500:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    first, second, path = (os.path.abspath(a) for a in sys.argv[1:4])
    pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    trees = {first: dict(env, PYTHONPATH=first), second: dict(env, PYTHONPATH=second)}
    base = [sys.executable, "-c", f"import json; json.load(open({path!r}, encoding='utf-8'))"]
    check = [sys.executable, "-m", "agentdbg", "check", path, "--json"]
    ratios: dict[str, list[float]] = {first: [], second: []}
    for n in range(pairs):
        before = cpu(base, env)
        order = [first, second] if n % 2 == 0 else [second, first]
        took = {tree: cpu(check, trees[tree]) for tree in order}
        baseline = (before + cpu(base, env)) / 2
        for tree in order:
            ratios[tree].append(took[tree] / baseline)
        print(f"pair {n}: json.load {baseline:.3f} s  " + "  ".join(
            f"{os.path.basename(t) or t} {took[t]:.3f} s ({took[t] / baseline:.2f}x)" for t in (first, second)),
            flush=True)
    print("median CPU ratio: " + "  ".join(f"{t} {statistics.median(r):.2f}x" for t, r in ratios.items())
          + f"  (1-minute load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
