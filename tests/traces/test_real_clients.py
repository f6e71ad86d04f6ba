"""Claude Code and Codex CLI (pinned from npm: tests/oneclick/npm_clients.py) run a multi-turn
tool loop through `agentdbg proxy --script` — Claude Code with a subagent started by its Agent
tool — and write their own session files into a temporary HOME. `agentdbg import` turns those
files into conversations whose calls and results pair exactly as the proxy recorded the very
same run, with no finding, and they replay. The subagent is drawn under its Agent call in the
proxy's summary, the report's tree and `runs`; so is the agent Codex starts with spawn_agent. (The fixtures in tests/fixtures/traces were made
this way; the fast tests in test_import.py read them without npm.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from oneclick import npm_clients
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.transcript import load_transcript
from agentdbg.transcript.events import Request

from .support import FIXTURES, pairs, question
from .tests_env import clean_env

pytestmark = pytest.mark.slow
runner = CliRunner()


def _drive(tmp_path: Path, client: str, argv: list[str]) -> tuple[Path, list[Path]]:
    """Run ``client`` through the proxy with the fixture's script; returns the temporary HOME and
    the proxy's transcripts of the run (ordered by conversation)."""
    home, proxied, _ = _drive_said(tmp_path, client, argv)
    return home, proxied


def _drive_said(tmp_path: Path, client: str, argv: list[str], fixture: str | None = None,
                config: str | None = None) -> tuple[Path, list[Path], str]:
    """``_drive``, and what the proxy said on the console (its summary at the end); ``fixture``:
    the folder of the script (default: the client's), ``config``: the client's config.toml."""
    home, work, saved = tmp_path / "home", tmp_path / "work", tmp_path / "proxied"
    work.mkdir()
    (home / (".claude" if client == "claude" else ".codex")).mkdir(parents=True)
    if config is not None:
        (home / ".codex" / "config.toml").write_text(config)
    turns = tmp_path / "turns.json"
    fixture = fixture or ("claude-code" if client == "claude" else "codex")
    shutil.copy(FIXTURES / fixture / "turns.json", turns)
    bin_dir = npm_clients.ensure(client) / ".bin"
    env = clean_env(HOME=str(home), CODEX_HOME=str(home / ".codex"),
                    PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run([sys.executable, "-m", "agentdbg", "proxy", "--script", str(turns), "--save",
                          str(saved), "--", client, *argv], capture_output=True, env=env, cwd=work,
                         timeout=600)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    assert "findings: none" in run.stderr.decode()
    proxied = sorted(saved.glob("*-conversation-*.jsonl"), key=lambda p: load_transcript(p).header.conversation)
    return home, proxied, run.stderr.decode()


def _import(tmp_path: Path, source: Path) -> tuple[list[Path], str]:
    out = tmp_path / "imported"
    result = runner.invoke(app, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return sorted(out.glob("*.jsonl"), key=lambda p: load_transcript(p).header.conversation), result.output


def _no_findings(path: Path) -> None:
    requests = [e for e in load_transcript(path).events if isinstance(e, Request)]
    assert requests and [f for r in requests for f in r.findings or []] == []


def _replays(tmp_path: Path, path: Path) -> None:
    result = runner.invoke(app, ["replay", str(path), "--save", str(tmp_path / f"replayed-{path.stem}.jsonl")])
    assert result.exit_code == 0, result.output
    assert "stop: completed" in result.output


def test_claude_code_with_a_subagent_imports_as_the_proxy_recorded_it(tmp_path):
    home, proxied = _drive(tmp_path, "claude", [
        "-p", "use a subagent to say hello with the shell, then say hello yourself",
        "--allowedTools", "Bash", "Agent"])
    [session] = (home / ".claude" / "projects").glob("*/*.jsonl")        # its own record
    assert list(session.parent.glob(f"{session.stem}/subagents/agent-*.jsonl"))
    imported, said = _import(tmp_path, home / ".claude")                 # the folder, as a user has it
    assert len(imported) == len(proxied) == 2
    for path in imported:                # the same conversation: the same first question
        [twin] = [p for p in proxied if question(path) in question(p)]
        assert pairs(path) == pairs(twin) and pairs(path)
        _no_findings(path)
        _replays(tmp_path, path)
    main, sub = (load_transcript(p).header for p in imported)
    assert sub.started_by.conversation == main.conversation and sub.started_by.call_id == "toolu_agent1"
    assert [call[1] for call in pairs(imported[0])] == ["Agent", "Bash"]
    assert "started by conversation 1, call toolu_agent1" in said


CLAUDE_SUBAGENT = ["-p", "use a subagent to say hello with the shell, then say hello yourself",
                   "--allowedTools", "Bash", "Agent"]


def test_claude_code_s_subagent_is_a_child_of_its_agent_call_in_the_console_report_and_runs(tmp_path):
    """Through the proxy, the subagent Claude Code starts with its Agent tool is drawn under
    that call: in the proxy's summary, in the report's tree and in `runs`; replay plays both."""
    _, proxied, said = _drive_said(tmp_path, "claude", CLAUDE_SUBAGENT)
    main, sub = proxied
    summary = [line.strip() for line in said.splitlines() if "conversation " in line and ("✓" in line or "✗" in line)]
    assert summary == [f"conversation 1 (main agent): 3 requests ✓  {main}",
                       f"└─ conversation 2 (Count files) ← subagent from conversation 1 (call toolu_agent1): "
                       f"2 requests ✓  {sub}"], said[-2000:]

    _tree_in_report_runs_and_replay(tmp_path, proxied, "main agent", "Count files", "toolu_agent1",
                                    "Agent", "a run of 2 conversations")


CODEX_SUBAGENT = ["exec", "--skip-git-repo-check", "use a subagent to say hello with the shell"]
# Codex's collaboration tools (spawn_agent, wait_agent, …: a namespace) come with this feature
MULTI_AGENT = 'model = "gpt-5.5"\n[features]\nmulti_agent_v2 = true\n'


def test_codex_s_subagent_is_a_child_of_its_spawn_agent_call_in_the_console_report_and_runs(tmp_path):
    """Through the proxy, the agent Codex starts with spawn_agent — with a copy of its parent's
    history, running while its parent waits — is drawn under that call: in the proxy's console
    and summary, in the report's tree and in `runs`; its answer comes back to its parent as a
    message; replay plays both. The script answers the namespaced calls, each agent from its
    own turns (codex-subagent/turns.json)."""
    home, proxied, said = _drive_said(tmp_path, "codex", CODEX_SUBAGENT, "codex-subagent", MULTI_AGENT)
    main, sub = proxied
    summary = [line.strip() for line in said.splitlines() if "conversation " in line and ("✓" in line or "✗" in line)]
    assert summary == [f"conversation 1 (Codex): 3 requests ✓  {main}",
                       f"└─ conversation 2 (say_hello) ← subagent from conversation 1 (call call_spawn1): "
                       f"2 requests ✓  {sub}"], said[-2000:]
    [log] = (tmp_path / "proxied").glob("*.log")
    console = log.read_text(encoding="utf-8")
    assert "↳ subagent (say_hello) started by call call_spawn1 (spawn_agent) in conversation 1 (Codex)" in console
    assert "↳ the answer of conversation 2 (say_hello) to spawn_agent call_spawn1 comes as a message" in console
    assert "/root → /root/say_hello" in console                          # the task, as the subagent got it
    requests = [e for e in load_transcript(sub).events if isinstance(e, Request)]
    assert "sub-hello" in str(requests[1].body["input"][-1]["output"])    # it really ran it

    replayed = _tree_in_report_runs_and_replay(
        tmp_path, proxied, "Codex", "say_hello", "call_spawn1", "spawn_agent",
        "a run of 2 conversations, 5 request(s), 0 finding(s)")
    assert "replayed a run of 2 conversations: all replayed" in replayed
    plugin = subprocess.run([sys.executable, "-m", "pytest", "--agentdbg-replay", str(tmp_path / "proxied"),
                             "-v", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert plugin.returncode == 0 and "2 passed" in plugin.stdout, plugin.stdout[-1500:]
    assert "conversation-1.jsonl::replay[Codex] PASSED" in plugin.stdout
    assert "conversation-2.jsonl::replay[say_hello] PASSED" in plugin.stdout

    imported, told = _import(tmp_path, home / ".codex")       # Codex's own rollouts: the same tree
    assert [pairs(p) for p in imported] == [pairs(p) for p in proxied] and pairs(imported[1])
    assert "conversation 2 · say_hello · started by conversation 1, call call_spawn1" in told
    for path in imported:
        _no_findings(path)


def test_codex_rollout_imports_as_the_proxy_recorded_it(tmp_path):
    home, [proxied] = _drive(tmp_path, "codex", ["exec", "--skip-git-repo-check", "say hello twice with the shell"])
    [rollout] = (home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl")
    [path], said = _import(tmp_path, rollout)
    assert pairs(path) == pairs(proxied)
    assert [p[0] for p in pairs(path)] == ["call_1", "call_2"]
    assert [p[3] for p in pairs(path)] and all("hello-" in (p[3] or "") for p in pairs(path))  # it ran them
    _no_findings(path)
    _replays(tmp_path, path)
    assert "does not record the tool definitions" in said
    check = runner.invoke(app, ["check", str(rollout)])                  # read directly, too
    assert check.exit_code == 0 and "no findings (3 recorded request(s)" in check.output, check.output


@pytest.fixture(autouse=True, scope="module")
def _installed():
    """Install (or find) both clients before the first test, so its time is not a test's."""
    for name in ("claude", "codex"):
        npm_clients.ensure(name)


def _tree_in_report_runs_and_replay(tmp_path, proxied, parent: str, child: str, call: str, tool: str,
                                    report_says: str) -> str:
    """The subagent ``child`` under ``parent``'s ``call`` (of ``tool``) in the report's tree, in
    `runs` and in replay's output (returned)."""
    main, sub = proxied
    report = runner.invoke(app, ["report", str(sub), "-o", str(tmp_path / "run.html")])
    assert report.exit_code == 0 and report_says in report.output, report.output
    tree = re.search(r'<nav class="tree" aria-label="agents">(.*?)</nav>',
                     (tmp_path / "run.html").read_text(encoding="utf-8")).group(1)
    p, c, k, t = map(re.escape, (parent, child, call, tool))
    assert re.fullmatch(   # the subagent's leaf inside the main agent's (collapsible) branch
        rf'<details open data-conversation="1"><summary><a href="#c\d">conversation 1 \({p}\)</a> '
        rf'<span class="agent a\d" data-agent="{p}">{p}</span> .*?</summary>'
        rf'<div class="leaf" data-conversation="2"><a href="#c\d">conversation 2 \({c}\)</a> '
        rf'<span class="agent a\d" data-agent="{c}">{c}</span> .*?'
        rf'<span class="how">started by call {k} \({t}\) in conversation 1</span></div></details>',
        tree), tree

    from agentdbg.transcript.runs import runs_dir

    runs_dir().mkdir(parents=True, exist_ok=True)
    for path in proxied:
        shutil.copy(path, runs_dir() / path.name)
    listing = runner.invoke(app, ["runs"], env={"COLUMNS": "120"})
    rows = [line.rstrip() for line in listing.output.splitlines() if line[:1].isdigit()]
    assert rows[0].split()[0] == "1" and f"completed      3  [{parent}]" in rows[0], rows
    assert rows[1].endswith(f"2  └─ {child} ← subagent from #1 (call {call})"), rows

    replay = runner.invoke(app, ["replay", str(main)])
    assert replay.exit_code == 0, replay.output
    assert f"── conversation 2 ({child}) ← started by call {call} ({tool}) in conversation 1" in replay.output
    return replay.output
