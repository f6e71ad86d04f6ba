"""Nothing hostile reaches the terminal, whatever field it came in (issue 11).

Every field a model endpoint, a tool or a transcript can set carries hostile text; every
output path is read — the run view, step mode (with --explain), replay, check, runs, the
proxy's console, stderr warnings and errors — with colour off and on.
"""

import io
import json
import os
import subprocess
import sys

import pytest
from hostile import HIDDEN, HOSTILE, assert_inert
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from proxy_helpers import COMPLETION, Proxy, Upstream
from rich.console import Console
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.render.safe import safe

runner = CliRunner()
COLOURS = [{}, {"FORCE_COLOR": "1", "NO_COLOR": None}]
EVIL_NAME = "evil\x1b]52;c;eA==\x07\U000e0041"
EVIL_ID = "call_\x1b[2J\u202e1"


@pytest.mark.parametrize("ch", ["\x1b", "\r", "\x08", "\x07", "\x9b", "\u202e", "\u2066", "\u200b",
                                "\u2060", "\ufeff", "\U000e0001", "\U000e0041", "\U000e007f", "\u00ad",
                                "\u2061", "\u2064", "\ufff9", "\ufffa", "\ufffb", "\u180e", "\u3164",
                                "\u115f", "\uffa0", "\u2028", "\u2029", "\u061c", "\u206a",
                                "\U0001d173", "\U000e0100", "\ud800", "\u034f"])
def test_each_invisible_or_control_character_is_made_visible(ch):
    shown = safe(f"a{ch}b")
    assert ch not in shown and "\\" in shown


def test_ordinary_text_and_emoji_are_left_alone():
    text = "中文 é ❤\ufe0f 👍🏽 tab\tnew\nline"
    assert safe(text) == text
    assert safe("a\ufe0f\ufe0f\ufe0f") == "a\ufe0f\\ufe0f\\ufe0f"  # a run of selectors hides bytes


# -- a model endpoint ----------------------------------------------------------------------

TOOLS = """
version: 1
tools:
  - name: evil
    description: Use when asked.
    parameters: {type: object, properties: {}}
    handler: {fixture: {"ok": 1}}
"""


