"""Your own handler's exception is shown to you, never to the model: the model sees only the
sanitized error, the developer sees the exception's type, message and the handler's file:line in
the view, step mode's ``show``, replay and the report (``--debug`` adds the traceback); ``run``
warns at start about a handler whose signature cannot take the schema's parameters."""

from __future__ import annotations

import json
import sys

import pytest
from test_repl import drive, session_for
from typer.testing import CliRunner

from agentdbg.cli import app

TOOLS = """
version: 1
tools:
  - name: get_weather
    description: Current weather for a city. Use when the user asks about the weather.
    parameters:
      type: object
      properties: {city: {type: string, description: the city, examples: [Paris]}}
      required: [city]
    handler: {python: "mytools:get_weather"}
"""
NO_CITY = "def get_weather():\n    return {'temp': 20}\n"
RAISES = "def get_weather(city):\n    table = {}\n    return table[city]\n"
QUESTION = "weather in Paris?"


@pytest.fixture
def project(write_file, monkeypatch):
    def make(handler: str):
        monkeypatch.delitem(sys.modules, "mytools", raising=False)  # CliRunner runs in this process
        write_file("mytools.py", handler)
        return write_file("tools.yaml", TOOLS)
    return make


def run(*args: str):
    # named: a ./tools.yaml agentdbg only found would import nothing until trusted
    return CliRunner().invoke(app, ["run", QUESTION, "--tools", "tools.yaml", *args])


def test_the_view_names_the_exception_and_the_model_sees_only_the_error(project):
    project(NO_CITY)
    r = run("--save", "t.jsonl")
    flat = " ".join(r.stdout.split())
    assert ("error: internal_error · raised TypeError: get_weather() got an unexpected keyword "
            "argument 'city' (mytools.py:1)") in flat
    sent = [m for m in json.loads(run("--json").stdout)["messages"] if m["role"] == "tool"]
    assert "TypeError" not in sent[0]["content"] and "mytools" not in sent[0]["content"]
    assert json.loads(sent[0]["content"])["error"]["type"] == "internal_error"


def test_run_warns_at_start_about_a_signature_that_cannot_take_the_parameters(project):
    project(NO_CITY)
    r = run("--json")
    assert r.stderr.startswith("agentdbg: warning: tools.yaml:")
    assert "takes no parameter 'city'" in r.stderr and "handler-signature-mismatch" in r.stderr
    project("def get_weather(city):\n    return {'temp': 20}\n")
    assert "warning" not in run("--json").stderr


def test_an_exception_inside_the_handler_points_at_its_line(project):
    project(RAISES)
    r = run()
    assert "raised KeyError: 'Paris' (mytools.py:3)" in " ".join(r.stdout.split())
    assert "Traceback" not in r.stdout
    debug = run("--debug")
    assert "Traceback" in debug.stdout and 'mytools.py", line 3' in debug.stdout


def test_replay_and_the_report_show_the_recorded_exception(project, tmp_path):
    project(RAISES)
    assert run("--save", "t.jsonl").exit_code == 0
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["cause"] for e in events if e["type"] == "tool"] == ["KeyError: 'Paris' (mytools.py:3)"]
    replay = CliRunner().invoke(app, ["replay", "t.jsonl"])
    assert "raised KeyError: 'Paris' (mytools.py:3)" in " ".join(replay.stdout.split())
    assert CliRunner().invoke(app, ["report", "t.jsonl", "-o", "r.html"]).exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert "raised KeyError: &#x27;Paris&#x27; (mytools.py:3)" in page


def test_show_in_step_mode_names_the_exception(project, tools_from):
    project(RAISES)
    from agentdbg.toolspec import load_tools

    s = session_for(load_tools("tools.yaml"), question=QUESTION)
    _, out, _ = drive(s, "", "", "show 2", "quit")
    assert "the handler raised KeyError: 'Paris' (mytools.py:3)" in out
    assert "--debug prints the traceback" in out
