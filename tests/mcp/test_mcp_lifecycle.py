"""No MCP server process outlives agentdbg: close(), Ctrl-C, SIGTERM, a forgotten close().

Every check reads the real process table under /proc."""

import os
import select
import signal
import subprocess
import sys

import pytest
from mcp_helpers import (
    DRIVER,
    demo_config,
    descendants,
    gone,
    group_members,
    read_events,
    running,
    wait_until,
)

from agentdbg.mcp.client import McpClient

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


def test_close_stops_the_server_and_whatever_it_left_in_its_group(tmp_path):
    events = tmp_path / "events.jsonl"
    client = McpClient(demo_config("parent", mode="with_child", events=events)).start()
    pid = client.pid
    helper = next(e["pid"] for e in read_events(events) if e["event"] == "helper")
    assert running(pid) and running(helper)
    assert set(group_members(pid)) == {pid, helper}     # its own process group, not ours
    assert os.getpgid(pid) != os.getpgrp()
    client.close()
    assert gone([pid, helper]) and not group_members(pid)
    client.close()   # idempotent


def test_close_from_another_thread_cancels_a_call_in_flight(tmp_path):
    import threading

    events = tmp_path / "events.jsonl"
    client = McpClient(demo_config("busy", events=events)).start()
    pid, box = client.pid, {}
    worker = threading.Thread(target=lambda: box.update(result=client.call_tool("slow", {"seconds": 60})))
    worker.start()
    assert wait_until(lambda: any(e["event"] == "slow_started" for e in read_events(events)))
    client.close()
    worker.join(5)
    assert box["result"].error_type == "cancelled"
    assert gone([pid])


class Driver:
    """``mcp_driver.py`` in a child process: stands in for the agentdbg CLI."""

    def __init__(self, mode, events):
        self.proc = subprocess.Popen([sys.executable, str(DRIVER), mode, str(events)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.line()
        assert line.startswith("READY "), (line, self.proc.stderr.read() if self.proc.poll() else "")
        self.server = int(line.split()[1])

    def line(self, timeout=20.0) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().strip() if ready else ""

    def finish(self):
        out, err = self.proc.communicate(timeout=20)
        return self.proc.returncode, out, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_call_is_cancelled_on_the_server_and_the_server_stopped(tmp_path, sig):
    events = tmp_path / "events.jsonl"
    driver = Driver("call", events)
    assert wait_until(lambda: any(e["event"] == "slow_started" for e in read_events(events)), 10)
    tree = descendants(driver.proc.pid)
    assert driver.server in tree
    driver.proc.send_signal(sig)
    code, out, err = driver.finish()
    assert (code, out.split()) == (130, ["CLOSED"]), err
    assert gone(tree) and not group_members(driver.server)
    seen = [e["event"] for e in read_events(events)]
    assert "cancel_notification" in seen and "slow_cancelled" in seen   # the protocol's cancellation


def test_calls_in_worker_threads_are_cancelled_on_ctrl_c(tmp_path):
    events = tmp_path / "events.jsonl"
    driver = Driver("threads", events)
    assert wait_until(lambda: sum(e["event"] == "slow_started" for e in read_events(events)) == 2, 10)
    driver.proc.send_signal(signal.SIGINT)
    code, out, err = driver.finish()
    assert code == 130, err
    assert out.split("\n")[:3] == ["CANCELLED 2", "RESULTS cancelled cancelled", "CLOSED"], err
    assert gone([driver.server])
    assert sum(e["event"] == "cancel_notification" for e in read_events(events)) == 2


def test_a_forgotten_close_is_done_at_interpreter_exit(tmp_path):
    events = tmp_path / "events.jsonl"
    driver = Driver("no_close", events)
    helper = next(e["pid"] for e in read_events(events) if e["event"] == "helper")
    code, _, err = driver.finish()
    assert code == 0, err
    assert wait_until(lambda: gone([driver.server, helper]), 5)
