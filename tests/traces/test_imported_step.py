"""replay --step on a session file (an app-driven run: each recorded request is the app's
history): a result the user injects or edits stays in the history, the recorded replies are
said to be stale, 'play' goes on knowingly, and the fork saved differs from the production run
exactly there; the pytest plugin turns session files into tests."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agentdbg.checker import check_model_request
from agentdbg.engine.phases import StopReason
from agentdbg.engine.replaying import Replay, replay_session
from agentdbg.repl.debugger import Debugger
from agentdbg.transcript import load_transcript

from .support import CODEX
from .tests_env import clean_env

FAULT = '{"error": "no shell"}'


def step(path, *lines):
    session, model = replay_session(path, precheck=check_model_request)
    session.config.stop_on_invalid = False
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()
        Debugger(session, Console(file=buf, width=200, no_color=True), input=pipe, output=DummyOutput(),
                 history=False, replay=Replay(session, model)).loop()
    return session, " ".join(buf.getvalue().split())


def test_an_injected_result_stays_and_the_recording_is_stale_from_there():
    session, out = step(CODEX, "n", "n", f"inject 5 {FAULT}", "n", "play", "c")
    assert "the recording is stale from here" in out
    assert "first difference at messages[5].content" in out
    assert session.stop_reason is StopReason.COMPLETED
    assert session.messages[5]["content"] == FAULT                 # the user's change stayed
    assert session.messages[7]["tool_call_id"] == "call_2"         # the app's next result came after it
    assert [m.get("tool_call_id") for m in session.messages if m["role"] == "tool"] == ["call_1", "call_2"]


def test_a_message_dropped_before_a_request_stays_dropped_as_the_replay_goes_on():
    session, out = step(CODEX, "drop 2", "n", "play", "c")
    assert "the recording is stale from here" in out and "messages[2]" in out
    assert session.stop_reason is StopReason.COMPLETED
    assert not any("<environment_context>" in str(m.get("content")) for m in session.messages)
    assert [m.get("tool_call_id") for m in session.messages if m["role"] == "tool"] == ["call_1", "call_2"]


def test_a_fork_saved_from_step_mode_diffs_against_the_session_file_where_it_changed(tmp_path):
    fork = tmp_path / "fork.jsonl"
    keys = f"n\nn\ninject 5 {FAULT}\nn\nplay\nc\nq\n".encode()
    run = subprocess.run([sys.executable, "-m", "agentdbg", "replay", str(CODEX), "--step", "--save", str(fork)],
                         input=keys, capture_output=True, env=clean_env(), timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert load_transcript(fork).final_messages()[5]["content"] == FAULT
    diff = subprocess.run([sys.executable, "-m", "agentdbg", "diff", str(CODEX), str(fork)],
                          capture_output=True, env=clean_env(), timeout=120)
    said = " ".join(diff.stdout.decode().split())
    assert "same: every turn" not in said
    assert 'messages: first difference at messages[5].content' in said and 'B "{\\"error\\": \\"no shell\\"}"' in said
    # the fork's own results, as its model went on with them: the injected one in turn 1, and
    # the app's next result (it came after the inject, in the fork's later history) in turn 2
    assert 'first divergence: turn 1: exec_command result differs at $' in said
    assert '~ exec_command result $: "Chunk ID: 6fa1f6' in said and '→ {"error": "no shell"}' in said
    assert "= turn 2: same (exec_command)" in said and "→ null" not in said


def test_the_pytest_plugin_makes_session_files_tests_and_a_lost_result_fails(pytester):
    folder = pytester.path / "sessions"
    folder.mkdir()
    (folder / CODEX.name).write_bytes(CODEX.read_bytes())
    lines = CODEX.read_text(encoding="utf-8").splitlines(keepends=True)
    lost = [ln for ln in lines if '"function_call_output"' not in ln or '"call_1"' not in ln]
    assert len(lost) < len(lines)
    (folder / "rollout-lost.jsonl").write_text("".join(lost), encoding="utf-8")
    result = pytester.runpytest("--agentdbg-replay", str(folder), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*rollout-lost.jsonl*", "*missing-tool-response*"])


def test_live_tools_rerun_each_call_the_app_ran_and_compare_with_its_result(tmp_path):
    """Codex ran exec_command itself (no tool event in the session): --live-tools re-runs each
    call with the tools of --tools and compares with the output Codex sent back."""
    from typer.testing import CliRunner

    from agentdbg.cli import app

    tools = tmp_path / "shell.yaml"
    tools.write_text(SHELL_TOOLS, encoding="utf-8")
    result = CliRunner().invoke(app, ["replay", str(CODEX), "--live-tools", "--tools", str(tools), "--strict"])
    said = result.output
    assert "live tools: 2 recorded call(s): 1 same, 1 different, 0 not re-run" in said, said
    assert "call_2 exec_command differs" in said and "+hello-one" in said
    assert result.exit_code == 1


SHELL_TOOLS = """\
version: 1
tools:
  - name: exec_command
    description: Run a shell command (a fixture standing in for Codex's shell, printing hello-one).
    parameters:
      type: object
      properties:
        cmd: {type: string}
      required: [cmd]
    handler:
      fixture: "Chunk ID: 6fa1f6\\nWall time: 0.0138 seconds\\nProcess exited with code 0\\nOriginal token count: 3\\nOutput:\\nhello-one\\n"
"""


def test_a_run_saved_in_step_mode_from_a_session_without_tool_definitions_checks_clean(tmp_path):
    """Codex's rollout records no tool definitions: the run 'save' writes has tools [] — the
    requests never carried tools: [], so check must not say the API rejects it."""
    from typer.testing import CliRunner

    from agentdbg.cli import app

    step(CODEX, "c", f"save {tmp_path / 'run.json'}")
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["tools"] == []
    result = CliRunner().invoke(app, ["check", str(tmp_path / "run.json")])
    assert result.exit_code == 0 and "tool-params-without-tools" not in result.output, result.output
