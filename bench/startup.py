"""Start-up: `agentdbg --help` and `agentdbg check small.json` vs `python -c "import typer, rich"`.

Target: --help within 1.2x of the import baseline. Best of 7 wall times. `--help` in Chinese
(``AGENTDBG_LANG=zh``) is timed too: it reads the catalog and folds Chinese lines.

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed, one warm-up
run first), as an installed package runs: typer and rich were compiled when pip installed
them, and an editable checkout left to compile its modules on every start measures the
compiler, not agentdbg (about +100 ms here).

    python bench/startup.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _util import best, machine

PY = sys.executable
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def imported(args: list[str]) -> list[str]:
    code = ("import sys\nfrom agentdbg.cli import app\ntry:\n    app(%r)\nexcept SystemExit:\n    pass\n"
            "print('LOADED:' + ','.join(m for m in ('openai', 'jsonschema', 'prompt_toolkit', 'httpx2', "
            "'httpx', 'pydantic', 'yaml') if m in sys.modules))" % (args,))
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=ENV).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("LOADED:"))
    return [m for m in line[len("LOADED:"):].split(",") if m]


def main() -> None:
    small = Path(tempfile.mkdtemp()) / "small.json"
    small.write_text(json.dumps([{"role": "user", "content": "北京和上海今天哪个更热?"}]))
    for warm in (["--help"], ["check", str(small), "--json"]):   # writes the bytecode caches
        subprocess.run([PY, "-m", "agentdbg", *warm], capture_output=True, env=ENV)
    base = best([PY, "-c", "import typer, rich"], env=ENV)
    bare = best([PY, "-c", "pass"], env=ENV)
    helptime = best([PY, "-m", "agentdbg", "--help"], env=ENV)
    helpzh = best([PY, "-m", "agentdbg", "run", "--help"], env=ENV | {"AGENTDBG_LANG": "zh"})
    helpen = best([PY, "-m", "agentdbg", "run", "--help"], env=ENV)
    check = best([PY, "-m", "agentdbg", "check", str(small), "--json"], env=ENV)
    print(f"machine: {machine()}")
    print(f"python -c pass                 {bare * 1000:7.1f} ms")
    print(f"python -c 'import typer, rich' {base * 1000:7.1f} ms  (baseline)")
    print(f"agentdbg --help                {helptime * 1000:7.1f} ms  {helptime / base:.2f}x  (target <= 1.2x)")
    print(f"agentdbg run --help            {helpen * 1000:7.1f} ms  {helpen / base:.2f}x")
    print(f"agentdbg run --help (zh)       {helpzh * 1000:7.1f} ms  {helpzh / base:.2f}x  "
          "(AGENTDBG_LANG=zh)")
    print(f"agentdbg check small.json      {check * 1000:7.1f} ms  {check / base:.2f}x")
    heavy = ", ".join(imported(["--help"])) or "none of openai, jsonschema, prompt_toolkit, httpx, pydantic, yaml"
    print(f"heavy modules loaded by --help: {heavy}")


if __name__ == "__main__":
    main()
