"""agentdbg check / agentdbg tools through CliRunner; the pre-send check in run."""

import json

import pytest
from test_checker_rules import WEATHER, U, asst, call, tool
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
BROKEN = [U, asst(call("a"), call("b")), tool("a")]


def invoke(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(p)


def test_json_document_shape_and_exit_1(tmp_path):
    r = invoke("check", write(tmp_path, "m.json", BROKEN), "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert doc["findings"] == [{
        "rule": "missing-tool-response", "severity": "error", "index": 1, "tool_call_id": "b",
        "message": doc["findings"][0]["message"], "api_error": doc["findings"][0]["api_error"]}]


def test_clean_input_exits_0(tmp_path):
    r = invoke("check", write(tmp_path, "m.json", [U, asst(call("a")), tool("a")]), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"ok": True, "findings": []}


def test_warnings_only_exit_0(tmp_path):
    # an id reused by a later turn: OpenAI accepts it, other servers do not (a warning)
    body = {"messages": [U, asst(call("a")), tool("a"), asst(call("a")), tool("a")], "tools": [WEATHER]}
    r = invoke("check", write(tmp_path, "b.json", body), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["findings"][0]["severity"] == "warning"


def test_request_body_uses_tools_and_ignores_unknown_keys(tmp_path):
    body = {"model": "x", "messages": [U], "tool_choice": "auto", "stream": True, "foo": 1}
    doc = json.loads(invoke("check", write(tmp_path, "b.json", body), "--json").stdout)
    assert [f["rule"] for f in doc["findings"]] == ["tool-params-without-tools"]


def test_saved_run_is_accepted(tmp_path):
    saved = tmp_path / "run.jsonl"
    invoke("run", "订单 ORD-2026-001 到哪里了?", "--save", str(saved))
    r = invoke("check", str(saved), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["ok"] is True


def test_jsonl_findings_say_which_line(tmp_path):
    lines = "\n".join([json.dumps([U, asst(call("a")), tool("a")]),
                       json.dumps({"messages": BROKEN}), "", json.dumps([tool("z")])])
    doc = json.loads(invoke("check", write(tmp_path, "x.jsonl", lines), "--json").stdout)
    assert [(f["line"], f["rule"]) for f in doc["findings"]] == [
        (2, "missing-tool-response"), (4, "orphan-tool-message")]


def test_stdin(tmp_path):
    r = invoke("check", "-", "--json", input=json.dumps([tool("z")]))
    assert r.exit_code == 1 and json.loads(r.stdout)["findings"][0]["rule"] == "orphan-tool-message"


def test_tools_option_supplies_definitions(tmp_path):
    msgs = [U, asst(call("a", name="get_weather", args='{"town": "x"}'))]  # about to be executed
    path = write(tmp_path, "m.json", msgs)
    assert [f["rule"] for f in json.loads(invoke("check", path, "--json").stdout)["findings"]] == [
        "missing-tool-response"]
    from support import ROOT
    doc = json.loads(invoke("check", path, "--json", "--tools",
                            str(ROOT / "tools.yaml")).stdout)
    assert [f["rule"] for f in doc["findings"]] == ["missing-tool-response", "arguments-schema-mismatch"]


def test_profile_option(tmp_path):
    path = write(tmp_path, "m.json", [U, asst(call("a")), tool("a")])
    doc = json.loads(invoke("check", path, "--json", "--profile", "ollama").stdout)
    assert [f["rule"] for f in doc["findings"]] == ["null-content"]
    r = invoke("check", path, "--profile", "nope")
    assert r.exit_code == 2 and "'nope' is not one of 'openai'" in r.stderr


@pytest.mark.parametrize("content,needle", [
    ('[{"role": "user", "content": "x"},\n {"role": ', "m.json:2:11: invalid JSON"),
    ('{"hello": 1}', "expected a messages array, a request body"),
    ('[{"role": "bot", "content": "x"}]', 'messages[0] has role "bot"'),
    ('[1, 2]', "messages[0] is not an object (int)"),
    ('', "empty input"),
    ('{"messages": {"role": "user"}}', "'messages' must be an array, got dict"),
])
def test_unreadable_input_is_one_line_exit_2(tmp_path, content, needle):
    r = invoke("check", write(tmp_path, "m.json", content))
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and needle in r.stderr and "Traceback" not in r.output


def test_jsonl_bad_line_names_the_line(tmp_path):
    r = invoke("check", write(tmp_path, "x.jsonl", '[{"role": "user", "content": "a"}]\n[{"role": "user",\n'))
    assert r.exit_code == 2 and "x.jsonl:2:" in r.stderr


def test_invalid_utf8_and_missing_file(tmp_path):
    p = tmp_path / "bin.json"
    p.write_bytes(b'[{"role": "user", "content": "\xff"}]')
    r = invoke("check", str(p))
    assert r.exit_code == 2 and "not UTF-8" in r.stderr
    r = invoke("check", str(tmp_path / "nope.json"))
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_view_attaches_the_finding_to_its_message(tmp_path):
    r = invoke("check", write(tmp_path, "m.json", BROKEN))
    out = r.stdout
    assert r.exit_code == 1
    assert "✗ unanswered" in out and "✗ error missing-tool-response" in out
    assert "API says: An assistant message with 'tool_calls' must be followed" in out
    assert "✗ 1 error(s), 0 warning(s) (profile openai)" in out


# -- the pre-send check in run -------------------------------------------------------

SCRIPT = """
turns:
  - tool_calls: [{name: get_weather, id: w1, arguments: '{"city": "北京"'}]
  - content: never reached
"""


def test_run_stops_before_sending_an_invalid_request(tmp_path):
    s = write(tmp_path, "s.yaml", SCRIPT)
    r = invoke("run", "q", "--script", s, "--profile", "vllm")  # vLLM rejects broken arguments
    assert r.exit_code == 8, r.output
    assert "stop: invalid_request" in r.stdout and "arguments-invalid-json" in r.stdout
    assert "--send-anyway" in r.stdout


def test_send_anyway_sends(tmp_path):
    s = write(tmp_path, "s.yaml", SCRIPT)
    r = invoke("run", "q", "--script", s, "--send-anyway", "--json", "--profile", "vllm")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["answer"] == "never reached"


# -- agentdbg tools ------------------------------------------------------------------

def test_tools_lists_and_lints_the_sample():
    r = invoke("tools")
    assert r.exit_code == 0 and "query_order" in r.stdout and "order_id*" in r.stdout


def test_tools_lint_findings(tmp_path):
    p = write(tmp_path, "t.yaml", """
version: 1
tools:
  - name: search.data
    description: 搜索数据
    parameters:
      type: object
      properties:
        status: {type: string}
        q: {type: string, description: query}
    handler: {fixture: []}
  - name: strict_one
    description: Use when testing strict mode.
    strict: true
    parameters:
      type: object
      properties: {a: {type: string, description: a}}
      required: [a]
    handler: {fixture: []}
  - name: writer
    description: Use when writing.
    side_effects: true
    handler: {fixture: []}
""")
    r = invoke("tools", p, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    msgs = [(f["severity"], f["tool"], f["message"][:40]) for f in doc["findings"]]
    text = json.dumps(doc["findings"], ensure_ascii=False)
    assert ("error", None, "tool 'search.data': field 'name' must ma") in msgs
    assert "not when to use it" in text and "no 'required' list" in text
    assert "parameter 'status' has no description" in text
    assert "'status' looks like a closed set" in text
    assert "strict: true but the schema breaks strict mode" in text
    assert "side_effects: true without approval" in text


def test_tools_counts(tmp_path):
    many = "version: 1\ntools:\n" + "".join(
        f"  - {{name: t{i}, description: Use when {i}., handler: {{fixture: 1}}}}\n" for i in range(21))
    r = invoke("tools", write(tmp_path, "t.yaml", many), "--json")
    assert r.exit_code == 0 and "21 tools" in r.stdout
    many = many.replace("range", "")  # keep flake quiet
    huge = "version: 1\ntools:\n" + "".join(
        f"  - {{name: t{i}, description: Use when {i}., handler: {{fixture: 1}}}}\n" for i in range(129))
    assert invoke("tools", write(tmp_path, "h.yaml", huge)).exit_code == 1


def test_tools_unreadable_exit_2(tmp_path):
    r = invoke("tools", write(tmp_path, "t.yaml", "version: 1\ntools: [\n"))
    assert r.exit_code == 2 and "t.yaml:3:" in r.stderr
