"""Shared by the benchmarks: best-of-N wall time of a command, machine line."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time


def machine() -> str:
    return (f"{platform.machine()} {os.cpu_count()} cores, python {sys.version.split()[0]}, "
            f"{platform.system()} {platform.release()}")


def best(cmd: list[str], repeat: int = 7, ok=(0, 1), **kw) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
        times.append(time.perf_counter() - start)
        if proc.returncode not in ok:
            raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-400:]}")
    return min(times)
