"""Hostile text is shown literally or visibly escaped in every view, with and without colour."""

import io
import json

import pytest
from hostile import HOSTILE, assert_inert
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
TOOLS = f"""
version: 1
tools:
  - name: evil
    description: Returns hostile text. Use when the user says evil.
    handler:
      fixture: {json.dumps({"note": HOSTILE})}
"""


@pytest.fixture
def hostile_tools(tmp_path):
    (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")
    return tmp_path / "tools.yaml"


@pytest.mark.parametrize("color", [False, True])
def test_run_view(hostile_tools, color):
    env = {"FORCE_COLOR": "1", "NO_COLOR": None} if color else {}
    r = runner.invoke(app, ["run", "evil " + HOSTILE], env=env)
    assert r.exit_code == 0, r.output
    assert_inert(r.stdout)
    assert "[bold red]PWNED[/bold red]" in r.stdout and "\\x1b]52;c;" in r.stdout
    if color:
        assert "\x1b[" in r.stdout  # colour really was on: only Rich's own codes got out


def test_step_view(hostile_tools):
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.repl.debugger import Debugger
    from agentdbg.toolspec import load_tools

    s = Session.for_question(OfflineModel(), load_tools(hostile_tools), "evil " + HOSTILE,
                             RunConfig(approve="ask", stop_on_invalid=False),
                             precheck=check_model_request)
    for color in (False, True):
        buf = io.StringIO()
        with create_pipe_input() as pipe:
            pipe.send_text("c\rmessages\rshow 2\rinject 2 " + json.dumps({"x": HOSTILE}) + "\r")
            pipe.close()
            Debugger(s, Console(file=buf, width=100, no_color=not color, force_terminal=color),
                     input=pipe, output=DummyOutput(), history=False).loop()
        assert_inert(buf.getvalue())
        assert "[link=https://evil.example]" in buf.getvalue()


def test_check_view_and_json(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"role": "user", "content": HOSTILE},
                             {"role": "tool", "tool_call_id": HOSTILE, "content": HOSTILE}]))
    r = runner.invoke(app, ["check", str(p)])
    assert r.exit_code == 1
    assert_inert(r.stdout)
    doc = json.loads(runner.invoke(app, ["check", str(p), "--json"]).stdout)
    assert doc["findings"][0]["tool_call_id"] == HOSTILE  # JSON keeps the data exactly


def test_replay_view(hostile_tools, tmp_path):
    path = tmp_path / "h.jsonl"
    runner.invoke(app, ["run", "evil " + HOSTILE, "--save", str(path)])
    r = runner.invoke(app, ["replay", str(path)])
    assert r.exit_code == 0
    assert_inert(r.stdout)


def test_live_tools_diff(hostile_tools, tmp_path):
    path = tmp_path / "h.jsonl"
    runner.invoke(app, ["run", "evil", "--save", str(path)])
    hostile_tools.write_text(TOOLS.replace("PWNED", "PWNED2"), encoding="utf-8")
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", str(hostile_tools)])
    assert "1 different" in r.stdout
    assert_inert(r.stdout)


def test_error_messages(tmp_path):
    bad = tmp_path / ("tools\x1b]52;c;x\x07.yaml")
    bad.write_text("version: 1\ntools:\n  - name: x\x1b[2J\n", encoding="utf-8")
    r = runner.invoke(app, ["run", "q", "--tools", str(bad)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert_inert(r.stderr)
    assert "\\x1b]52" in r.stderr
    assert ":3:" in r.stderr  # the line of the control character


def test_tools_table_titles_are_not_markup(tmp_path):
    folder = tmp_path / "[bold]x[" / "bold]"
    folder.mkdir(parents=True)
    (folder / "tools.yaml").write_text(
        "version: 1\ntools:\n  - {name: t, description: Use when testing., handler: {fixture: 1}}\n")
    r = runner.invoke(app, ["tools", str(folder / "tools.yaml")])
    assert "[bold]x[/bold]" in r.stdout.replace("\n", "")
