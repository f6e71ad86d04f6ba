"""agentdbg run through typer's CliRunner: output, --json, --save, exit codes, bad input."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args))


def test_run_offline_shows_the_whole_loop():
    r = invoke("run", "订单 ORD-2026-001 到哪里了?")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "offline" in out and "not an LLM" in out
    assert "query_order" in out and "query_logistics" in out
    assert "杭州转运中心已发出" in out
    assert "✓ answers [1]" in out and "✓ answers [3]" in out
    assert "stop: completed" in out and "tokens" in out


def test_json_output_is_exactly_one_document():
    r = invoke("run", "北京和上海今天哪个更热?", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["stop_reason"] == "completed"
    assert [m["role"] for m in doc["messages"]] == ["user", "assistant", "tool", "tool", "assistant"]
    assert doc["usage"]["total_tokens"] > 0
    assert len(doc["turns"]) == 2 and all("latency_ms" in t for t in doc["turns"])
    assert doc["turns"][0]["tool_ms"] >= 0
    assert [c["name"] for c in doc["tool_calls"]] == ["get_weather", "get_weather"]


def test_save_writes_the_transcript(tmp_path):
    from agentdbg.transcript import load_transcript
    out = tmp_path / "runs" / "r.jsonl"
    r = invoke("run", "订单 ORD-2026-001 到哪里了?", "--save", str(out))
    assert r.exit_code == 0 and f"transcript: {out}" in r.stdout
    t = load_transcript(out)
    assert t.header.format == "agentdbg-transcript" and t.header.version == 2
    assert t.header.tools[0]["function"]["name"] == "query_order"
    assert [e.event_type for e in t.events] == ["request", "response", "tool", "request", "response",
                                             "tool", "request", "response", "stop"]
    assert t.stop.reason == "completed" and "杭州转运中心已发出" in t.final_messages()[-1]["content"]


def test_runs_are_kept_in_the_data_dir_and_listed(tmp_path):
    for q in ("北京和上海今天哪个更热?", "订单 ORD-2026-001 到哪里了?"):
        assert invoke("run", q).exit_code == 0
    runs = sorted((tmp_path / "agentdbg-home" / "runs").glob("*.jsonl"))
    assert len(runs) == 2
    r = invoke("runs")
    assert r.exit_code == 0 and "completed" in r.stdout and "ORD-2026-001" in r.stdout
    assert r.stdout.index("ORD-2026-001") < r.stdout.index("北京和上海")  # newest first


def test_keep_runs_prunes_the_oldest(tmp_path):
    for i in range(4):
        invoke("run", f"hello {i}", "--keep-runs", "2")
    assert len(list((tmp_path / "agentdbg-home" / "runs").glob("*.jsonl"))) == 2


def script(tmp_path, text):
    p = tmp_path / "script.yaml"
    p.write_text(text, encoding="utf-8")
    return str(p)


LOOP = """
turns:
  - tool_calls: [{name: get_weather, arguments: {city: 北京}}]
  - tool_calls: [{name: get_weather, arguments: {city: 北京}}]
  - tool_calls: [{name: get_weather, arguments: {city: 北京}}]
  - tool_calls: [{name: get_weather, arguments: {city: 北京}}]
"""


@pytest.mark.parametrize("extra,code,reason", [
    ([], 5, "repeated_call"),
    (["--max-turns", "2"], 3, "max_turns"),
    (["--max-tool-calls", "2"], 4, "max_tool_calls"),
    (["--repeat-limit", "9"], 7, "model_error"),  # the script runs out
])
def test_each_stop_reason_has_its_exit_status(tmp_path, extra, code, reason):
    r = invoke("run", "q", "--script", script(tmp_path, LOOP), *extra)
    assert r.exit_code == code, r.output
    assert f"stop: {reason}" in r.stdout
    assert "No answer: the run did not complete." in r.stdout


def test_limit_stop_in_json_has_no_answer(tmp_path):
    r = invoke("run", "q", "--script", script(tmp_path, LOOP), "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 5 and doc["stop_reason"] == "repeated_call" and doc["answer"] is None


def test_bad_tools_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "tools.yaml"
    bad.write_text("version: 1\ntools:\n  - name: x y\n    description: d\n", encoding="utf-8")
    r = invoke("run", "q", "--tools", str(bad))
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentdbg: error: ")
    assert "tools.yaml:3:" in lines[0] and "field 'name'" in lines[0]
    assert "Traceback" not in r.output


def test_bad_script_is_one_line_exit_2(tmp_path):
    r = invoke("run", "q", "--script", script(tmp_path, "turns: [{nothing: 1}]"))
    assert r.exit_code == 2 and "turns[0]: each turn needs 'content' and/or 'tool_calls'" in r.stderr


def test_local_tools_yaml_is_the_default(tmp_path):
    (tmp_path / "tools.yaml").write_text("""
