"""Command tools: their children die with them, their output is read in bounded chunks, and
they never see secrets they were not given (issue 11)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
SCRIPT = "turns:\n  - tool_calls: [{name: tool, id: c1, arguments: {}}]\n  - content: done\n"
# a command that starts a child, notes its pid and waits for it
SPAWNS = ["sh", "-c", "sleep 60 & echo $! > child.pid; wait"]


def setup(tmp_path, argv, **policy):
    spec = {"name": "tool", "description": "A tool. Use when asked.",
            "parameters": {"type": "object", "properties": {}},
            "handler": {"command": argv}, **policy}
    (tmp_path / "t.yaml").write_text(json.dumps({"version": 1, "tools": [spec]}), encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SCRIPT, encoding="utf-8")


def tool_result(stdout: str) -> dict:
    doc = json.loads(stdout)
    return json.loads(next(m for m in doc["messages"] if m["role"] == "tool")["content"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie waiting for its parent is dead too
        return fh.read().split(")")[-1].split()[0] != "Z"


@pytest.fixture
def child_pid(tmp_path):
    pids = []

    def read() -> int:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text = (tmp_path / "child.pid").read_text() if (tmp_path / "child.pid").exists() else ""
            if text.strip():
                pids.append(int(text))
                return pids[-1]
            time.sleep(0.05)
        raise AssertionError("the tool never started its child")
    yield read
    for pid in pids:  # never leave a sleeper behind, whatever the outcome
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_timeout_kills_the_command_and_its_children(tmp_path, child_pid):
    setup(tmp_path, SPAWNS, timeout=1)
    start = time.monotonic()
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
    took = time.monotonic() - start
    assert tool_result(r.stdout)["error"]["type"] == "timeout"
    assert took < 15  # not the child's 60 s
    pid = child_pid()
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_ctrl_c_kills_the_command_and_its_children(tmp_path, child_pid):
    setup(tmp_path, SPAWNS, timeout=120)
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "run", "q", "--script", "s.yaml",
                             "--tools", "t.yaml"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"})
    try:
        pid = child_pid()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


# a command whose grandchild leaves the command's session and process group (issue 21)
ESCAPES = [sys.executable, "-c", """
import os, sys, time
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        open("child.pid", "w").write(str(os.getpid()))
        time.sleep(60)
        os._exit(0)
    time.sleep(60)
    os._exit(0)
while not os.path.exists("child.pid"):
    time.sleep(0.01)
if sys.argv[1:] == ["exit"]:
    print('{"done": 1}')
    sys.exit(0)
