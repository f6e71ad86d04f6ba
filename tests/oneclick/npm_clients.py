"""The coding agents the tests run, installed from npm at pinned versions and cached.

Each package goes into ``$AGENTDBG_NPM_CLIENTS/<name>-<version>`` (default
``~/.cache/agentdbg/npm-clients``) with ``npm install --prefix``, once: a file lock makes
concurrent sessions wait for each other, a marker says the install finished. What is being
prepared is said on the terminal (an install takes a while the first time).

    python tests/oneclick/npm_clients.py        # install (or reuse) them all
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),   # Claude Code
    "codex": ("@openai/codex", "0.171.0"),                # Codex CLI
}
READY = ".agentdbg-ready"


def cache_root() -> Path:
    configured = os.environ.get("AGENTDBG_NPM_CLIENTS")
    return Path(configured) if configured else Path.home() / ".cache" / "agentdbg" / "npm-clients"


def say(text: str) -> None:
    print(f"[npm clients] {text}", file=sys.__stderr__, flush=True)


def ensure(command: str) -> Path:
    """The folder holding ``node_modules/.bin/<command>``, installed when missing."""
    package, version = PINNED[command]
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"{package.replace('/', '+')}-{version}"
    with open(root / f"{command}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / READY).is_file():
            return folder / "node_modules" / ".bin"
        if shutil.which("npm") is None:
            raise RuntimeError("npm is missing: the coding-agent tests install their clients with it")
        say(f"installing {package}@{version} into {folder} (once; later runs reuse it)")
        shutil.rmtree(folder, ignore_errors=True)
        start = time.perf_counter()
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                               f"{package}@{version}"], capture_output=True, text=True, timeout=1200)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"npm install {package}@{version} failed:\n{tail}")
        seconds = round(time.perf_counter() - start, 1)
        (folder / READY).write_text(json.dumps({"package": package, "version": version,
                                                "seconds": seconds}))
        say(f"{package}@{version} installed in {seconds} s")
        return folder / "node_modules" / ".bin"


if __name__ == "__main__":
    for name in PINNED:
        print(name, ensure(name))