version: 1
tools:
  - name: ping
    description: Answers pong. Use when the user says ping.
    handler: {fixture: {reply: pong}}
""", encoding="utf-8")
    r = invoke("run", "please ping", "--json")
    doc = json.loads(r.stdout)
    assert doc["tool_calls"][0]["name"] == "ping" and "pong" in doc["answer"]


def test_approve_all_sends_the_email(tmp_path):
    s = script(tmp_path, """
turns:
  - tool_calls: [{name: send_email, arguments: {to: a@b.cn, subject: s, body: b}}]
  - content: done
""")
    denied = json.loads(invoke("run", "q", "--script", s, "--json").stdout)
    assert json.loads(denied["messages"][2]["content"])["error"]["type"] == "denied"
    sent = json.loads(invoke("run", "q", "--script", s, "--json", "--approve", "all").stdout)
    assert json.loads(sent["messages"][2]["content"])["status"] in ("sent", "duplicate_ignored")


def invoke_at(columns, *args):
    return runner.invoke(app, list(args), env={"COLUMNS": str(columns)})


def test_debug_shows_the_full_tool_error(tmp_path):
    """The detail holds the interpreter's path, as long as a venv makes it: piped, it stays
    one line at any width, so this holds whatever the path's length and the terminal."""
    s = script(tmp_path, """
turns:
  - tool_calls: [{name: check_inventory, arguments: {sku: SKU-1001}}]
  - content: done
""")
    r = invoke_at(40, "run", "q", "--script", s, "--debug")
    detail = [line for line in r.stdout.splitlines() if line.startswith("check_inventory call_")]
    assert len(detail) == 1 and "killed after 1s" in detail[0] and sys.executable in detail[0]


# -- piped output --------------------------------------------------------------------

def test_piped_output_has_no_padding_and_keeps_single_values_whole(tmp_path):
    r = invoke_at(40, "run", "订单 ORD-2026-001 到哪里了?")
    lines = r.stdout.splitlines()
    assert r.exit_code == 0 and not [line for line in lines if line.endswith(" ")]
    note = "model note: query_order: order_id='ORD-2026-001' (question matches pattern ^ORD-\\d{4}-\\d{3}$)"
    assert note in lines  # one value, one line: not split at "pattern" at 40 columns
    assert max(len(line) for line in lines if line.startswith("│")) <= 40  # boxes keep the width


def test_a_request_level_finding_is_one_line_when_piped(tmp_path):
    p = tmp_path / "empty.json"
    p.write_text("[]")
    lines = invoke_at(40, "check", str(p)).stdout.splitlines()
    assert lines[0].startswith("✗ error empty-messages: ") and lines[0].endswith("emptied the array?)")


def test_lint_findings_are_whole_lines_when_piped(tmp_path):
    tools = tmp_path / "t.yaml"
    tools.write_text("""
version: 1
tools:
  - name: search_orders
    description: Search orders by status.
    parameters:
      type: object
      properties: {status: {type: string, description: the order status}}
      required: [status]
    handler: {fixture: {orders: []}}
""", encoding="utf-8")
    r = invoke_at(40, "tools", str(tools))
    assert any(line.startswith("! warning") and "list the values with 'enum'" in line
               for line in r.stdout.splitlines())
    assert not [line for line in r.stdout.splitlines() if line.endswith(" ")]


# -- broken arguments from a model ---------------------------------------------------

BROKEN_JSON = """
turns:
  - tool_calls: [{name: get_weather, id: w1, arguments: '{"city": "北京"'}]
  - content: 北京今天 24 度。
"""


def test_broken_json_from_the_model_is_answered_and_the_run_goes_on(tmp_path):
    """OpenAI accepts a history with broken arguments once the call is answered: the loop
    answers invalid_json and the next request is sent (a warning, not exit 8)."""
    r = invoke("run", "北京天气?", "--script", script(tmp_path, BROKEN_JSON))
    assert r.exit_code == 0, r.output
    assert '"type": "invalid_json"' in r.stdout and "! warning arguments-invalid-json" in r.stdout
    assert "vLLM says: Expecting ',' delimiter" in r.stdout and "stop: completed" in r.stdout
    blocked = invoke("run", "北京天气?", "--script", script(tmp_path, BROKEN_JSON), "--profile", "vllm")
    assert blocked.exit_code == 8 and "✗ error arguments-invalid-json" in blocked.stdout


# -- an empty final answer -----------------------------------------------------------