time.sleep(60)
"""]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor is Linux's")
@pytest.mark.parametrize("how", ["timeout", "exit", "ctrl-c"])
def test_a_grandchild_that_calls_setsid_dies_with_the_command(tmp_path, child_pid, how):
    setup(tmp_path, ESCAPES + (["exit"] if how == "exit" else []), timeout=2 if how == "timeout" else 60)
    if how == "ctrl-c":
        proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "run", "q", "--script", "s.yaml",
                                 "--tools", "t.yaml"], cwd=str(tmp_path), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        pid = child_pid()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 130
    else:
        r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
        assert r.exit_code == 0, r.output
        result = tool_result(r.stdout)
        assert result == {"done": 1} if how == "exit" else result["error"]["type"] == "timeout"
        pid = child_pid()
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_output_past_the_cap_stops_the_tool_at_once(tmp_path):
    # 11 MB, then the tool would sit there for its whole timeout: reading stops at 10 MB
    chatty = [sys.executable, "-c", "import sys, time; sys.stdout.buffer.write(b'x' * 11_000_000); "
              "sys.stdout.flush(); time.sleep(60)"]
    setup(tmp_path, chatty, timeout=60)
    start = time.monotonic()
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
    assert time.monotonic() - start < 30
    error = tool_result(r.stdout)["error"]
    assert error["type"] == "internal_error" and "printed too much output" in error["message"]


ENV_DUMP = [sys.executable, "-c", "import json, os; print(json.dumps(sorted(os.environ)))"]


def test_tools_get_no_secrets_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hardening-0123456789abcdef")
    monkeypatch.setenv("SHOP_DB_PASSWORD", "hunter2-hunter2")
    monkeypatch.setenv("INNOCENT_LOOKING", "sk-hardening-0123456789abcdef")  # a key by its value
    monkeypatch.setenv("TOOL_MODE", "fast")
    setup(tmp_path, ENV_DUMP)
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
    names = tool_result(r.stdout)
    assert "TOOL_MODE" in names and "PATH" in names
    assert not {"OPENAI_API_KEY", "SHOP_DB_PASSWORD", "INNOCENT_LOOKING"} & set(names)


ROUND_TWO_SECRETS = {   # issue 21: what the first filter let through
    "CACHE_URL": "redis://:hunter2-redis@cache:6379/0",                     # empty user
    "MYSQL_PWD": "hunter2-mysql",
    "SESSION_JWT_VALUE": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "NOTIFY_URL": "https://hooks.slack.com/services/T0000/B0000/hunter2slackhook",
    "ALERTS": "https://discord.com/api/webhooks/123456/hunter2-discord-token",
    "SHOP_DB": "Server=db;Database=shop;User Id=sa;Password=hunter2-mssql;",
    "OTHER_DB": "Server=db;Uid=sa;Pwd=hunter2-odbc",
}


def test_tools_get_none_of_the_secrets_round_two_found(tmp_path, monkeypatch):
    for name, value in ROUND_TWO_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TOOL_MODE", "fast")
    dump = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]
    setup(tmp_path, dump)
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json",
                            "--save", "t.jsonl"])
    seen = tool_result(r.stdout)
    assert seen["TOOL_MODE"] == "fast" and "PWD" in seen and "PATH" in seen
    assert not set(ROUND_TWO_SECRETS) & set(seen), set(ROUND_TWO_SECRETS) & set(seen)
    recorded = (tmp_path / "t.jsonl").read_text(encoding="utf-8")   # nor the transcript
    assert "hunter2" not in recorded and "hunter2" not in r.stdout   # nor the model
    setup(tmp_path, dump, env=["MYSQL_PWD"])                         # unless passed by name
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
    assert tool_result(r.stdout)["MYSQL_PWD"] == "hunter2-mysql"


def test_a_tools_file_passes_a_secret_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_API_KEY", "shop-key-123456")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hardening-0123456789abcdef")
    setup(tmp_path, ENV_DUMP, env=["SHOP_API_KEY"])
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
    names = tool_result(r.stdout)
    assert "SHOP_API_KEY" in names and "OPENAI_API_KEY" not in names


def test_a_tool_echoing_a_key_to_stderr_never_shows_it_under_debug(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hardening-0123456789abcdef")
    leak = [sys.executable, "-c", "import os, sys; sys.stderr.write(os.environ.get("
            "'OPENAI_API_KEY', 'none')); sys.exit(3)"]
    setup(tmp_path, leak)
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--debug",
                            "--save", "t.jsonl"])
    assert "sk-hardening" not in r.output
    assert "sk-hardening" not in (tmp_path / "t.jsonl").read_text(encoding="utf-8")


def test_tools_get_neither_the_runs_key_nor_url_credentials_whatever_the_variable(tmp_path, monkeypatch):
    from support import scripted

    from agentdbg.testing.server import ModelServer

    monkeypatch.setenv("LLM_ACCESS", "plainvalue123")                  # the key, in a plain name
    monkeypatch.setenv("UPSTREAM", "http://bob:pa55w0rd@127.0.0.1:9/v1")  # credentials in a URL
    monkeypatch.setenv("TOOL_MODE", "fast")
    setup(tmp_path, ENV_DUMP)
    server = ModelServer(scripted({"tool_calls": [{"name": "tool", "id": "c1", "arguments": {}}]},
                                  {"content": "done"})).start()
    try:
        r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", server.base_url,
                                "--api-key", "plainvalue123", "--tools", "t.yaml", "--json"])
    finally:
        server.stop()
    assert r.exit_code == 0, r.output
    names = tool_result(r.stdout)
    assert "TOOL_MODE" in names and not {"LLM_ACCESS", "UPSTREAM"} & set(names)