def hostile_model(upstream):
    """Turn 1: a call with a hostile id and name; turn 2: hostile text everywhere."""
    turns = iter([
        {**COMPLETION, "id": HOSTILE, "model": HOSTILE, "choices": [{
            "index": 0, "finish_reason": HOSTILE, "message": {
                "role": "assistant", "content": HOSTILE, "reasoning_content": HOSTILE,
                "tool_calls": [{"id": EVIL_ID, "type": "function", "function": {
                    "name": EVIL_NAME, "arguments": json.dumps({HOSTILE: HOSTILE})}}]}}]},
        {**COMPLETION, "choices": [{"index": 0, "finish_reason": HOSTILE,
                                    "message": {"role": "assistant", "content": HOSTILE,
                                                "refusal": HOSTILE}}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    ])

    def reply(handler, body):
        upstream.send(handler, 200, json.dumps(next(turns, COMPLETION)).encode())
    upstream.reply = reply


@pytest.mark.parametrize("env", COLOURS)
def test_fields_a_model_endpoint_sets(tmp_path, env):
    upstream = Upstream()
    try:
        hostile_model(upstream)
        (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")
        r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", upstream.url,
                                "--api-key", "sk-test-0123456789abcdefgh", "--debug",
                                "--save", "t.jsonl"], env=env)
    finally:
        upstream.stop()
    assert r.exit_code == 8, r.output  # the hostile name breaks the protocol: not sent on
    assert_inert(r.stdout + r.stderr)
    assert "unknown tool" in r.stdout  # the hostile name really was shown, escaped
    for args in (["replay", "t.jsonl"], ["check", "t.jsonl"], ["runs"]):
        out = runner.invoke(app, args, env=env)
        assert out.exit_code in (0, 1, 8), out.output  # 8: replayed as recorded (not sent)
        assert_inert(out.stdout + out.stderr)


def step(session, commands, *, color=False, explain=True, replay=None):
    from agentdbg.options import RunOptions
    from agentdbg.repl.debugger import Debugger

    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("".join(c + "\r" for c in commands) + "quit\r")
        pipe.close()
        options = RunOptions(model_desc="", model="m", provider_name="p", explain=explain)
        Debugger(session, Console(file=buf, width=120, no_color=not color, force_terminal=color),
                 options=options, input=pipe, output=DummyOutput(), history=False,
                 replay=replay).loop()
    return buf.getvalue()


@pytest.mark.parametrize("color", [False, True])
def test_step_mode_and_its_narration(tmp_path, color):
    from support import scripted

    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.toolspec import load_tools

    (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")
    model = scripted({"tool_calls": [{"name": EVIL_NAME, "id": EVIL_ID, "arguments": {"x": HOSTILE}}]},
                     {"content": HOSTILE})
    session = Session.for_question(model, load_tools("tools.yaml"), HOSTILE,
                                   RunConfig(approve="ask", stop_on_invalid=False))
    out = step(session, ["n", "n", "messages", "show 1", "show 2", "tools", "usage", "n", "n"],
               color=color)
    assert_inert(out)
    assert "The model asked for 1 call(s)" in out  # the narration with the hostile name ran


# -- tools ---------------------------------------------------------------------------------

FAILING = f"""
version: 1
tools:
  - name: cmd
    description: Use when asked.
    parameters: {{type: object, properties: {{}}}}
    handler:
      command: [{json.dumps(sys.executable)}, -c, {json.dumps(
          "import json, sys; sys.stderr.write(" + repr(HOSTILE) + "); print(json.dumps("
          "{'ok': False, 'error': {'type': " + repr(HOSTILE) + ", 'message': " + repr(HOSTILE) + "}}))")}]
  - name: bad_exit
    description: Use when asked.
    parameters: {{type: object, properties: {{}}}}
    handler:
      command: [{json.dumps(sys.executable)}, -c, {json.dumps(
          "import sys; sys.stderr.write(" + repr(HOSTILE) + "); sys.exit(3)")}]
  - name: raises
    description: Use when asked.
    parameters: {{type: object, properties: {{}}}}
    handler: {{python: "hostile_handler:boom"}}
"""
SCRIPT = {"turns": [{"tool_calls": [{"name": "cmd", "id": "c1", "arguments": {}},
                                    {"name": "bad_exit", "id": "c2", "arguments": {}},
                                    {"name": "raises", "id": "c3", "arguments": {}}]},
                    {"content": "done"}]}


@pytest.mark.parametrize("env", COLOURS)
def test_fields_a_tool_sets(tmp_path, env):
    (tmp_path / "tools.yaml").write_text(FAILING, encoding="utf-8")
    (tmp_path / "hostile_handler.py").write_text(
        f"def boom():\n    raise RuntimeError({HOSTILE!r})\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text(json.dumps(SCRIPT), encoding="utf-8")
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "tools.yaml", "--debug",
                            "--save", "t.jsonl"],
                      env=env)
    assert r.exit_code == 0, r.output
    assert_inert(r.stdout + r.stderr)
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().split("\n") if line]
    assert {e.get("error_type") for e in events if e["type"] == "tool"} >= {HOSTILE}  # data kept
    for args in (["replay", "t.jsonl"], ["replay", "t.jsonl", "--live-tools", "--tools",
                                         "tools.yaml"]):
        out = runner.invoke(app, args, env=env)
        assert_inert(out.stdout + out.stderr)


# -- transcripts -----------------------------------------------------------------------------

