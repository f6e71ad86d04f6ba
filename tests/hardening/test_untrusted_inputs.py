"""Untrusted files and model output never crash, hang or exhaust memory (issue 11): deep
nesting, YAML alias bombs, and transcripts that are valid JSON with odd field types."""

import json
import resource
import subprocess
import sys
import time

import pytest
from recordings import recording_events, write_events
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
DEEP = "[" * 3000


# -- deep nesting ----------------------------------------------------------------------------

def test_deeply_nested_arguments_are_an_invalid_json_result_in_run(tmp_path):
    script = {"turns": [{"tool_calls": [{"name": "get_weather", "id": "c1", "arguments": DEEP}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script), encoding="utf-8")
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--json", "--send-anyway"])
    assert r.exit_code == 0, r.output
    result = json.loads(json.loads(r.stdout)["messages"][2]["content"])
    assert result["error"]["type"] == "invalid_json"
    # the view of the same: a warning under openai (OpenAI accepts such a history), so the run
    # goes on; vLLM rejects it, so under its profile the next request is blocked
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml"])
    assert r.exit_code == 0 and "internal error" not in r.output and "arguments-invalid-json" in r.output
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--profile", "vllm"])
    assert r.exit_code == 8 and "internal error" not in r.output


def test_deeply_nested_arguments_are_a_finding_in_check(tmp_path):
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "c1", "type": "function", "function": {"name": "f", "arguments": DEEP}}]},
                {"role": "tool", "tool_call_id": "c1", "content": DEEP}]
    (tmp_path / "m.json").write_text(json.dumps(messages), encoding="utf-8")
    for args in (["check", "m.json"], ["check", "m.json", "--json"]):
        r = runner.invoke(app, args)  # a warning under openai
        assert r.exit_code == 0 and "arguments-invalid-json" in r.stdout, r.output
        r = runner.invoke(app, [*args, "--profile", "vllm"])  # an error where vLLM serves it
        assert r.exit_code == 1 and "arguments-invalid-json" in r.stdout, r.output


