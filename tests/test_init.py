"""``agentdbg init`` starts a project that lints clean and runs offline, never overwrites a file,
and turns a tools JSON an app already has into a tools.yaml with a handler to fill per tool;
``--tools`` reads such a JSON as it is (its tools have no handler: a call is a no_handler result)."""

from __future__ import annotations

import ast
import json
import sys

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
WEATHER_JSON = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city. Use when asked about weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "examples": ["Paris"],
                                                             "description": "the city"}},
                   "required": ["city"]}}}]


@pytest.fixture(autouse=True)
def fresh_handlers(monkeypatch):
    monkeypatch.delitem(sys.modules, "handlers", raising=False)  # CliRunner runs in this process


def test_init_writes_a_project_that_lints_clean_and_runs_offline(tmp_path):
    r = runner.invoke(app, ["init"])
    assert r.exit_code == 0, r.output
    assert "wrote tools.yaml (1 tool(s): get_weather) and handlers.py" in r.stdout
    text = (tmp_path / "tools.yaml").read_text()
    assert text.startswith("# ") and "handler: {python: \"handlers:get_weather\"}" in text
    lint = runner.invoke(app, ["tools", "--json"])
    assert lint.exit_code == 0 and json.loads(lint.stdout)["findings"] == []
    run = json.loads(runner.invoke(app, ["run", "What's the weather in Paris?", "--json"]).stdout)
    assert run["stop_reason"] == "completed" and run["tools_file"] == "tools.yaml"
    result = json.loads(next(m for m in run["messages"] if m["role"] == "tool")["content"])
    assert result == {"city": "Paris", "temperature_c": 18, "condition": "cloudy"}


def test_init_never_overwrites(tmp_path):
    (tmp_path / "handlers.py").write_text("# mine\n")
    r = runner.invoke(app, ["init"])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        f"agentdbg: error: {'handlers.py'} already exists; init never overwrites a file: move it "
        "away or run init in another folder"]
    assert (tmp_path / "handlers.py").read_text() == "# mine\n" and not (tmp_path / "tools.yaml").exists()


@pytest.mark.parametrize("shape", ["array", "object"])
def test_run_reads_a_tools_json_and_answers_its_calls_with_no_handler(tmp_path, shape):
    data = WEATHER_JSON if shape == "array" else {"tools": WEATHER_JSON}
    (tmp_path / "tools.json").write_text(json.dumps(data))
    listed = runner.invoke(app, ["tools", "tools.json", "--json"])
    assert listed.exit_code == 0 and [t["function"]["name"] for t in json.loads(listed.stdout)["tools"]] == ["get_weather"]
    run = json.loads(runner.invoke(app, ["run", "weather in Paris?", "--tools", "tools.json", "--json"]).stdout)
    call = next(m for m in run["messages"] if m["role"] == "assistant")["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}   # checked and called
    error = json.loads(next(m for m in run["messages"] if m["role"] == "tool")["content"])["error"]
    assert error["type"] == "no_handler"


def test_a_tools_json_that_is_not_function_tools_is_one_line(tmp_path):
    (tmp_path / "tools.json").write_text('{"tools": [{"type": "function"}]}')
    r = runner.invoke(app, ["tools", "tools.json"])
    assert r.exit_code == 2 and r.stderr.startswith("agentdbg: error: tools.json:1:")
    assert "must be a function tool" in r.stderr


def test_init_from_a_tools_json_gives_each_tool_a_handler_to_fill(tmp_path):
    tools = WEATHER_JSON + [{"type": "function", "function": {
        "name": "book-room", "description": "Book a room. Use when asked to book.",
        "parameters": {"type": "object", "properties": {
            "room": {"type": "string"}, "from": {"type": "string"}, "note": {"type": "string"},
            "x\"\"\"); import os; (\"": {"type": "string"}}, "required": ["room", "from"]}}}]
    (tmp_path / "app_tools.json").write_text(json.dumps({"tools": tools}))
    r = runner.invoke(app, ["init", "proj", "--from", "app_tools.json"])
    assert r.exit_code == 0, r.output
    source = (tmp_path / "proj" / "handlers.py").read_text()
    tree = ast.parse(source)                                  # valid Python, nothing injected
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["get_weather", "book_room"]
    assert not any(isinstance(n, ast.Import) and n.names[0].name == "os" for n in ast.walk(tree))
    assert "def book_room(*, room, note=None, **rest):" in source   # 'from' and the odd name: **rest
    lint = runner.invoke(app, ["tools", "proj/tools.yaml", "--json"])
    found = json.loads(lint.stdout)["findings"]
    assert lint.exit_code == 0 and not [f for f in found if f["rule"].startswith("handler-")], found
    run = json.loads(runner.invoke(app, ["run", "weather in Paris?", "--tools", "proj/tools.yaml",
                                         "--json"]).stdout)
    error = json.loads(next(m for m in run["messages"] if m["role"] == "tool")["content"])["error"]
    assert error["type"] == "not_implemented" and "fill in get_weather() in handlers.py" in error["message"]
