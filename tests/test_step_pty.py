"""`agentdbg run --step` in a real pseudo-terminal, end to end, as a person would use it."""

import os
import sys

import pexpect
import pytest
from pty_helpers import commander

ORDER_Q = "订单 ORD-2026-001 到哪里了?"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_step_session_end_to_end(tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text(  # "edits" the tool result: a different tracking number
        "import json, sys\np = sys.argv[1]\nm = json.load(open(p, encoding='utf-8'))\n"
        "m['content'] = json.dumps({'status': 'shipped', 'tracking_no': 'SF000000'})\n"
        "json.dump(m, open(p, 'w', encoding='utf-8'))\n")
    saved = tmp_path / "session.json"
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "xterm",
           "AGENTDBG_HOME": str(tmp_path / "home"), "NO_COLOR": "1",
           "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "run", "--step", ORDER_Q],
                          env=env, encoding="utf-8", dimensions=(60, 200), timeout=30,
                          cwd=str(tmp_path))
    try:
        cmd = commander(child, "(agentdbg)")

        cmd("", "turn 1", "▶ next: execute 1 call(s)")                    # step: ask the model
        cmd("fail query_logistics timeout", "will return the timeout fault")
        cmd("continue", "error: timeout (retryable)",                       # the injected timeout
            "retrying query_logistics once",                               # the model reacts
            "杭州转运中心已发出", "■ stopped: completed")
        cmd("edit 2", "message 2 edited", "SF000000", "[edited by you]")
        cmd("drop 1", "dropped message 1 (assistant)", "✗ error orphan-tool-message",
            "must be a response to a preceeding message with 'tool_calls'")
        cmd("rewind 0", "rewound to message 0")
        cmd("continue", "■ stopped: completed")
        cmd(f"save {saved}", "saved to")
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    from agentdbg.transcript import load_transcript
    t = load_transcript(saved)
    assert t.stop.reason == "completed"
    assert "杭州转运中心已发出" in t.final_messages()[-1]["content"]
    assert [e.action for e in t.events if e.event_type == "action"] == [
        "fail", "edit", "drop", "rewind"]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_replay_step_goes_live_after_a_change(tmp_path):
    import subprocess

    rec = tmp_path / "rec.jsonl"
    subprocess.run([sys.executable, "-m", "agentdbg", "run", ORDER_Q, "--save", str(rec)],
                   check=True, capture_output=True, cwd=str(tmp_path))
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1",
           "AGENTDBG_HOME": str(tmp_path / "home")}
    from agentdbg.toolspec import bundled_tools_path

    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "replay", str(rec), "--step",
                                           "--tools", str(bundled_tools_path())],
                          env=env, encoding="utf-8", dimensions=(60, 200), timeout=30,
                          cwd=str(tmp_path))
    try:
        cmd = commander(child, "(agentdbg)")

        cmd("", "replayed turn 1")
        cmd("", "[2] tool")
        cmd('inject 2 {"status": "lost"}', "message 2 now holds the custom")
        cmd("", "the recording is stale from here", "first difference at messages[2].content")
        cmd("live", "live from here with the offline model and the tools of")
        cmd("continue", "■ stopped: completed")
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