def test_a_tool_printing_deeply_nested_json_is_an_error_result(tmp_path):
    tools = {"version": 1, "tools": [{
        "name": "deep", "description": "Use when asked.", "parameters": {"type": "object"},
        "handler": {"command": [sys.executable, "-c", f"print({DEEP + ']' * 3000!r})"]}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools), encoding="utf-8")
    script = {"turns": [{"tool_calls": [{"name": "deep", "id": "c1", "arguments": {}}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script), encoding="utf-8")
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--json"])
    assert r.exit_code == 0, r.output
    error = json.loads(json.loads(r.stdout)["messages"][2]["content"])["error"]
    assert error["type"] == "internal_error"


@pytest.mark.parametrize("arguments", [DEEP, "[" * 900 + "]" * 900, "[" * 250 + "]" * 250],
                         ids=["unparsable", "valid-900-deep", "valid-250-deep"])
def test_deeply_nested_arguments_in_a_run_s_own_transcript_are_shown_as_text(tmp_path, arguments):
    """report, diff and export read what run wrote: arguments too deep to parse (or to walk) are
    shown, compared and exported as their text, never an internal error."""
    script = {"turns": [{"tool_calls": [{"name": "get_weather", "id": "c1", "arguments": arguments}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script), encoding="utf-8")
    r = runner.invoke(app, ["run", "x", "--script", "s.yaml", "--save", "deep.jsonl"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["report", "deep.jsonl", "-o", "r.html"])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "[[[[[[[[[[" in page and "(JSON nested" in page       # the text, and why it is text
    r = runner.invoke(app, ["diff", "deep.jsonl", "deep.jsonl"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["export", "deep.jsonl", "--format", "otlp-json", "--content",
                            "-o", "e.json"])
    assert r.exit_code == 0, r.output
    assert json.dumps(arguments)[1:-1] in (tmp_path / "e.json").read_text(encoding="utf-8")
    for args in (["replay", "deep.jsonl"], ["replay", "--json", "deep.jsonl"], ["check", "deep.jsonl"]):
        r = runner.invoke(app, args)
        assert r.exit_code in (0, 1), r.output
        assert "internal error" not in r.output


# -- YAML -------------------------------------------------------------------------------------

def alias_bomb(levels: int = 9) -> str:
    """About 800 bytes that expand to 9**9 (387 million) strings."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def limited(args, cwd):
    """``agentdbg`` in a process that may use at most 1 GB of memory."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "agentdbg", *args], cwd=str(cwd), capture_output=True,
                       text=True, timeout=60, preexec_fn=cap)
    return r, time.monotonic() - start


@pytest.mark.parametrize("where", ["tools", "script"])
def test_a_yaml_alias_bomb_is_refused_in_one_line(tmp_path, where):
    if where == "tools":
        text = "version: 1\n" + alias_bomb() + ("tools:\n  - name: t\n    description: Use when asked.\n"
                                                "    handler: {fixture: *a8}\n")
        (tmp_path / "t.yaml").write_text(text, encoding="utf-8")
        args = ["run", "q", "--tools", "t.yaml"]
    else:
        text = "turns:\n" + "".join(f"  - content: hi\n    x{i}: {line.split(': ', 1)[1]}\n"
                                    for i, line in enumerate(alias_bomb().splitlines()))
        (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
        args = ["run", "q", "--script", "s.yaml"]
    assert len(text) < 1200
    r, took = limited(args, tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "aliases expand to more than" in r.stderr
    assert took < 30


def test_a_yaml_alias_that_contains_itself_is_refused(tmp_path):
    (tmp_path / "s.yaml").write_text("turns: &t\n  - content: hi\n    again: *t\n", encoding="utf-8")
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml"])
    assert r.exit_code == 2 and "refers to a value that contains it" in r.stderr


def test_ordinary_aliases_still_work_and_json_escapes_are_characters(tmp_path):
    (tmp_path / "t.yaml").write_text("""
version: 1
tools:
  - name: a
    description: Use when asked about a.
    parameters: &params {type: object, properties: {city: {type: string, description: "\\ud83d\\ude00"}}}
    handler: {fixture: {ok: 1}}
  - name: b
    description: Use when asked about b.
    parameters: *params
    handler: {fixture: {ok: 2}}
""", encoding="utf-8")
    r = runner.invoke(app, ["tools", "t.yaml", "--json"])
    assert r.exit_code == 0, r.output
    from agentdbg.toolspec import load_tools

    tools = load_tools(tmp_path / "t.yaml")
    assert tools.tools[1].parameters["properties"]["city"]["description"] == "😀"


# -- transcripts with odd field types ------------------------------------------------------------

def first(events, kind, **match):
    return next(e for e in events if e["type"] == kind and all(e.get(k) == v for k, v in match.items()))


MUTATIONS = {
    "options.max_turns is a string": (
        lambda ev: ev[0]["options"].__setitem__("max_turns", "x"), 1, "options.max_turns"),
    "a response message is a string": (
        lambda ev: first(ev, "response").__setitem__("message", "hello"), 3, "message"),
    "a request without prefix": (
        lambda ev: first(ev, "request").pop("prefix"), 2, "prefix"),
    "fail on an unknown tool": (
        lambda ev: first(ev, "action", action="fail").__setitem__("tool", "nope"), 4, "no tool 'nope'"),
    "edit an index out of range": (
        lambda ev: first(ev, "action", action="edit").__setitem__("index", 99), 6, "no message 99"),
    "usage.total_tokens is a string": (
        lambda ev: first(ev, "response")["usage"].__setitem__("total_tokens", "lots"), 3,
        "usage.total_tokens"),
    "a stop event whose messages are not objects": (
        lambda ev: ev[-1].__setitem__("messages", [1]), None, "messages"),
    "a tool call that is not an object": (
        lambda ev: first(ev, "response")["message"]["tool_calls"].__setitem__(0, "call"), 3,
        "message"),
    "an edit without the message": (
        lambda ev: first(ev, "action", action="edit").pop("after"), 6, "after"),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_odd_transcripts_are_one_line_errors_naming_line_and_field(tmp_path, name):
    mutate, line, field = MUTATIONS[name]
    events = recording_events()
    mutate(events)
    line = line or len(events)
    path = write_events(tmp_path / "t.jsonl", events)
    for args in (["replay", path], ["replay", path, "--json"], ["replay", path, "--step"]):
        r = runner.invoke(app, args, input="c\nq\n")
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.count("\n") == 1 and f"t.jsonl:{line}:" in r.stderr and field in r.stderr, \
            r.stderr
        if "--step" in args:  # found before the session starts, not halfway through it
            assert r.stdout == "", r.stdout


def test_the_unmutated_recording_replays(tmp_path):
    path = write_events(tmp_path / "t.jsonl", recording_events())
    for args in (["replay", path], ["check", path]):
        assert runner.invoke(app, args).exit_code == 0


def test_a_stop_event_without_messages_is_read_from_the_requests(tmp_path):
    events = recording_events()
    for key in ("messages", "prefix", "append"):   # version 1 held them whole, 2 as a request
        events[-1].pop(key, None)
    path = write_events(tmp_path / "t.jsonl", events)
    for args in (["replay", path], ["check", path], ["replay", path, "--json"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.output


# -- ids that are not strings ------------------------------------------------------------------

def _edit_tool_message_id(events, value):
    """The recorded edit changes the tool message instead: its tool_call_id becomes ``value``."""
    tool = [e for e in events if e["type"] == "request"][1]["append"][1]
    edit = first(events, "action", action="edit")
    edit.update(index=2, before=dict(tool), after=dict(tool, tool_call_id=value))


ODD_IDS = {
    "a tool message's tool_call_id is []": (
        lambda ev: [e for e in ev if e["type"] == "request"][1]["append"][1].__setitem__(
            "tool_call_id", []), "tool-message-missing-id"),
    "a tool message's tool_call_id is {}": (
        lambda ev: [e for e in ev if e["type"] == "request"][1]["append"][1].__setitem__(
            "tool_call_id", {}), "tool-message-missing-id"),
    "a response's call id is []": (
        lambda ev: first(ev, "response", turn=2)["message"]["tool_calls"][0].__setitem__("id", []),
        "tool-call-missing-id"),
    "a response's call id is {}": (
        lambda ev: first(ev, "response", turn=2)["message"]["tool_calls"][0].__setitem__("id", {}),
        "tool-call-missing-id"),
    "an edit sets a tool_call_id to {}": (
        lambda ev: _edit_tool_message_id(ev, {}), "tool-message-missing-id"),
}


@pytest.mark.parametrize("name", list(ODD_IDS))
def test_ids_that_are_not_strings_are_findings_never_internal_errors(tmp_path, name):
    """An id is data of any JSON type: replay draws it, the checker names it with its rules."""
    mutate, rule = ODD_IDS[name]
    events = recording_events()
    mutate(events)
    path = write_events(tmp_path / "t.jsonl", events)
    for args in (["replay", path], ["replay", path, "--json"], ["check", path], ["check", path, "--json"],
                 ["report", path, "-o", "r.html"], ["diff", path, path],
                 ["export", path, "--format", "otlp-json", "--content", "-o", "e.json"]):
        r = runner.invoke(app, args)
        assert r.exit_code in (0, 1), (args, r.output)
        assert "internal error" not in r.output, (args, r.output)
    # the recorded requests (check) or what the replay sends are judged by the rules that name
    # the broken id
    said = runner.invoke(app, ["check", path]).output + runner.invoke(app, ["replay", path]).output
    assert rule in said, said


@pytest.mark.parametrize("body", [
    {"model": "m", "messages": [{"role": "user", "content": "q"}],
     "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
     "tool_choice": {"type": "function", "function": {"name": []}}},
    {"model": "m", "input": "q", "tools": [{"type": "function", "name": "f", "parameters": {}}],
     "tool_choice": {"type": "function", "name": {"a": 1}}},
    {"model": "m", "input": "q", "tools": [{"type": "function", "name": ["f"], "parameters": {}}],
     "tool_choice": {"type": "function", "name": "f"}},
    {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}],
     "tools": [{"name": "f", "input_schema": {"type": "object"}}],
     "tool_choice": {"type": "tool", "name": []}},
], ids=["chat", "responses", "responses-tool-name", "anthropic"])
def test_a_tool_choice_naming_something_that_is_not_a_string_is_a_finding(tmp_path, body):
    (tmp_path / "b.json").write_text(json.dumps(body), encoding="utf-8")
    r = runner.invoke(app, ["check", "b.json"])
    assert r.exit_code == 1 and "bad-tool-choice" in r.stdout, r.output


def test_a_recorded_mcp_server_named_by_a_list_is_named_in_a_live_replay(tmp_path):
    from support import ROOT

    events = recording_events()
    events[0]["mcp_servers"] = [{"name": [], "transport": "stdio", "command": "x", "args": []}]
    path = write_events(tmp_path / "t.jsonl", events)
    r = runner.invoke(app, ["replay", path, "--live-tools",
                            "--tools", str(ROOT / "tools.yaml")])
    assert r.exit_code == 0, r.output
    assert "the recording used MCP server '[]' (--mcp 'x')" in r.stderr


# -- values nested deeper than Python's stack ----------------------------------------------------

def nested(depth: int, leaf):
    """``[[[…leaf…]]]`` ``depth`` lists deep, built without parsing."""
    value = [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value


def test_an_event_nested_past_the_stack_is_redacted_and_written_whole(tmp_path):
    from agentdbg.transcript import Redactor, TranscriptWriter
    from agentdbg.transcript.events import Header

    key = "sk-deep-0123456789abcdefghij"
    writer = TranscriptWriter(tmp_path / "t.jsonl", Header(model="m"), Redactor(secrets=[key]))
    writer("note", {"content": nested(5000, {"k": f"the key {key}", "n": 1.5, "ok": True})})
    writer.close()
    line = (tmp_path / "t.jsonl").read_text(encoding="utf-8").split("\n")[1]
    assert key not in line
    assert line.endswith('"content": ' + "[" * 5000 + '{"k": "the key [REDACTED]", "n": 1.5, '
                         '"ok": true}' + "]" * 5000 + "}")


def test_deep_json_writes_what_json_dumps_writes():
    import datetime

    from agentdbg.messages import deep_json

    values = [{"a": [1, 2.5, True, None, {"b": "é\ud800\n\""}], "c": (1,), 1: "x", None: 2, 2.5: 3},
              [], {}, "x", 10 ** 30, float("inf"), -0.0, {"d": datetime.date(2020, 1, 1)}]
    for value in values:
        for ascii_only in (False, True):
            assert deep_json(value, ascii_only=ascii_only, default=str) == \
                json.dumps(value, ensure_ascii=ascii_only, default=str)


def test_wire_keys_are_stripped_at_any_depth():
    from agentdbg.wire.common import strip_wire

    value = {"role": "user", "wire": {"x": 1}, "content": nested(5000, {"wire": 1, "text": "t"})}
    stripped = strip_wire(value)
    assert "wire" not in stripped
    inner = stripped["content"]
    for _ in range(5000):
        inner = inner[0]
    assert inner == {"text": "t"}


@pytest.mark.parametrize("body", [
    {"model": "m", "input": [{"role": "user", "content": "q"}, {"type": [], "call_id": "c1"},
                             {"type": "message", "role": "user", "content": [{"type": {}}]}]},
    {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": []}]},
                                                 {"role": "assistant", "content": [{"type": {"a": 1}}]}]},
], ids=["responses", "anthropic"])
def test_an_item_or_block_type_that_is_not_a_string_is_data(tmp_path, body):
    (tmp_path / "b.json").write_text(json.dumps(body), encoding="utf-8")
    for args in (["check", "b.json"], ["check", "b.json", "--json"]):
        r = runner.invoke(app, args)
        assert r.exit_code in (0, 1) and "internal error" not in r.output, r.output


def test_a_streamed_item_whose_type_is_a_list_is_read():
    from agentdbg.wire.responses_stream import ResponsesAccumulator

    acc = ResponsesAccumulator()
    acc.feed(b'event: response.output_item.added\ndata: {"type": "response.output_item.added", '
             b'"item": {"type": []}, "output_index": 0}\n\n')
    acc.close()
    assert acc.message["role"] == "assistant" and isinstance(acc.shape(), list)
