"""SIGINT and SIGTERM stop agentdbg within a second, whatever it is doing (issue 21): real
signals to real processes — run (in a tool, in argument checks of thirty parallel calls
whose instances are costly), step mode (at its prompt), serve and the proxy (after a hostile
schema), check (in the middle of a long input)."""

import json
import signal
import subprocess
import sys
import time
import urllib.request

import pexpect
import pytest
from proxy_helpers import Proxy, Serve, Upstream
from test_schema_budget import body, chain, overlapping

SIGNALS = [signal.SIGINT, signal.SIGTERM]
DEADLINE = 1.0


def stopped_within(proc, sig) -> float:
    """Send ``sig``; how long the process took to exit (it must exit)."""
    started = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"still running 30 s after {sig.name}") from None
    return time.monotonic() - started


def agentdbg(tmp_path, *args) -> subprocess.Popen:
    with open(tmp_path / "out.txt", "wb") as out:   # a file: a full pipe would block it
        return subprocess.Popen([sys.executable, "-m", "agentdbg", *args], cwd=str(tmp_path),
                                stdout=out, stderr=subprocess.STDOUT)


def wait_for(path, text, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(encoding="utf-8"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text} never appeared in {path}")


@pytest.mark.parametrize("sig", SIGNALS)
def test_run_in_a_tool(tmp_path, sig):
    tools = {"version": 1, "tools": [{"name": "slow", "description": "Use when asked to wait.",
                                      "timeout": 60, "handler": {"command": [
                                          "python", "-c", "import time; time.sleep(60)"]}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    (tmp_path / "s.yaml").write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "slow", "id": "c1", "arguments": {}}]}, {"content": "done"}]}))
    proc = agentdbg(tmp_path, "run", "q", "--tools", "t.yaml", "--script", "s.yaml", "--save", "r.jsonl")
    wait_for(tmp_path / "r.jsonl", '"type": "response"')
    time.sleep(0.5)
    assert stopped_within(proc, sig) < DEADLINE
    assert proc.returncode == 130


@pytest.mark.parametrize("sig", SIGNALS)
def test_run_in_costly_argument_checks(tmp_path, sig):
    schema, value = overlapping()
    tools = {"version": 1, "tools": [{"name": "t", "description": "Use when asked.",
                                      "parameters": schema, "handler": {"fixture": {"ok": 1}}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    calls = [{"name": "t", "id": f"c{i}", "arguments": value} for i in range(30)]
    (tmp_path / "s.yaml").write_text(json.dumps({"turns": [{"tool_calls": calls}] * 5}))
    proc = agentdbg(tmp_path, "run", "q", "--tools", "t.yaml", "--script", "s.yaml",
                    "--max-tool-calls", "1000", "--save", "r.jsonl")
    wait_for(tmp_path / "r.jsonl", '"type": "response"')
    time.sleep(1.5)                                  # thirty checks in thirty threads
    assert stopped_within(proc, sig) < DEADLINE
    assert proc.returncode == 130


def step_session(tmp_path):
    tools = {"version": 1, "tools": [{"name": "slow", "description": "Use when asked to wait.",
                                      "timeout": 60, "handler": {"command": [
                                          "python", "-c", "import time; time.sleep(60)"]}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    (tmp_path / "s.yaml").write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "slow", "id": "c1", "arguments": {}}]}, {"content": "done"}]}))
    return pexpect.spawn(sys.executable, ["-m", "agentdbg", "run", "--step", "q", "--tools", "t.yaml",
                                          "--script", "s.yaml"],
                         cwd=str(tmp_path), encoding="utf-8", dimensions=(50, 150), timeout=30,
                         env={**__import__("os").environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"})


def test_step_mode_sigterm_at_its_prompt_and_in_a_tool(tmp_path):
    for in_tool in (False, True):
        child = step_session(tmp_path)
        try:
            child.expect_exact("(agentdbg)")
            if in_tool:
                child.sendline("")                        # ask the model
                child.expect_exact("(agentdbg)")
                child.sendline("")                        # run the slow tool
                time.sleep(1)
            started = time.monotonic()
            child.kill(signal.SIGTERM)
            child.expect(pexpect.EOF)
            child.wait()
            took = time.monotonic() - started
        finally:
            child.close(force=True)
        assert took < DEADLINE, in_tool


def test_step_mode_sigint_in_a_tool_cancels_it_at_once(tmp_path):
    child = step_session(tmp_path)           # Ctrl-C in a phase cancels it (the documented
    try:                                     # behaviour): back at the prompt within a second
        child.expect_exact("(agentdbg)")
        child.sendline("")
        child.expect_exact("(agentdbg)")
        child.sendline("")
        time.sleep(1)
        started = time.monotonic()
        child.kill(signal.SIGINT)
        child.expect_exact("(agentdbg)")
        assert time.monotonic() - started < DEADLINE
    finally:
        child.close(force=True)


@pytest.mark.parametrize("sig", SIGNALS)
def test_serve_after_a_hostile_schema(tmp_path, sig):
    serve = Serve(tmp_path, "--offline")
    try:
        request = urllib.request.Request(serve.url + "/chat/completions", headers={
            "content-type": "application/json"}, data=json.dumps(body(chain(), {"x": 5})).encode())
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=30)
        assert stopped_within(serve.proc, sig) < DEADLINE
    finally:
        serve.stop()


@pytest.mark.parametrize("sig", SIGNALS)
def test_the_proxy_after_a_hostile_schema(tmp_path, sig):
    upstream = Upstream()
    proxy = Proxy(upstream.url, tmp_path)
    try:
        request = urllib.request.Request(proxy.url + "/chat/completions", headers={
            "content-type": "application/json"}, data=json.dumps(body(chain(), {"x": 5})).encode())
        urllib.request.urlopen(request, timeout=30).read()
        time.sleep(0.5)
        assert stopped_within(proxy.proc, sig) < DEADLINE
    finally:
        proxy.stop()
        upstream.stop()
    assert len(list((tmp_path / "saved").glob("*.jsonl"))) == 1


@pytest.mark.parametrize("sig", SIGNALS)
def test_check_in_the_middle_of_a_long_input(tmp_path, sig):
    schema, value = overlapping()
    lines = [json.dumps(body(schema, value)) for _ in range(200)]   # each request costs its budget
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n")
    proc = agentdbg(tmp_path, "check", "many.jsonl")
    time.sleep(2)
    assert proc.poll() is None                       # still at it
    assert stopped_within(proc, sig) < DEADLINE
    assert proc.returncode == 130