def recorded(tmp_path) -> list[dict]:
    (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")
    script = {"turns": [{"tool_calls": [{"name": "evil", "id": "c1", "arguments": {}}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script), encoding="utf-8")
    runner.invoke(app, ["run", "q", "--script", "s.yaml", "--save", "rec.jsonl"])
    return [json.loads(line) for line in (tmp_path / "rec.jsonl").read_text().split("\n") if line]


def write(path, events):
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                    encoding="utf-8")
    return path


def hostile_recording(tmp_path):
    events = recorded(tmp_path)
    header = events[0]
    header.update(model=HOSTILE, provider=HOSTILE, base_url=HOSTILE, question=HOSTILE,
                  tools_file=HOSTILE, created=HOSTILE, agentdbg_version=HOSTILE)
    header["tools"][0]["function"]["description"] = HOSTILE
    for e in events[1:]:
        if e["type"] == "response":
            e.update(finish_reason=HOSTILE, note=HOSTILE)
        elif e["type"] == "tool":
            e.update(error_type=HOSTILE, note=HOSTILE, detail=HOSTILE, name=HOSTILE, ok=False)
        elif e["type"] == "stop":
            e.update(detail=HOSTILE)
    return write(tmp_path / "hostile.jsonl", events)


@pytest.mark.parametrize("env", COLOURS)
def test_fields_a_transcript_sets(tmp_path, env):
    path = hostile_recording(tmp_path)
    for args in (["replay", str(path)], ["replay", str(path), "--json"], ["check", str(path)],
                 ["replay", str(path), "--live-tools", "--tools", "tools.yaml"]):
        r = runner.invoke(app, args, env=env)
        assert r.exit_code in (0, 1), (args, r.output)
        assert_inert(r.stderr + (r.stdout if "--json" not in args else ""))
    home_runs = tmp_path / "agentdbg-home" / "runs"
    home_runs.mkdir(parents=True, exist_ok=True)
    (home_runs / "hostile.jsonl").write_bytes(path.read_bytes())
    r = runner.invoke(app, ["runs"], env=env)
    assert r.exit_code == 0 and "[bold red]PWNED" in r.stdout.replace("\n", "")
    assert_inert(r.stdout)


def test_a_transcript_in_step_mode(tmp_path):
    from agentdbg.engine.replaying import Replay, replay_session

    session, model = replay_session(hostile_recording(tmp_path))
    session.config.stop_on_invalid = False
    out = step(session, ["n", "n", "messages", "show 2", "usage", "n", "c"],
               replay=Replay(session, model))
    assert_inert(out)


def test_divergence_paths_built_from_json_keys(tmp_path):
    events = recorded(tmp_path)
    second = next(e for e in events if e["type"] == "request" and e["turn"] == 2)
    second["append"][-1][HOSTILE] = HOSTILE  # the recorded tool message has a key replay lacks
    r = runner.invoke(app, ["replay", str(write(tmp_path / "d.jsonl", events))])
    assert "replay diverged" in r.stderr and r.exit_code == 1
    assert_inert(r.stdout + r.stderr)


def test_warning_lines_built_from_file_names(tmp_path):
    events = recorded(tmp_path)
    name = "t\x1b]52;c;eA==\x07\u202e\U000e0041.jsonl"
    path = write(tmp_path / name, events)
    path.write_text(path.read_text(encoding="utf-8")[:-30], encoding="utf-8")  # a cut last line
    for args in (["replay", name], ["check", name]):
        r = runner.invoke(app, args)
        assert "last line is truncated" in r.stderr, r.output
        assert_inert(r.stdout + r.stderr)
    r = runner.invoke(app, ["replay", name + "\x1b[2J-missing"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert_inert(r.stderr)


def test_hidden_characters_survive_as_data(tmp_path):
    # escaped on screen, kept exactly in the data: --json and the transcript hold them as sent
    (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")
    r = runner.invoke(app, ["run", HIDDEN, "--json", "--save", "t.jsonl"])
    assert json.loads(r.stdout)["messages"][0]["content"] == HIDDEN
    assert json.loads((tmp_path / "t.jsonl").read_text().split("\n")[0])["question"] == HIDDEN


# -- the proxy's console ---------------------------------------------------------------------

def test_the_proxy_console(tmp_path):
    upstream = Upstream()
    hostile_model(upstream)
    proxy = Proxy(upstream.url, tmp_path)
    try:
        body = {"model": HOSTILE, "messages": [{"role": "user", "content": HOSTILE},
                                                {"role": HOSTILE, "content": HOSTILE}],
                "tools": [{"type": "function", "function": {"name": EVIL_NAME, "parameters": {
                    "type": "object", "properties": {HOSTILE: {"type": "string"}}}}}]}
        for _ in range(2):
            subprocess.run([sys.executable, "-c", (
                "import json, sys, urllib.request\n"
                "req = urllib.request.Request(sys.argv[1] + '/chat/completions', sys.argv[2].encode(),"
                " {'content-type': 'application/json'})\n"
                "try:\n    urllib.request.urlopen(req, timeout=30).read()\n"
                "except Exception:\n    pass\n"), proxy.url, json.dumps(body)],
                check=True, timeout=60, env={**os.environ})
            body["messages"][1] = {"role": "assistant", "content": HOSTILE}
    finally:
        out = proxy.stop()
        upstream.stop()
    assert "request 2" in out
    assert_inert(out)


FILLERS = "\u3164\u115f\u1160\uffa0\u034f"  # blank fillers Python's repr leaves as they are


@pytest.mark.parametrize("env", COLOURS)
def test_lines_naming_the_servers_a_recording_used(tmp_path, env):
    """The recorded MCP server's name and command, in replay's warnings, errors and header."""
    events = recorded(tmp_path)
    events[0]["mcp_servers"] = [{"name": "ti\u3164me\u115f\u1160\uffa0\u034f\ufe0f", "transport": "stdio",
                                 "command": "python", "args": ["-m", f"mcp_{FILLERS}\ufe0f\ufe0f" + HOSTILE]}]
    path = str(write(tmp_path / "m.jsonl", events))
    for args, status in ((["replay", path, "--live-tools", "-t", "tools.yaml"], 0),  # a warning
                         (["replay", path, "--live-tools"], 2), (["replay", path], 0)):  # an error
        r = runner.invoke(app, args, env=env)
        assert r.exit_code == status, (args, r.output)
        out = r.stdout + r.stderr
        assert "ti\\u3164me\\u115f\\u1160\\uffa0\\u034f" in out.replace("\n", ""), out
        assert_inert(out)
        assert not set(FILLERS) & set(out) and "\ufe0f\ufe0f" not in out, ascii(out)