def test_an_empty_final_answer_is_a_warning_not_a_clean_completion(model_server):
    model_server.intercept = lambda path, body: (200, {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
            "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}})
    r = invoke("run", "你好", "--model", "m", "--base-url", model_server.base_url, "--api-key", "k")
    out = r.stdout
    assert r.exit_code == 0, r.output
    view = [line for line in out.splitlines() if "! warning empty-final-answer" in line]
    assert len(view) == 1 and view[0].startswith(" " * 10)  # in the view, on the message
    assert "No answer to show: the model's final message has no text." in out
    stop = next(line for line in out.splitlines() if line.startswith("stop: "))
    assert stop.startswith("stop: completed") and "the answer is empty" in stop
    assert "╭─ answer" not in out  # no empty box
    good = invoke("run", "订单 ORD-2026-001 到哪里了?")
    assert "empty-final-answer" not in good.stdout and "the answer is empty" not in good.stdout


# -- replay shows what was recorded --------------------------------------------------

def test_replay_shows_the_recorded_timings_and_options(tmp_path):
    rec = tmp_path / "rec.jsonl"
    assert invoke("run", "订单 ORD-2026-001 到哪里了?", "--save", str(rec)).exit_code == 0
    events = [json.loads(line) for line in rec.read_text(encoding="utf-8").splitlines()]
    for e in events:  # distinctive recorded figures a replay could not measure itself
        if e["type"] == "response":
            e["latency_ms"] = 1234.5 + e["turn"]
        if e["type"] == "tool":
            e["duration_ms"] = 678.9
    rec.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    r = invoke("replay", str(rec))
    assert r.exit_code == 0, r.output
    assert "1235.5 ms" in r.stdout and "1236.5 ms" in r.stdout and "678.9 ms" in r.stdout
    assert "replayed in" in r.stdout
    doc = json.loads(invoke("replay", str(rec), "--json").stdout)
    assert [t["latency_ms"] for t in doc["turns"]] == [1235.5, 1236.5, 1237.5]
    assert [c["duration_ms"] for c in doc["tool_calls"]] == [678.9, 678.9]
    assert doc["options"]["approve"] == "none" == events[0]["options"]["approve"]


def test_help_does_not_import_heavy_modules():
    code = ("import sys\nfrom agentdbg.cli import app\n"
            "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('openai', 'jsonschema', 'prompt_toolkit', 'httpx', 'httpx2', 'pydantic') "
            "if m in sys.modules]\nprint('HEAVY', heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "run" in out  # the help text was printed
    assert "HEAVY []" in out


def test_python_dash_m_works():
    r = subprocess.run([sys.executable, "-m", "agentdbg", "version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("agentdbg ")


def test_save_help_says_json_lines():
    for command in ("run", "replay"):
        text = " ".join(invoke(command, "--help").stdout.split())
        assert "(JSON Lines)" in text, command


def test_mcp_help_says_what_each_command_does_with_it():
    run, replay = (" ".join(invoke(c, "--help").stdout.split()) for c in ("run", "replay"))
    assert "Without --tools, only ./tools.yaml joins it" in run
    assert "./tools.yaml" not in replay.replace("./tools.yaml is never loaded", "")  # never loaded
    assert "./tools.yaml is never loaded" in replay and "started only when going live" in replay


@pytest.mark.parametrize("extra,who", [([], "the offline model"), (["--script", "S"], "a script")])
def test_api_without_a_real_endpoint_is_said_not_silently_ignored(tmp_path, extra, who):
    if extra:
        script = tmp_path / "s.yaml"
        script.write_text("- content: done\n", encoding="utf-8")
        extra = ["--script", str(script)]
    r = invoke("run", "北京和上海今天哪个更热?", "--api", "anthropic", *extra)
    assert r.exit_code == 0, r.output
    assert f"warning: --api anthropic picks the wire format of a real endpoint (--model); {who}" \
        in r.stderr
    quiet = invoke("run", "北京和上海今天哪个更热?", *extra)
    assert "warning" not in quiet.stderr


@pytest.mark.parametrize("option", ["--script", "--tools"])
def test_save_never_writes_over_a_file_the_run_reads(tmp_path, option):
    from support import ROOT

    target = tmp_path / "input.yaml"
    target.write_text((ROOT / "tools.yaml").read_text(encoding="utf-8")
                      if option == "--tools" else "- content: done\n", encoding="utf-8")
    before = target.read_bytes()
    r = invoke("run", "北京和上海今天哪个更热?", option, str(target), "--save", str(tmp_path / "." / "input.yaml"))
    assert r.exit_code == 2 and f"that is the {option} file" in r.stderr, r.output
    assert target.read_bytes() == before
