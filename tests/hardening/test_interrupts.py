"""Ctrl-C and SIGTERM during a model request and during (parallel) tools; a full disk."""

import io
import os
import signal
import subprocess
import sys
import time

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agentdbg.transcript import load_transcript

SLOW_TOOLS = """
version: 1
tools:
  - name: slow_a
    description: Slow read. Use when asked to wait.
    timeout: 60
    handler: {command: [python, -c, "import time; time.sleep(60)"]}
  - name: slow_b
    description: Another slow read. Use when asked to wait.
    timeout: 60
    handler: {command: [python, -c, "import time; time.sleep(60)"]}
"""


def start(tmp_path, *args):
    (tmp_path / "tools.yaml").write_text(SLOW_TOOLS)
    save = tmp_path / "t.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "run", *args, "--tools", "tools.yaml",
                             "--save", str(save)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, save


def wait_for(path, text, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and text in path.read_text(encoding="utf-8"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text} never appeared in {path}")


@pytest.mark.parametrize("sig,code,detail", [
    (signal.SIGINT, 130, "cancelled by the user (Ctrl-C)"),
    (signal.SIGTERM, 130, "terminated (SIGTERM)"),
])
def test_signal_during_parallel_tools(tmp_path, sig, code, detail):
    proc, save = start(tmp_path, "please wait: slow_a and slow_b")
    wait_for(save, '"type": "response"')
    time.sleep(0.3)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err.decode()
    assert b"Traceback" not in err
    t = load_transcript(save)
    assert t.stop.reason == "cancelled" and t.stop.detail == detail
    assert len(t.events[1].message["tool_calls"]) == 2  # both calls were in flight


def test_ctrl_c_during_a_model_request(tmp_path):
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.testing.server import ModelServer

    server = ModelServer(OfflineModel(), intercept=lambda p, b: time.sleep(30)).start()
    try:
        proc, save = start(tmp_path, "q", "--model", "m", "--base-url", server.base_url)
        wait_for(save, '"type": "request"')
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, _err = proc.communicate(timeout=20)
    finally:
        server.stop()
    assert proc.returncode == 130 and b"stop: cancelled" in out
    assert load_transcript(save).stop.reason == "cancelled"


def test_full_disk_in_batch_keeps_the_run(tmp_path):
    r = subprocess.run([sys.executable, "-m", "agentdbg", "run", "订单 ORD-2026-001 到哪里了?",
                        "--save", "/dev/full"], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 0  # the run itself completed
    assert "could not write the transcript /dev/full" in r.stderr
    assert "No space left on device" in r.stderr and "kept in memory and saved to" in r.stderr
    rescued = list(tmp_path.glob("agentdbg-rescue-*.json"))
    assert len(rescued) == 1 and "杭州转运中心已发出" in rescued[0].read_text(encoding="utf-8")


def test_full_disk_in_step_mode_offers_save_elsewhere(tmp_path, sample_tools):
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.repl.debugger import Debugger
    from agentdbg.transcript import start_transcript

    s = Session.for_question(OfflineModel(), sample_tools, "订单 ORD-2026-001 到哪里了?",
                             RunConfig(approve="ask", stop_on_invalid=False), precheck=check_model_request)
    writer = start_transcript(s, "/dev/full", model="offline", provider="offline", base_url=None,
                              question="q")
    buf = io.StringIO()
    elsewhere = tmp_path / "elsewhere.json"
    with create_pipe_input() as pipe:
        pipe.send_text(f"c\rsave {elsewhere}\r")
        pipe.close()
        Debugger(s, Console(file=buf, width=120, no_color=True), input=pipe, output=DummyOutput(),
                 history=False, transcript=writer).loop()
    writer.close()  # releases its lock on /dev/full for the next test
    out = " ".join(buf.getvalue().split())
    assert "the transcript /dev/full cannot be written" in out and "'save PATH' writes it" in out
    assert "杭州转运中心已发出" in elsewhere.read_text(encoding="utf-8")
