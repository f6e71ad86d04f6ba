"""`agentdbg proxy -- CMD` in a real terminal (a pty) with real signals: the command keeps the
terminal, the terminal's Ctrl-C is the command's to handle (agentdbg goes on relaying), a
SIGTERM to agentdbg is passed on, nothing recorded is lost, and no process outlives it."""

from __future__ import annotations

import signal
import sys
import time
import uuid
from pathlib import Path

import pexpect
import pytest

from agentdbg.transcript import load_transcript
from agentdbg.transcript.events import Request

from .helpers import alive_with, clean_env, summary_paths

APP = Path(__file__).with_name("signal_app.py")


@pytest.fixture
def marker():
    mark = uuid.uuid4().hex
    yield mark
    leftover = alive_with(mark)
    for pid in leftover:   # never leave them running, even when the test failed
        import os
        os.kill(pid, signal.SIGKILL)
    assert not leftover, f"processes outlived agentdbg: {leftover}"


def spawn(tmp_path: Path, mark: str, mode: str) -> pexpect.spawn:
    env = clean_env(AGENTDBG_TEST_MARK=mark, COLUMNS="120")
    return pexpect.spawn(sys.executable, ["-m", "agentdbg", "proxy", "--offline", "--save",
                                          str(tmp_path), "--", sys.executable, str(APP), mode],
                         env=env, encoding="utf-8", timeout=60, dimensions=(40, 120))


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    return child.before


def requests_of(tmp_path: Path) -> list[str]:
    """Each request's question, conversation by conversation (one question each here)."""
    asked = []
    for path in sorted(tmp_path.glob("*-conversation-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        t = load_transcript(path)
        assert t.stop is not None    # the stop event: written, whatever ended the command
        asked += [e.messages[-1]["content"] for e in t.events if isinstance(e, Request)]
    return asked


def test_the_command_keeps_the_terminal(tmp_path, marker):
    child = spawn(tmp_path, marker, "tty")
    child.expect("tty: True True True")
    child.expect("type a line:")
    child.sendline("hello from the keyboard")
    child.expect("got: hello from the keyboard; model: True")
    rest = finish(child)
    assert "agentdbg proxy: python exited with status 0" in rest
    assert child.exitstatus == 0
    assert requests_of(tmp_path) == ["hello from the keyboard"]


def test_ctrl_c_is_the_command_s_and_agentdbg_relays_on(tmp_path, marker):
    child = spawn(tmp_path, marker, "sigint")
    child.expect("ready")
    child.sendintr()                       # the terminal's Ctrl-C: to its foreground group
    child.expect("first Ctrl-C: ignored")
    time.sleep(1.0)
    assert child.isalive()                 # agentdbg did not stop: the command decides
    child.sendintr()
    child.expect("answered after SIGINT")  # a request after Ctrl-C still goes through
    rest = finish(child)
    assert "python exited with status 5" in rest and "2 requests in 2 conversations" in rest
    assert child.exitstatus == 5
    assert requests_of(tmp_path) == ["before the signal", "after SIGINT"]


def test_sigterm_to_agentdbg_is_passed_on_and_nothing_is_lost(tmp_path, marker):
    child = spawn(tmp_path, marker, "term")
    child.expect("ready")
    child.kill(signal.SIGTERM)             # to agentdbg alone, as a supervisor would send it
    child.expect("answered after SIGTERM")
    rest = finish(child)
    assert "python exited with status 5" in rest and child.exitstatus == 5
    assert requests_of(tmp_path) == ["before the signal", "after SIGTERM"]


def test_what_the_command_leaves_running_is_ended(tmp_path, marker):
    child = spawn(tmp_path, marker, "orphan")
    child.expect("left a process behind")
    rest = finish(child)
    assert "ended 1 process the command left running" in rest
    assert child.exitstatus == 0
    deadline = time.time() + 5
    while alive_with(marker) and time.time() < deadline:
        time.sleep(0.1)
    paths = summary_paths(rest.replace("\r\n", "\n"))
    assert paths["transcripts"] and all(p.exists() for p in paths["transcripts"])
