"""Ctrl-C and SIGTERM while an MCP call runs, in batch and in step mode (a real pty): the server is
sent the protocol's cancellation, the run is recorded as cancelled, and no server process is left."""

import os
import signal
import subprocess
import sys
import uuid

import pexpect
import pytest
from mcp_helpers import demo_yaml, read_events, tagged, transcript, wait_until, write_script
from pty_helpers import commander

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc; needs a POSIX pty")


def setup(tmp_path, seconds=60):
    tag, events = uuid.uuid4().hex, tmp_path / "events.jsonl"
    tools = demo_yaml(tmp_path / "tools.yaml", {"events": events, "tag": tag})
    script = write_script(tmp_path / "s.yaml", {"calls": [("slow", {"seconds": seconds}),
                                                          ("slow", {"seconds": seconds})]}, {"content": "done"})
    env = {**os.environ, "AGENTDBG_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "TERM": "xterm",
           "PROMPT_TOOLKIT_NO_CPR": "1"}
    return tag, events, tools, script, env


def started(events, n):
    return lambda: sum(e["event"] == "slow_started" for e in read_events(events)) >= n


@pytest.mark.parametrize("sig,detail", [(signal.SIGINT, "cancelled by the user (Ctrl-C)"),
                                        (signal.SIGTERM, "terminated (SIGTERM)")], ids=["ctrl-c", "sigterm"])
def test_batch_run_interrupted_during_mcp_calls(tmp_path, sig, detail):
    tag, events, tools, script, env = setup(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "run", "--tools", str(tools), "--script",
                             str(script), "q", "--save", str(tmp_path / "t.jsonl")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        assert wait_until(started(events, 2), 30), proc.stderr.read1().decode() if proc.poll() else ""
        proc.send_signal(sig)
        proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130
    _, body = transcript(tmp_path / "t.jsonl")
    assert (body[-1]["type"], body[-1]["reason"], body[-1]["detail"]) == ("stop", "cancelled", detail)
    seen = [e["event"] for e in read_events(events)]
    assert seen.count("cancel_notification") == 2 and seen.count("slow_cancelled") == 2
    assert wait_until(lambda: not tagged(tag), 5), tagged(tag)


def test_step_mode_ctrl_c_cancels_the_call_and_sigterm_leaves_no_server(tmp_path):
    tag, events, tools, script, env = setup(tmp_path)
    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "run", "--step", "--tools", str(tools), "--script",
                                           str(script), "q"], env=env, encoding="utf-8",
                          dimensions=(50, 200), timeout=30, cwd=str(tmp_path))
    try:
        cmd = commander(child, "(agentdbg)")
        cmd("n", "▶ next: execute 2 call(s)")
        child.expect_exact("(agentdbg)")
        child.sendline("n")
        assert wait_until(started(events, 2), 30)
        child.sendintr()                                      # Ctrl-C at the terminal
        child.expect_exact("interrupted: the tool execution was cancelled; nothing was appended")
        assert wait_until(lambda: [e["event"] for e in read_events(events)].count("slow_cancelled") == 2)
        cmd("rpc call_1_1", "no finished call 'call_1_1'")    # nothing was appended
        child.expect_exact("(agentdbg)")
        assert tagged(tag)                                    # the server is still up for the next step
        child.kill(signal.SIGTERM)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 130                            # SIGTERM at the prompt: cancelled
    assert wait_until(lambda: not tagged(tag), 5), tagged(tag)
    assert [e["event"] for e in read_events(events)].count("cancel_notification") == 2


@pytest.mark.parametrize("sig,said", [(signal.SIGINT, "agentdbg: interrupted (Ctrl-C)"),
                                      (signal.SIGTERM, "agentdbg: terminated (SIGTERM)")],
                         ids=["ctrl-c", "sigterm"])
def test_interrupted_while_a_server_starts_says_so_and_leaves_no_server(tmp_path, sig, said):
    tag = uuid.uuid4().hex
    tools = demo_yaml(tmp_path / "tools.yaml", {"mode": "hang_before_start", "tag": tag,
                                                "init_timeout": 60})
    env = {**os.environ, "AGENTDBG_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "run", "--tools", str(tools), "q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        assert wait_until(lambda: bool(tagged(tag)), 30)          # the server is starting
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.decode().strip().splitlines()[-1] == said, err
    assert wait_until(lambda: not tagged(tag), 5), tagged(tag)
