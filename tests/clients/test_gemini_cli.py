"""Gemini CLI (npm @google/gemini-cli, pinned) in API-key mode runs a tool turn through
`agentdbg proxy` in front of `agentdbg serve --offline`: it posts
`/v1beta/models/…:streamGenerateContent?alt=sse` with its own tools and system prompt, and the
proxy judges every request with no false alarm, its key never written."""

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from hardening.proxy_helpers import Proxy, Serve

PACKAGE, VERSION = "@google/gemini-cli", "0.61.0"
KEY = "AIza-gemini-cli-test-0123456789"


def gemini_cli() -> Path:
    """The pinned Gemini CLI, installed once into the shared npm-clients cache."""
    root = Path(os.environ.get("AGENTDBG_NPM_CLIENTS") or
                Path.home() / ".cache" / "agentdbg" / "npm-clients")
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"{PACKAGE.replace('/', '+')}-{VERSION}"
    with open(root / "gemini.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        binary = folder / "node_modules" / ".bin" / "gemini"
        if not (folder / ".agentdbg-ready").is_file():
            if shutil.which("npm") is None:
                pytest.skip("npm is missing: Gemini CLI is installed with it")
            proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                                   str(folder), f"{PACKAGE}@{VERSION}"], capture_output=True,
                                  text=True, timeout=1200)
            if proc.returncode != 0:
                pytest.skip(f"npm could not install {PACKAGE}@{VERSION} (is the registry "
                            f"reachable?): {proc.stderr.strip().splitlines()[-1:]}")
            (folder / ".agentdbg-ready").write_text(VERSION)
        return binary


def test_gemini_cli_completes_a_tool_turn_through_the_proxy_with_no_false_alarm(tmp_path):
    binary = gemini_cli()
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    work.mkdir()
    (work / "notes.txt").write_text("the parcel left 杭州转运中心\n", encoding="utf-8")
    serve = Serve(tmp_path, "--offline")
    proxy = Proxy(serve.url, tmp_path)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE"))}
        env.update(HOME=str(home), GEMINI_API_KEY=KEY, NO_COLOR="1",
                   GOOGLE_GEMINI_BASE_URL=proxy.url.removesuffix("/v1"),
                   GEMINI_CLI_TRUST_WORKSPACE="true")
        # the offline model reads the user's own words, not the <session_context> block the CLI
        # puts before them: the question names the file its tool call needs
        run = subprocess.run([str(binary), "-p", 'Read the file "notes.txt" with your tools.', "--yolo"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=240)
    finally:
        printed = proxy.stop()
        serve.stop()
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Gemini API" in printed and "streamGenerateContent" not in run.stderr
    # a tool turn went through: a call answered in the request after it
    assert "✓ answers [1].parts[0]" in printed, printed[-3000:]
    assert "✗" not in printed and "! warning" not in printed, printed[-3000:]
    assert KEY not in printed + proxy.saved()
