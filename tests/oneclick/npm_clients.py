"""The npm packages the tests run (the coding agents, the SDKs for Node), installed at pinned
versions and cached.

Each set goes into ``$AGENTDBG_NPM_CLIENTS/<package>@<version>…`` (default
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
    "claude": [("@anthropic-ai/claude-code", "2.1.332")],   # Claude Code
    "codex": [("@openai/codex", "0.171.0")],                # Codex CLI
    "gemini": [("@google/gemini-cli", "0.61.0")],           # Gemini CLI (as tests/clients pins it)
    # the SDKs for Node, as an app would use them (both ask for Node 22; they run on 20)
    "node-sdks": [("openai", "7.59.0"), ("@anthropic-ai/sdk", "1.15.0")],
    # the OpenAI Agents SDK for JavaScript and the zod its docs install with it (tests/frameworks)
    "openai-agents-js": [("@openai/agents", "0.20.0"), ("zod", "4.6.7")],
}
READY = ".agentdbg-ready"


def cache_root() -> Path:
    configured = os.environ.get("AGENTDBG_NPM_CLIENTS")
    return Path(configured) if configured else Path.home() / ".cache" / "agentdbg" / "npm-clients"


def say(text: str) -> None:
    print(f"[npm clients] {text}", file=sys.__stderr__, flush=True)


def folder_of(name: str) -> Path:
    """Where ``PINNED[name]`` is installed."""
    return cache_root() / "-".join(f"{p}@{v}".replace("/", "+") for p, v in PINNED[name])


def ready(name: str) -> bool:
    """``PINNED[name]`` is installed and cached (``ensure`` would reuse it)."""
    return (folder_of(name) / READY).is_file()


def ensure(name: str) -> Path:
    """The ``node_modules`` folder holding ``PINNED[name]``, installed when missing."""
    specs = [f"{package}@{version}" for package, version in PINNED[name]]
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    folder = folder_of(name)
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / READY).is_file():
            return folder / "node_modules"
        if shutil.which("npm") is None:
            raise RuntimeError("npm is missing: these tests install their clients with it")
        say(f"installing {' '.join(specs)} into {folder} (once; later runs reuse it)")
        shutil.rmtree(folder, ignore_errors=True)
        start = time.perf_counter()
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                               *specs], capture_output=True, text=True, timeout=1200)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"npm install {' '.join(specs)} failed:\n{tail}")
        seconds = round(time.perf_counter() - start, 1)
        (folder / READY).write_text(json.dumps({"packages": specs, "seconds": seconds}))
        say(f"{' '.join(specs)} installed in {seconds} s")
        return folder / "node_modules"


if __name__ == "__main__":
    for name in PINNED:
        print(name, ensure(name))
