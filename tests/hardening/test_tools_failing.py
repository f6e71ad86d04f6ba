"""Failing tools each become the right structured error result (see also tests/test_executor.py)."""

import json
import sys

from agentdbg.engine.executor import ToolExecutor

TOOLS = """
version: 1
tools:
  - name: chatty
    description: Prints megabytes.
    handler: {command: [python, -c, "import sys; sys.stdout.write('x' * 20_000_000)"]}
  - name: chatty_json
    description: Prints a big valid JSON result.
    max_result_chars: 1000
    handler: {command: [python, -c, "import json; print(json.dumps({'rows': ['y' * 100] * 20000}))"]}
  - name: late
    description: Answers after its timeout.
    timeout: 0.2
    handler: {python: "slow_handlers:late"}
  - name: env_leak
    description: Raises with secrets in the message.
    handler: {python: "slow_handlers:env_leak"}
"""

HANDLERS = '''
import os, threading, time
DONE = threading.Event()

def late():
    time.sleep(0.6)
    DONE.set()
    return {"late": True}

def env_leak():
    raise RuntimeError("connect failed: password=" + os.environ.get("HARDENING_SECRET", "")
                       + " at /srv/app/db.py line 12")
'''


def executor(tmp_path):
    from agentdbg.toolspec import load_tools

    (tmp_path / "slow_handlers.py").write_text(HANDLERS)
    (tmp_path / "tools.yaml").write_text(TOOLS)
    return ToolExecutor(load_tools(tmp_path / "tools.yaml"))


def call(name):
    return {"id": f"c_{name}", "type": "function", "function": {"name": name, "arguments": "{}"}}


def err(outcome):
    return json.loads(outcome.content)["error"]


def test_megabytes_of_output_stop_the_tool_at_the_cap(tmp_path):
    """20 MB on stdout: reading stops at the 10 MB cap and the tool is killed there."""
    o = executor(tmp_path).run_one(call("chatty"))
    assert err(o)["type"] == "internal_error" and "printed too much output" in err(o)["message"]
    assert "more than 10000000 bytes" in o.detail
    assert len(o.content) < 500


def test_big_valid_result_is_cut_with_a_marker(tmp_path):
    o = executor(tmp_path).run_one(call("chatty_json"))
    assert o.ok and o.truncated_chars > 2_000_000 and "truncated by agentdbg" in o.content


def test_late_python_result_is_discarded_and_noted(tmp_path):
    ex = executor(tmp_path)
    o = ex.run_one(call("late"))
    assert err(o)["type"] == "timeout" and "late result will be discarded" in o.detail
    mod = sys.modules["slow_handlers"]
    assert mod.DONE.wait(2)  # the handler did finish later...
    assert '"late"' not in o.content  # ...and its result never reached the model


def test_model_never_sees_env_values_paths_or_tracebacks(tmp_path, monkeypatch):
    monkeypatch.setenv("HARDENING_SECRET", "hunter2-very-secret")
    o = executor(tmp_path).run_one(call("env_leak"))
    for leak in ("hunter2", "/srv/app", "Traceback", "RuntimeError", "password"):
        assert leak not in o.content
    assert "hunter2-very-secret" in o.detail  # the user still gets the whole story
