"""Claude Code, Codex CLI and Gemini CLI (from npm, pinned: see npm_clients.py) each complete a
scripted tool turn under `agentdbg proxy --script FILE -- <client> …`: the model asks for a
shell command, the client runs it for real, sends the output back, and the model answers. Their
requests are recorded and checked with no finding on their valid traffic, and their own
configuration files — which point somewhere that does not answer — are left as they were.
Gemini CLI's own side requests (its routing classifier) are not the script's (``when``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdbg.transcript import load_transcript
from agentdbg.transcript.events import Header, Request

from . import npm_clients
from .helpers import agentdbg, clean_env, summary_paths

ANSWER = "done: the tool said hello-from-tool"


def script(tmp_path: Path, name: str, arguments: dict, call_id: str, **extra) -> Path:
    path = tmp_path / "turns.yaml"
    path.write_text(json.dumps({**extra, "turns": [
        {"tool_calls": [{"name": name, "arguments": arguments, "id": call_id}]},
        {"content": ANSWER}]}), encoding="utf-8")
    return path


def files(home: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}


def run_client(tmp_path: Path, command: str, script_file: Path, argv: list[str], home: Path):
    bin_dir = npm_clients.ensure(command) / ".bin"
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return agentdbg("proxy", "--script", str(script_file), "--save", str(tmp_path / "saved"),
                    "--", command, *argv, env=env, cwd=work, timeout=300)


def recorded(run) -> tuple[list, Header]:
    err = run.stderr.decode()
    assert run.returncode == 0, err[-3000:]
    [path] = summary_paths(err)["transcripts"]
    t = load_transcript(path)
    return [e for e in t.events if isinstance(e, Request)], t.header


def test_claude_code_completes_a_tool_turn_through_the_proxy(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    # its own settings send it to a port where nothing answers: agentdbg's overlay must win
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}}))
    before = files(home)
    turns = script(tmp_path, "Bash", {"command": "echo hello-from-tool",
                                      "description": "Print a greeting"}, "toolu_01")
    run = run_client(tmp_path, "claude", turns, ["-p", "say hello with the shell",
                                                 "--allowedTools", "Bash"], home)
    requests, header = recorded(run)
    assert run.stdout.decode().strip() == ANSWER
    assert header.api == "anthropic" and len(requests) == 2
    result = json.dumps(requests[1].body["messages"][-1], ensure_ascii=False)
    assert "tool_result" in result and "hello-from-tool" in result      # it really ran it
    assert [f for r in requests for f in r.findings or []] == []
    err = run.stderr.decode()
    assert "findings: none" in err and "2 requests in 1 conversation" in err
    assert {p: b for p, b in files(home).items() if p in before} == before


def test_codex_completes_a_tool_turn_through_the_proxy(tmp_path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    config = 'model = "gpt-5.5"\nopenai_base_url = "http://127.0.0.1:9/v1"\n'
    (home / ".codex" / "config.toml").write_text(config)
    before = files(home)
    turns = script(tmp_path, "exec_command", {"cmd": "echo hello-from-tool"}, "call_1")
    run = run_client(tmp_path, "codex", turns, ["exec", "--skip-git-repo-check",
                                                "say hello with the shell"], home)
    requests, header = recorded(run)
    assert ANSWER in run.stdout.decode()
    assert header.api == "responses" and len(requests) == 2
    outputs = [i for i in requests[1].body["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == 1 and "hello-from-tool" in json.dumps(outputs[0])
    assert any(t.get("name") == "exec_command" for t in requests[0].body["tools"])
    assert [f for r in requests for f in r.findings or []] == []
    assert "findings: none" in run.stderr.decode()
    assert (home / ".codex" / "config.toml").read_text() == config
    assert {p: b for p, b in files(home).items() if p in before} == before


def gemini_home(tmp_path: Path, settings: dict | None) -> Path:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    if settings is not None:
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home


API_KEY_SIGN_IN = {"security": {"auth": {"selectedType": "gemini-api-key"}}}


def test_gemini_cli_completes_a_tool_turn_through_the_proxy(tmp_path):
    home = gemini_home(tmp_path, API_KEY_SIGN_IN)
    before = files(home)
    # the script answers the requests that offer tools; the CLI's classifier (no tools, a JSON
    # answer of its schema wanted) gets the offline model's answer
    turns = script(tmp_path, "run_shell_command", {"command": "echo hello-from-tool",
                                                   "description": "Print a greeting"},
                   "call_1", when={"tools": True})
    # no key and no GEMINI_CLI_TRUST_WORKSPACE in the environment: agentdbg supplies both
    run = run_client(tmp_path, "gemini", turns, ["-p", "say hello with the shell", "--yolo"], home)
    err = run.stderr.decode()
    assert run.returncode == 0, err[-3000:]
    assert run.stdout.decode().strip() == ANSWER
    requests = []
    for path in summary_paths(err)["transcripts"]:
        t = load_transcript(path)
        assert t.header.api == "gemini"
        requests += [e for e in t.events if isinstance(e, Request)]
    looped = [r for r in requests if r.body.get("tools")]
    asides = [r for r in requests if not r.body.get("tools")]
    assert len(looped) == 2 and asides, [r.body.keys() for r in requests]
    result = json.dumps(looped[1].body["contents"][-1], ensure_ascii=False)
    assert "functionResponse" in result and "hello-from-tool" in result   # it really ran it
    assert [f for r in requests for f in r.findings or []] == []
    assert "findings: none" in err and "Error" not in err, err[-3000:]
    assert {p: b for p, b in files(home).items() if p in before} == before


def test_gemini_cli_without_api_key_sign_in_is_told_what_to_set(tmp_path):
    # with the base URL set and no sign-in chosen, the CLI refuses (agentdbg writes no settings)
    home = gemini_home(tmp_path, None)
    turns = script(tmp_path, "run_shell_command", {"command": "true"}, "call_1")
    run = run_client(tmp_path, "gemini", turns, ["-p", "hello"], home)
    out = run.stdout.decode() + run.stderr.decode()
    assert run.returncode != 0
    assert ("Gemini CLI's settings pick no sign-in (security.auth.selectedType)" in out
            and '"selectedType": "gemini-api-key"' in out), out[-3000:]
    assert not (home / ".gemini" / "settings.json").exists()


@pytest.fixture(autouse=True, scope="module")
def _installed():
    """Install (or find) the clients before the first test, so its time is not a test's."""
    for name in ("claude", "codex", "gemini"):
        npm_clients.ensure(name)
