"""Import memory: `agentdbg import` on Claude Code session files of growing size.

A session file is generated in Claude Code's shape (user and assistant entries chained by
parentUuid, each assistant reply a Bash tool_use, each result OUTPUT bytes of shell output,
a compaction every TURNS turns, as Claude Code compacts a conversation before it outgrows the
model's context). Each size is imported by its own `python -m agentdbg import` process; its peak
resident memory (ru_maxrss) and wall time are printed. Memory should follow the largest
conversation, not the file: the file is streamed, a compacted conversation is let go.

    python bench/import_memory.py                 # 25, 50, 100, 200 MB
    python bench/import_memory.py 1000            # one 1 GB file (needs ~3 GB of /tmp)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "traces"))

from _util import machine
from big_session import OUTPUT, SESSION, TURNS, generate


def measure(source: Path, out: Path) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, the import's first line) of one import process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "import", str(source), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout = proc.stdout.read() if proc.stdout else b""
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"import failed ({proc.returncode}): {stderr.decode()[-600:]}")
    first = (stdout.decode().splitlines() or [""])[0]
    return usage.ru_maxrss / 1024, seconds, first


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [25, 50, 100, 200]
    print(machine())
    print(f"Claude Code session: Bash result {OUTPUT} B per turn, a compaction every {TURNS} turns")
    print(f"{'file':>9} {'lines':>9} {'peak RSS':>10} {'time':>8}  import said")
    baseline = subprocess.run([sys.executable, "-c", "import resource, agentdbg.cli; "
                               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                              capture_output=True, text=True, check=True)
    print(f"{'(start)':>9} {'':>9} {int(baseline.stdout) / 1024:8.0f} MB {'':>8}  python + agentdbg.cli imported")
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="import-memory-") as tmp:
            source = Path(tmp) / f"{SESSION}.jsonl"
            lines = generate(source, size)
            rss, seconds, said = measure(source, Path(tmp) / "out")
            mb = source.stat().st_size / (1 << 20)
            print(f"{mb:7.0f} MB {lines:9d} {rss:8.0f} MB {seconds:7.1f}s  {said[-60:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
