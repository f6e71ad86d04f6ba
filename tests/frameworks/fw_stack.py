"""Real processes on 127.0.0.1: `agentdbg serve`, `agentdbg proxy` in front of it, and an app
run in its framework's environment with its base URL pointing at the proxy."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from fw_apps import App

KEY = "sk-frameworks-dummy-key-0123456789"
APP_TIMEOUT = 180


def agentdbg_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTDBG_"))}
    env.update({"AGENTDBG_HOME": str(home), "COLUMNS": "200", "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    return env


class Proc:
    """A background `agentdbg serve|proxy` whose first output line ends with its URL."""

    def __init__(self, args: list[str], log: Path, home: Path):
        self.args, self.log = args, log
        self.fh = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "agentdbg", *args], stdout=self.fh,
                                     stderr=subprocess.STDOUT, env=agentdbg_env(home))
        self.url = ""

    def wait_url(self) -> Proc:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = self.log.read_text(encoding="utf-8", errors="replace")
            first = text.split("\n", 1)[0]
            if "\n" in text and "http://" in first:
                self.url = first.split()[2] if "->" in first else first.split()[-1]
                return self
            if self.proc.poll() is not None:
                raise AssertionError(f"agentdbg {' '.join(self.args)} exited: {text}")
            time.sleep(0.05)
        raise AssertionError(f"agentdbg {' '.join(self.args)} printed no URL: {self.output()}")

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.fh.close()
        return self.output()


@dataclass
class Stack:
    """`agentdbg serve` (offline or scripted) and `agentdbg proxy --save DIR` in front of it."""

    folder: Path
    serve_args: tuple[str, ...]
    procs: list[Proc] = field(default_factory=list)

    def __post_init__(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        self.home = self.folder / "agentdbg-home"
        self.saved = self.folder / "saved"
        self.serve = Proc(["serve", *self.serve_args, "--port", "0"], self.folder / "serve.log",
                          self.home).wait_url()
        self.procs.append(self.serve)
        self.proxy = Proc(["proxy", "--upstream", self.serve.url, "--port", "0", "--save", str(self.saved)],
                          self.folder / "proxy.log", self.home).wait_url()
        self.procs.append(self.proxy)

    def stop(self) -> str:
        out = self.proxy.stop()  # first: it writes each conversation's stop event as it closes
        self.serve.stop()
        return out


def app_env(proxy_url: str, home: Path) -> dict:
    """The app's whole environment: its base URL and a dummy key, nothing inherited that could
    point it elsewhere, and the frameworks' own switches for working offline."""
    root = proxy_url[:-len("/v1")] if proxy_url.endswith("/v1") else proxy_url
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1", "NO_PROXY": "127.0.0.1,localhost",
        "OPENAI_BASE_URL": proxy_url, "OPENAI_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": root, "ANTHROPIC_API_KEY": KEY,
        "OPENAI_AGENTS_DISABLE_TRACING": "1",   # the Agents SDK would export traces to OpenAI
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm would fetch its model cost map
        "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
    }


@dataclass
class Run:
    app: App
    flags: tuple[str, ...]
    folder: Path
    returncode: int
    stdout: str
    stderr: str
    proxy_out: str
    transcripts: list[Path]

    def describe(self) -> str:
        tail = "\n".join(self.stderr.strip().splitlines()[-12:])
        return (f"{self.app.id} {' '.join(self.flags)} (exit {self.returncode}; logs in {self.folder})\n"
                f"stdout: {self.stdout.strip()[-600:]}\nstderr: …\n{tail}")

    def events(self) -> list[tuple[Path, dict]]:
        out = []
        for path in self.transcripts:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    out.append((path, json.loads(line)))
        return out

    def findings(self) -> list[dict]:
        """Every finding the proxy recorded, each with the transcript and request it belongs to."""
        out = []
        for path, event in self.events():
            if event.get("type") in ("request", "blocked"):
                for f in event.get("findings") or []:
                    out.append({**f, "transcript": path.name, "turn": event.get("turn")})
        return out

    def requests(self) -> int:
        return sum(1 for _, e in self.events() if e.get("type") == "request")

    def verdicts(self) -> list[str]:
        """The proxy's one-line verdict per request, as printed."""
        return [line.strip() for line in self.proxy_out.splitlines() if line.startswith(("✓ ", "✗ ", "! "))]


def app_command(app: App, python: Path | None, folder: Path) -> list[str]:
    """How ``app`` starts: with its environment's Python, or a Node app with ``node`` from
    ``folder``, where it is copied beside its pinned packages (ES modules resolve their imports
    from the script's own folder)."""
    if not app.npm:
        assert python is not None, f"{app.id}: no environment"
        return [str(python), str(app.path)]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from oneclick import npm_clients

    (folder / "node_modules").symlink_to(npm_clients.ensure(app.npm))
    script = folder / app.path.name
    script.write_bytes(app.path.read_bytes())
    return ["node", str(script)]


def run_app(app: App, python: Path | None, folder: Path, *flags: str, times: int = 1) -> Run:
    """Run ``app`` (``times`` times, one after the other) through a fresh proxy + serve."""
    command = app_command(app, python, folder)
    stack = Stack(folder, app.serve)
    home = folder / "app-home"
    home.mkdir(exist_ok=True)
    results = []
    try:
        for _ in range(times):
            try:
                proc = subprocess.run([*command, *app.args, *flags], capture_output=True,
                                      text=True, env=app_env(stack.proxy.url, home), cwd=folder,
                                      timeout=APP_TIMEOUT)
                results.append((proc.returncode, proc.stdout, proc.stderr))
            except subprocess.TimeoutExpired as exc:
                results.append((-1, str(exc.stdout or ""), f"timed out after {APP_TIMEOUT} s"))
    finally:
        proxy_out = stack.stop()
    failed = next((r for r in results if r[0] != 0), results[-1])
    transcripts = sorted(stack.saved.glob("*.jsonl")) if stack.saved.is_dir() else []
    return Run(app, (*app.args, *flags), folder, failed[0], "\n".join(r[1] for r in results),
               "\n".join(r[2] for r in results), proxy_out, transcripts)
