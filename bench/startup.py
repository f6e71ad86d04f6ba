"""Start-up: `agentdbg --help` and `agentdbg check small.json` vs `python -c "import typer, rich"`.

Target: --help within 1.2x of the import baseline. `--help` in Chinese (``AGENTDBG_LANG=zh``)
is timed too: it reads the catalog (after the warm-up run, from its copy in the user's cache
folder) and folds Chinese lines.

Each round runs every command once, in turn, so a burst of load falls on all of them alike;
the figures are the best and the median over the rounds of the wall time and of the child's
CPU time (user + system, from ``getrusage(RUSAGE_CHILDREN)``: waiting for a core is not in
it, so it stays readable on a loaded machine where the wall time is not); the last column
is the median of each round's own ratio to the baseline's run of the same round.

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed, one warm-up
run first), as an installed package runs: typer and rich were compiled when pip installed
them, and an editable checkout left to compile its modules on every start measures the
compiler, not agentdbg (about +100 ms here).

    python bench/startup.py [--rounds N] [--tree DIR ...]

``--tree DIR`` (repeatable) runs agentdbg from the source tree DIR (put first on
``PYTHONPATH``) instead of the installed one: two trees alternate round by round (e.g. a
copy of ``main`` and a branch: ``git archive main | tar -x -C /tmp/main``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import machine

PY = sys.executable
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd="/")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-400:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def imported(args: list[str], env: dict[str, str]) -> list[str]:
    code = ("import sys\nfrom agentdbg.cli import built_for\ntry:\n"   # main() less its end
            "    built_for(%r)(prog_name='agentdbg')\nexcept SystemExit:\n    pass\n"
            "print('LOADED:' + ','.join(m for m in ('openai', 'anthropic', 'mcp', 'jsonschema', "
            "'prompt_toolkit', 'httpx', 'pydantic', 'yaml') if m in sys.modules))" % (args,))
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, cwd="/").stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("LOADED:"))
    return [m for m in line[len("LOADED:"):].split(",") if m]


def tree_env(tree: str | None) -> dict[str, str]:
    if tree is None:
        return ENV
    path = os.pathsep.join([str(Path(tree).resolve())] + ([ENV["PYTHONPATH"]] if ENV.get("PYTHONPATH") else []))
    return ENV | {"PYTHONPATH": path}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--tree", action="append", default=[])
    opts = ap.parse_args()
    small = Path(tempfile.mkdtemp()) / "small.json"
    small.write_text(json.dumps([{"role": "user", "content": "北京和上海今天哪个更热?"}]))
    trees: list[str | None] = opts.tree or [None]
    rows: list[tuple[str, list[str], dict[str, str]]] = [
        ("python -c pass", [PY, "-c", "pass"], ENV),
        ("python -c 'import typer, rich'", [PY, "-c", "import typer, rich"], ENV)]
    for tree in trees:
        env = tree_env(tree)
        tag = f" [{tree}]" if tree else ""
        for warm in (["--help"], ["run", "--help"], ["check", str(small), "--json"]):   # bytecode caches
            subprocess.run([PY, "-m", "agentdbg", *warm], capture_output=True, env=env, cwd="/")
        subprocess.run([PY, "-m", "agentdbg", "run", "--help"], capture_output=True,
                       env=env | {"AGENTDBG_LANG": "zh"}, cwd="/")
        rows += [(f"agentdbg --help{tag}", [PY, "-m", "agentdbg", "--help"], env),
                 (f"agentdbg run --help{tag}", [PY, "-m", "agentdbg", "run", "--help"], env),
                 (f"agentdbg run --help (zh){tag}", [PY, "-m", "agentdbg", "run", "--help"],
                  env | {"AGENTDBG_LANG": "zh"}),
                 (f"agentdbg check small.json{tag}", [PY, "-m", "agentdbg", "check", str(small), "--json"], env)]
    walls: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    for i in range(opts.rounds):
        for name, cmd, env in (rows if i % 2 == 0 else rows[:2] + rows[2:][::-1]):
            wall, cpu = timed(cmd, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    base = "python -c 'import typer, rich'"
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}; {opts.rounds} rounds")
    width = max(len(name) for name, _, _ in rows)
    print(f"{'':{width}}   wall ms best / median (ratio)      CPU ms best / median (ratio)"
          "      per-round CPU ratio, median")
    for name, _, _ in rows:
        w, c = walls[name], cpus[name]
        wb, wm, cb, cm = min(w), statistics.median(w), min(c), statistics.median(c)
        ratios = ("" if name in (base, "python -c pass") else
                  f"  {wb / min(walls[base]):.2f}x / {wm / statistics.median(walls[base]):.2f}x")
        cratios = ("" if name in (base, "python -c pass") else
                   f"  {cb / min(cpus[base]):.2f}x / {cm / statistics.median(cpus[base]):.2f}x")
        # each round's own ratio: a burst of load that slows a round slows its baseline too
        paired = ("" if name in (base, "python -c pass") else
                  f"{statistics.median(x / y for x, y in zip(c, cpus[base])):.2f}x")
        print(f"{name:{width}}  {wb * 1000:6.1f} / {wm * 1000:6.1f}{ratios:18}  "
              f"{cb * 1000:6.1f} / {cm * 1000:6.1f}{cratios:18}  {paired}")
    print("target: agentdbg --help <= 1.2x of the baseline")
    for tree in trees:
        heavy = ", ".join(imported(["--help"], tree_env(tree))) or \
            "none of openai, anthropic, mcp, jsonschema, prompt_toolkit, httpx, pydantic, yaml"
        print(f"heavy modules loaded by --help{f' [{tree}]' if tree else ''}: {heavy}")


if __name__ == "__main__":
    main()
