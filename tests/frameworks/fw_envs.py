"""One virtualenv per framework, created from its pinned requirements and cached.

Frameworks pin different ``openai`` majors (LlamaIndex still needs 2.x), so each gets its own
environment: ``requirements/<name>.txt`` installed with pip into
``$AGENTDBG_FRAMEWORK_VENVS/<name>-<key>`` (default ``~/.cache/agentdbg/framework-venvs``), where
``<key>`` hashes the requirements file and the interpreter, so a changed pin or a new Python
gets a new environment and an unchanged one is reused. A file lock makes concurrent sessions
wait for each other instead of building the same environment twice.

The apps run in these environments; agentdbg itself runs from the test interpreter.

    python tests/frameworks/fw_envs.py            # create (or reuse) them all, print the times
    python tests/frameworks/fw_envs.py --fresh    # rebuild them all: the cold times
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements"
READY = ".agentdbg-ready"


def cache_root() -> Path:
    configured = os.environ.get("AGENTDBG_FRAMEWORK_VENVS")
    root = Path(configured) if configured else Path.home() / ".cache" / "agentdbg" / "framework-venvs"
    return root.expanduser()


def names() -> list[str]:
    return sorted(p.stem for p in REQUIREMENTS.glob("*.txt"))


def key(name: str) -> str:
    digest = hashlib.sha256((REQUIREMENTS / f"{name}.txt").read_bytes())
    digest.update(f"{platform.python_implementation()}-{sys.version_info[:3]}-{sys.base_prefix}".encode())
    return digest.hexdigest()[:12]


@dataclass
class Env:
    name: str
    path: Path
    created: bool        # built by this call (else reused from the cache)
    seconds: float       # the time it took to build (then, or when it was cached)

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def ready(name: str) -> bool:
    """The environment for ``name`` is built and cached (``ensure`` would reuse it)."""
    return (cache_root() / f"{name}-{key(name)}" / READY).is_file()


def ensure(name: str, *, fresh: bool = False) -> Env:
    """The environment for ``name``: reused when ready, else built (under a lock)."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}-{key(name)}"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = path / READY
        if ready.is_file() and not fresh:
            return Env(name, path, False, json.loads(ready.read_text())["seconds"])
        shutil.rmtree(path, ignore_errors=True)
        start = time.perf_counter()
        run([sys.executable, "-m", "venv", str(path)], name)
        run([str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "-r", str(REQUIREMENTS / f"{name}.txt")], name)
        seconds = round(time.perf_counter() - start, 1)
        ready.write_text(json.dumps({"seconds": seconds, "requirements": f"{name}.txt"}))
        return Env(name, path, True, seconds)


def run(cmd: list[str], name: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"creating the {name} environment failed: {' '.join(cmd[:4])} …\n{tail}")


def main(argv: list[str]) -> int:
    fresh = "--fresh" in argv
    wanted = [a for a in argv if not a.startswith("--")] or names()
    total = 0.0
    for name in wanted:
        env = ensure(name, fresh=fresh)
        total += env.seconds if env.created else 0.0
        state = "created" if env.created else "cached"
        print(f"{name:14} {state:8} {env.seconds:6.1f} s  {env.path}", flush=True)
    print(f"{'total':14} {'created':8} {total:6.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
