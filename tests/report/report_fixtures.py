"""Transcripts made for real: `agentdbg run --save`, a step-mode session driven through the
Python API, `agentdbg replay --from N` forks, and the proxy in front of
`agentdbg serve --offline` with examples/agent_app.py. (conftest.py makes them once.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "examples" / "agent_app.py"
ORDER_Q = "订单 ORD-2026-001 到哪里了?"
WEATHER_Q = "北京和上海今天哪个更热?"
SECRET = "sk-reporttest-SECRET-abcdefghijklmnop"
SCRIPT_MARK = "PWNED-BY-TOOL-RESULT"
LONG_TAIL = "END-OF-THE-LONG-LOG"

EVIL_TOOLS = """
version: 1
tools:
  - name: read_page
    description: 读取网页 PG-xxx 的内容。当用户给出页面编号时使用。Read a page by its id.
    parameters:
      type: object
      properties:
        page_id: {type: string, pattern: "^PG-\\\\d{3}$", description: 页面编号}
      required: [page_id]
    handler: {python: "evil:read_page"}
  - name: read_log
    description: 读取日志 LOG-xxx。当用户给出日志编号时使用。Read a log by its id.
    parameters:
      type: object
      properties:
        log_id: {type: string, pattern: "^LOG-\\\\d{3}$", description: 日志编号}
      required: [log_id]
    handler: {python: "evil:read_log"}
"""

EVIL_PY = f'''
def read_page(page_id):
    return {{"page_id": page_id,
             "html": "<script>document.title='{SCRIPT_MARK}';"
                     "fetch('http://127.0.0.1:9/beacon')</script>"
                     "<img src=x onerror=\\"document.title='{SCRIPT_MARK}'\\">"
                     "<a href=\\"javascript:alert(1)\\">click</a> </pre></details>"}}


def read_log(log_id):
    lines = [f"{{i:05d}} worker ok, queue depth {{i % 7}}" for i in range(100)]
    return {{"log_id": log_id, "text": "\\n".join(lines) + "\\n{LONG_TAIL}"}}
'''


def agentdbg(*args, env=None, cwd=None, timeout=120, check=True):
    proc = subprocess.run([sys.executable, "-m", "agentdbg", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=timeout)
    if check and proc.returncode not in (0,):
        raise AssertionError(f"agentdbg {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def step_session(path: Path) -> None:
    """Step mode through the Python API: the lesson plan's drop, a rewind, an injected
    fault and an edit, each recorded as the debugger records them."""
    from agentdbg.checker import check_model_request
    from agentdbg.engine.faults import Fault
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import load_tools
    from agentdbg.transcript import start_transcript

    tools = load_tools(ROOT / "tools.yaml")
    session = Session.for_question(OfflineModel(), tools, ORDER_Q,
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=check_model_request)
    writer = start_transcript(session, path, model="offline", provider="offline", base_url=None,
                              question=ORDER_Q)
    try:
        session.step()                     # the model asks for query_order
        session.step()                     # the app runs it: [2] tool
        session.drop(1)                    # drop the assistant message: [1] is now an orphan
        session.step()                     # the pre-send check blocks the request
        session.rewind(0)                  # back to the question, live again
        session.step()                     # query_order again
        session.step()
        session.edit(2, {"role": "tool", "tool_call_id": session.messages[2]["tool_call_id"],
                         "content": '{"status": "shipped", "tracking_no": "SF123456", "by": "you"}'})
        session.fail("query_logistics", Fault("timeout"))
        while not session.done:            # the fault, the retry, the answer
            session.step()
    finally:
        writer.close()


class Proc:
    """A background `agentdbg ...` server whose first line ends with its URL."""

    def __init__(self, args, log: Path, env):
        self.log = log
        self.fh = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "agentdbg", *args], stdout=self.fh,
                                     stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 30
        while time.time() < deadline:
            text = log.read_text(encoding="utf-8")
            first = text.split("\n", 1)[0]
            if "\n" in text and "http://" in first:
                self.url = first.split()[-1] if "->" not in first else first.split()[2]
                return
            if self.proc.poll() is not None:
                raise AssertionError(text)
            time.sleep(0.05)
        raise AssertionError(f"no URL from {args}: {log.read_text()}")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.fh.close()
        return self.log.read_text(encoding="utf-8")


def proxied(folder: Path, env: dict) -> dict[str, Path]:
    """examples/agent_app.py through `agentdbg proxy` in front of `agentdbg serve --offline`:
    a correct loop, and one that forgets the assistant message."""
    out = {}
    for name, flags in (("proxy", []), ("proxy_forget", ["--forget-assistant"])):
        saved = folder / f"saved-{name}"
        serve = Proc(["serve", "--offline", "--port", "0", *(["--lenient"] if flags else [])], folder / f"{name}-serve.log", env)
        proxy = Proc(["proxy", "--upstream", serve.url, "--port", "0", "--save", str(saved)],
                     folder / f"{name}-proxy.log", env)
        try:
            app_env = {**env, "OPENAI_BASE_URL": proxy.url, "OPENAI_API_KEY": SECRET}
            subprocess.run([sys.executable, str(APP), ORDER_Q, *flags], capture_output=True,
                           text=True, env=app_env, timeout=60)
        finally:
            proxy.stop()
            serve.stop()
        (path,) = sorted(saved.glob("*.jsonl"))
        out[name] = path
    return out


def make_all(folder: Path) -> dict[str, Path]:
    """Real transcripts, keyed by what made them."""
    env = {**os.environ, "AGENTDBG_HOME": str(folder / "home"), "NO_COLOR": "1", "COLUMNS": "120"}
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTDBG_MODEL", "AGENTDBG_TOOLS"):
        env.pop(var, None)
    out: dict[str, Path] = {}
    out["run"] = folder / "order.jsonl"
    agentdbg("run", ORDER_Q, "--save", out["run"], env=env, cwd=folder)
    out["parallel"] = folder / "weather.jsonl"
    agentdbg("run", WEATHER_Q, "--save", out["parallel"], env=env, cwd=folder)
    out["limit"] = folder / "limit.jsonl"
    proc = agentdbg("run", ORDER_Q, "--max-turns", "1", "--save", out["limit"], env=env, cwd=folder,
                    check=False)
    assert proc.returncode == 3, proc.stderr
    out["fork"] = folder / "fork.jsonl"
    agentdbg("replay", out["run"], "--from", "2", "--tools", ROOT / "tools.yaml", "--save", out["fork"], env=env, cwd=folder)
    out["replay"] = folder / "replayed.jsonl"
    agentdbg("replay", out["run"], "--save", out["replay"], env=env, cwd=folder)
    evil = folder / "evil"
    evil.mkdir()
    (evil / "tools.yaml").write_text(textwrap.dedent(EVIL_TOOLS), encoding="utf-8")
    (evil / "evil.py").write_text(EVIL_PY, encoding="utf-8")
    out["evil"] = folder / "evil.jsonl"
    agentdbg("run", "看看 PG-001 和 LOG-001", "--tools", evil / "tools.yaml", "--save", out["evil"],
             env=env, cwd=evil)
    out["step"] = folder / "step.jsonl"
    step_session(out["step"])
    out.update(proxied(folder, env))
    return out
