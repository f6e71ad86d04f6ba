"""`agentdbg check` on the three wire formats: the format is recognised per document (or forced
with --format), findings point into the format's own structure with the real API's words, a
transcript is judged by the requests it recorded, and skipped tool checks are said."""

import json

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.transcript import Redactor, TranscriptWriter
from agentdbg.transcript.events import Header

runner = CliRunner()
Q = {"role": "user", "content": "北京和上海哪个更热?"}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

# the same bug in each format: the second call's result was never appended
CHAT = {"model": "gpt-4.1", "messages": [
    Q, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"t": 24}'},
    {"role": "user", "content": "快点回答"}]}
RESPONSES = {"model": "gpt-4.1", "input": [
    Q,
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "北京"}'},
    {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": '{"city": "上海"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": '{"t": 24}'},
    {"role": "user", "content": "快点回答"}]}
ANTHROPIC = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": [
    Q, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "北京"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "上海"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"t": 24}'},
                                 {"type": "text", "text": "快点回答"}]}]}


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(p)


def check(*args):
    return runner.invoke(app, ["check", *args])


def findings(*args):
    r = check(*args, "--json")
    return r.exit_code, json.loads(r.stdout)


def test_the_same_forgotten_result_is_caught_in_all_three_formats(tmp_path):
    expected = {
        "chat": (1, None, "An assistant message with 'tool_calls' must be followed by tool messages "
                          "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                          "response messages: call_2 (param: messages.[1].role)"),
        "responses": (2, "input[2]", "No tool output found for function call call_2."),
        "anthropic": (1, "messages[1].content[1]",
                      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
                      "after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` "
                      "block in the next message."),
    }
    for name, body in (("chat", CHAT), ("responses", RESPONSES), ("anthropic", ANTHROPIC)):
        code, doc = findings(write(tmp_path, f"{name}.json", body))
        assert code == 1 and doc["ok"] is False, name
        (f,) = doc["findings"]
        index, path, api = expected[name]
        assert (f["rule"], f["index"], f.get("path"), f["api_error"]) == \
            ("missing-tool-response", index, path, api), name


def test_the_views_read_alike(tmp_path):
    outs = {name: check(write(tmp_path, f"{name}.json", body)).stdout
            for name, body in (("chat", CHAT), ("responses", RESPONSES), ("anthropic", ANTHROPIC))}
    assert "→ A call_1  get_weather   ✓ answered at [2]" in outs["chat"]
    assert "→ B call_2  get_weather   ✗ unanswered" in outs["chat"]
    assert "→ A call_1  get_weather   ✓ answered at [3]" in outs["responses"]
    assert "← A call_1  get_weather   ✓ answers [1]" in outs["responses"]
    assert "→ B call_2  get_weather   ✗ unanswered" in outs["responses"]
    assert "→ A toolu_1  get_weather   ✓ answered at [2].content[0]" in outs["anthropic"]
    assert "→ B toolu_2  get_weather   ✗ unanswered" in outs["anthropic"]
    for out in outs.values():
        assert "✗ error missing-tool-response" in out and "✗ 1 error(s), 0 warning(s)" in out


def test_a_bare_input_array_and_jsonl_of_mixed_formats(tmp_path):
    code, doc = findings(write(tmp_path, "input.json", RESPONSES["input"]))
    assert code == 1 and doc["findings"][0]["path"] == "input[2]"
    lines = "\n".join(json.dumps(b, ensure_ascii=False) for b in (CHAT, RESPONSES, ANTHROPIC))
    code, doc = findings(write(tmp_path, "mixed.jsonl", lines))
    assert [(f["line"], f["rule"], f.get("path")) for f in doc["findings"]] == [
        (1, "missing-tool-response", None), (2, "missing-tool-response", "input[2]"),
        (3, "missing-tool-response", "messages[1].content[1]")]


def test_format_forces_how_an_ambiguous_document_is_read(tmp_path):
    doc = [Q, {"role": "assistant", "content": [{"type": "text", "text": ""}]}, {"role": "user", "content": "?"}]
    path = write(tmp_path, "ambiguous.json", doc)
    assert findings(path) == (0, {"ok": True, "findings": []})      # valid Chat Completions
    code, out = findings(path, "--format", "anthropic")
    assert code == 1 and [f["rule"] for f in out["findings"]] == ["empty-text-block"]
    assert out["findings"][0]["api_error"] == "messages: text content blocks must be non-empty"


def test_tool_checks_skipped_are_said_plain_and_json(tmp_path):
    pending = {"model": "m", "input": [Q, {"type": "function_call", "call_id": "c1", "name": "get_wether",
                                          "arguments": '{"city": "北京"}'}]}
    path = write(tmp_path, "pending.json", pending)
    code, doc = findings(path)
    assert doc["notes"] == ["tool checks skipped: the input sends no tool definitions, so calls "
                            "were not checked against names and schemas (pass --tools tools.yaml)"]
    assert "note: tool checks skipped" in check(path).stdout
    tools = tmp_path / "tools.yaml"
    tools.write_text("version: 1\ntools:\n  - name: get_weather\n    description: 查询天气。当用户问天气时使用。\n"
                     f"    parameters: {json.dumps(WEATHER)}\n    handler: {{fixture: {{t: 20}}}}\n",
                     encoding="utf-8")
    code, doc = findings(path, "--tools", str(tools))
    assert code == 1
    assert "notes" not in doc
    assert sorted(f["rule"] for f in doc["findings"]) == ["missing-tool-response", "unknown-tool"]


def transcript(tmp_path, requests: list[list], final_reply: dict, *, name="t.jsonl", api="chat"):
    """A transcript as the proxy writes one: a request event per list of messages sent."""
    path = tmp_path / name
    w = TranscriptWriter(path, Header(model="m", provider="proxy", tools=[], api=api,
                                      initial_messages=requests[0]), Redactor())
    for turn, messages in enumerate(requests, start=1):
        w("request", {"turn": turn, "messages": messages, "params": {}})
        w("response", {"turn": turn, "message": final_reply if turn == len(requests) else
                       {"role": "assistant", "content": "…"}})
    w("stop", {"reason": "completed", "messages": requests[-1] + [final_reply]})
    w.close()
    return str(path)


def test_a_transcript_is_judged_by_the_requests_it_sent(tmp_path):
    call = {"id": "call_f", "type": "function", "function": {"name": "final_result", "arguments": '{"ok": true}'}}
    ends_on_call = {"role": "assistant", "content": None, "tool_calls": [call]}
    clean = transcript(tmp_path, [[Q]], ends_on_call, name="structured.jsonl")
    r = check(clean)
    assert r.exit_code == 0, r.stdout       # the final reply is not a request
    assert "… pending execution" in r.stdout and "1 recorded request(s)" in r.stdout
    orphan = {"role": "tool", "tool_call_id": "gone", "content": "{}"}
    broken = transcript(tmp_path, [[Q], [Q, orphan], [Q, orphan, {"role": "user", "content": "?"}]],
                        {"role": "assistant", "content": "ok"}, name="broken.jsonl")
    code, doc = findings(broken)
    assert code == 1
    assert [(f["rule"], f["index"], f["request"]) for f in doc["findings"]] == \
        [("orphan-tool-message", 1, 2)]     # once, at the first request that shows it


def test_a_responses_transcript_is_judged_natively(tmp_path):
    items = RESPONSES["input"]
    path = tmp_path / "r.jsonl"
    w = TranscriptWriter(path, Header(model="m", provider="proxy", tools=[], api="responses",
                                      initial_messages=[Q]), Redactor())
    w("request", {"turn": 1, "messages": [Q], "params": {}, "body": {"model": "m", "input": items}})
    w.close()
    code, doc = findings(str(path))
    assert code == 1 and [(f["rule"], f["path"], f["request"]) for f in doc["findings"]] == \
        [("missing-tool-response", "input[2]", 1)]


@pytest.mark.parametrize("bad", [{"model": "m", "input": {"a": 1}}, {"model": "m", "input": [1]},
                                 {"model": "m", "max_tokens": 1, "system": "s", "messages": "x"}])
def test_unreadable_native_documents_are_one_line_exit_2(tmp_path, bad):
    r = check(write(tmp_path, "bad.json", bad))
    assert r.exit_code == 2 and "Traceback" not in r.output
