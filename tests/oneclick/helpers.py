"""Running `agentdbg proxy -- CMD` and its neighbours as real processes, for the tests here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
QUESTION = "订单 ORD-2026-001 到哪里了?"
#: any request for somewhere other than 127.0.0.1 goes to a port where nothing listens
NO_NETWORK = {var: "http://127.0.0.1:9" for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                                   "http_proxy", "https_proxy", "all_proxy")}


def clean_env(**extra: str) -> dict:
    """The test's environment, with no key and no endpoint of any API family."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_"))}
    return {**env, **NO_NETWORK, "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1",
            **extra}


def agentdbg(*args: str, env: dict | None = None, timeout: float = 120,
             cwd: Path | None = None, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True,
                          env=env or clean_env(), timeout=timeout, cwd=cwd, stdin=stdin)


class Serve:
    """A real `agentdbg serve` process on a free port."""

    def __init__(self, log: Path, *args: str):
        self.fh = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "serve", "--port", "0",
                                      *args], stdout=self.fh, stderr=subprocess.STDOUT,
                                     env=clean_env())
        deadline = time.time() + 30
        while time.time() < deadline:
            found = re.search(r"at (http://\S+/v1)\n", log.read_text(encoding="utf-8"))
            if found:
                self.url = found.group(1)
                self.root = self.url[:-len("/v1")]
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"serve did not start: {log.read_text()}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.fh.close()


def summary_paths(stderr: str) -> dict[str, list[Path]]:
    """The paths the summary names: transcripts, the report, the log."""
    out: dict[str, list[Path]] = {"transcripts": [], "report": [], "log": []}
    for line in stderr.splitlines():
        # "  conversation 1: …", "  conversation 1 (main agent): …", "  └─ conversation 2 (…) ← …"
        m = re.match(r"\s+(?:[│ ]*└─ )?conversation \d+\b.*?\s(/\S+\.jsonl)$", line)
        if m:
            out["transcripts"].append(Path(m.group(1)))
        for key in ("report", "log"):
            m = re.match(rf"\s+{key}: (/\S+)$", line)
            if m:
                out[key].append(Path(m.group(1)))
    return out


def alive_with(marker: str) -> list[int]:
    """The processes whose environment holds ``AGENTDBG_TEST_MARK=marker``."""
    found = []
    needle = f"AGENTDBG_TEST_MARK={marker}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != b"Z":
            found.append(int(name))
    return found
