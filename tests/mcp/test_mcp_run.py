"""``agentdbg run`` with MCP servers over real stdio and HTTP: planning, policy from annotations,
structured errors, timeouts, a crash, bad starts, secrets, transcripts; no server left behind."""

import json
import os
import uuid

import pytest
from mcp_helpers import (
    HttpServer,
    demo_yaml,
    read_events,
    running,
    server_pids,
    tagged,
    transcript,
    wait_until,
    write_script,
)
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
SECRET = "s3cret-9d8c7b6a5f"

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def tag():
    """A tag for the servers of one test; afterwards no process carries it."""
    value = uuid.uuid4().hex
    yield value
    assert wait_until(lambda: not tagged(value), 5), f"server processes left: {tagged(value)}"


def test_the_offline_model_plans_with_the_servers_tools_and_the_transcript_records_the_server(
        tmp_path, tag, monkeypatch):
    monkeypatch.setenv("DEMO_SECRET", SECRET)
    events = tmp_path / "events.jsonl"
    tools = demo_yaml(tmp_path / "tools.yaml", {"events": events, "tag": tag, "exclude": ["auth_check"],
                                                "env": {"DEMO_TOKEN": "${DEMO_SECRET}",
                                                        "AGENTDBG_MCP_TEST_PAGE_SIZE": "4"}})
    r = invoke("run", "--tools", tools, "Which country is Paris in?", "--save", tmp_path / "t.jsonl")
    assert r.exit_code == 0, r.output
    assert "MCP server 'demo': agentdbg-demo 1.2.3 over stdio" in r.stdout
    assert "10 of 11 tool(s) used" in r.stdout                # discovered over three pages
    assert [e["start"] for e in read_events(events) if e["event"] == "list_page"] == [0, 4, 8]
    assert '{"city": "Paris"}' in r.stdout and "Paris is in France" in r.stdout   # planned from the schema
    assert "stop: completed" in r.stdout
    header, body = transcript(tmp_path / "t.jsonl")
    (server,) = header["mcp_servers"]
    assert server["server_info"] == {"name": "agentdbg-demo", "version": "1.2.3"}
    assert (server["transport"], server["command"], server["env_keys"]) == \
        ("stdio", "python", ["AGENTDBG_MCP_TEST_EVENTS", "AGENTDBG_MCP_TEST_MODE", "AGENTDBG_MCP_TEST_PAGE_SIZE",
                             "AGENTDBG_MCP_TEST_TAG", "DEMO_TOKEN"])
    assert [t["name"] for t in server["tools"]][:2] == ["lookup_city", "city_weather"]
    assert "auth_check" in [t["name"] for t in server["tools"]] and "auth_check" not in server["used"]
    assert [t["function"]["name"] for t in header["tools"]] == server["used"]
    call = next(e for e in body if e["type"] == "tool")
    assert call["mcp"]["server"] == "demo"
    assert [m["dir"] for m in call["mcp"]["exchange"]] == ["send", "recv"]
    text = (tmp_path / "t.jsonl").read_text() + r.stdout + r.stderr
    assert SECRET not in text and "${DEMO_SECRET}" not in text
    assert server_pids(events) and wait_until(lambda: not any(map(running, server_pids(events))))


def test_annotations_decide_parallel_sequential_and_approval(tmp_path, tag):
    events = tmp_path / "events.jsonl"
    tools = demo_yaml(tmp_path / "tools.yaml", {"events": events, "tag": tag, "unhinted": "safe"})
    script = write_script(tmp_path / "s.yaml", {"calls": [
        ("slow", {"seconds": 0.4}), ("slow", {"seconds": 0.4}), ("append_note", {"text": "hi"}),
        ("delete_note", {"note_id": "n1"}), ("untagged", {"x": 2})]}, {"content": "done"})
    r = invoke("run", "--tools", tools, "--script", script, "q", "--json")
    assert r.exit_code == 0, r.output
    results = {c["tool_call_id"]: c for c in json.loads(r.stdout)["tool_calls"]}
    assert results["call_1_3"]["ok"] and results["call_1_3"]["content"] == "appended"
    for cid in ("call_1_4", "call_1_5"):     # destructiveHint; no readOnlyHint under unhinted: safe
        assert results[cid]["error_type"] == "denied"
    seen = [e["event"] for e in read_events(events) if e["event"] in
            ("slow_started", "slow_finished", "append_note", "delete_note")]
    assert seen[:2] == ["slow_started", "slow_started"]       # read-only calls ran at once
    assert "delete_note" not in seen                          # never ran without approval


def test_failures_are_the_same_structured_results_as_local_tools(tmp_path, tag, monkeypatch):
    monkeypatch.setenv("DEMO_SECRET", SECRET)
    events = tmp_path / "events.jsonl"
    tools = demo_yaml(tmp_path / "tools.yaml", {"events": events, "tag": tag, "timeout": 1.5, "env": {
        "DEMO_TOKEN": "${DEMO_SECRET}", "AGENTDBG_MCP_TEST_LEAKY": "1"}})
    script = write_script(tmp_path / "s.yaml", {"calls": [
        ("fail", {"message": "disk full"}), ("reject", {"reason": "bad city"}), ("empty", {}),
        ("lookup_city", {"city": 3}), ("city_weather", {"city": "Lima"}), ("mixed", {}),
        ("slow", {"seconds": 30}), ("leak_env", {"name": "DEMO_TOKEN"})]}, {"content": "done"})
    r = invoke("run", "--tools", tools, "--script", script, "q", "--save", tmp_path / "t.jsonl", "--debug")
    assert r.exit_code == 0, r.output
    _, body = transcript(tmp_path / "t.jsonl")
    calls = {e["name"]: e for e in body if e["type"] == "tool"}
    model_sees = {name: json.loads(e["content"]) if not e["ok"] else e["content"] for name, e in calls.items()}
    assert model_sees["fail"] == {"ok": False, "error": {
        "type": "tool_error", "retryable": False, "message": "Error executing tool fail"}}
    assert model_sees["reject"]["error"] == {"type": "invalid_arguments", "retryable": False,
                                            "message": "bad city (JSON-RPC error -32602)"}
    assert "see the docs" in calls["reject"]["detail"] and "see the docs" not in calls["reject"]["content"]
    assert model_sees["empty"]["error"]["type"] == "empty_result"
    assert model_sees["lookup_city"]["error"]["type"] == "invalid_arguments"   # checked before the call
    assert json.loads(model_sees["city_weather"]) == {"city": "Lima", "celsius": 21.5, "sky": "clear"}
    assert model_sees["mixed"] == "first part\n[image image/png, about 9 bytes, not shown]\nsecond part"
    assert model_sees["slow"]["error"] == {"type": "timeout", "retryable": True,
                                          "message": "the tool 'slow' did not answer within 1.5s"}
    called = [e.get("name") for e in read_events(events) if e["event"] == "call"]
    assert "lookup_city" not in called                         # invalid arguments never reach the server
    assert wait_until(lambda: "slow_cancelled" in [e["event"] for e in read_events(events)])
    assert "JSON-RPC exchange of call_1_5 city_weather (MCP server 'demo'" in r.stdout   # --debug
    assert '"method": "notifications/cancelled"' in r.stdout
    # a careless tool printed the secret the server was started with: the transcript never has it
    assert calls["leak_env"]["content"] == "[REDACTED]" and SECRET not in (tmp_path / "t.jsonl").read_text()
    # nor the screen: the view, the --debug exchange, the answer (the model did see it)
    assert SECRET not in r.output and "[REDACTED]" in r.stdout


def test_a_server_that_dies_mid_call(tmp_path, tag):
    tools = demo_yaml(tmp_path / "tools.yaml", {"mode": "crash", "tag": tag})
    r = invoke("run", "--tools", tools, "Which country is Paris in?", "--save", tmp_path / "t.jsonl")
    assert r.exit_code == 0, r.output
    _, body = transcript(tmp_path / "t.jsonl")
    first = next(e for e in body if e["type"] == "tool")
    assert json.loads(first["content"])["error"]["message"] == \
        "the tool 'lookup_city' failed: its MCP server 'demo' has stopped (its process exited)"
    assert "crashing during lookup_city (on purpose)" in first["detail"]       # its stderr, for you
    assert "I could not get Paris (lookup_city)" in r.stdout and "stop: completed" in r.stdout


@pytest.mark.parametrize("mode,needle", [
    ("exit_on_start", "exited before it finished initialising; its stderr ends: demo server: cannot "
                      "open its database (on purpose)"),
    ("hang_before_start", "did not finish initialising within 1.5s"),
    ("bad_list", "invalid tool list: tools[0].inputSchema: Field required"),
])
def test_a_server_that_cannot_start_is_one_line_naming_it(tmp_path, tag, mode, needle):
    limit = {"init_timeout": 1.5} if mode == "hang_before_start" else {}
    tools = demo_yaml(tmp_path / "tools.yaml", {"mode": mode, "tag": tag, **limit})
    debug = mode == "hang_before_start"    # --debug adds the server's stderr and a traceback
    r = invoke("run", "--tools", tools, "q", *(["--debug"] if debug else []))
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert lines[-1].startswith(f"agentdbg: error: MCP server 'demo': {needle}"), lines
    assert len(lines) == 1 or debug
    if debug:
        assert "server stderr (last lines):\ndemo server: stuck before serving (on purpose)" in r.stderr


def test_over_streamable_http_with_a_secret_header(tmp_path, monkeypatch):
    server = HttpServer({"AGENTDBG_MCP_TEST_SECRET": SECRET})
    try:
        monkeypatch.setenv("WEB_TOKEN", SECRET)
        (tmp_path / "tools.yaml").write_text(
            f"version: 1\nmcp_servers:\n  - name: web\n    url: {server.url}\n"
            "    headers: {Authorization: 'Bearer ${WEB_TOKEN}'}\n    include: [auth_check, lookup_city]\n")
        script = write_script(tmp_path / "s.yaml", {"calls": [("auth_check", {}), ("lookup_city", {"city": "Lima"})]},
                              {"content": "done"})
        r = invoke("run", "--script", script, "q", "--tools", "tools.yaml", "--save", tmp_path / "t.jsonl")
        assert r.exit_code == 0, r.output
        assert f"over http (http://127.0.0.1:{server.port}/mcp)" in r.stdout
        assert '{"header": true, "env": false}' in r.stdout and "Lima is in Peru" in r.stdout
        header, _ = transcript(tmp_path / "t.jsonl")
        assert header["mcp_servers"][0]["header_keys"] == ["Authorization"]
        assert SECRET not in (tmp_path / "t.jsonl").read_text() + r.stdout + r.stderr
        (tmp_path / "tools.yaml").unlink()
        r = invoke("run", "--mcp", server.url, "--script", script, "q", "--json")   # --mcp URL
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["tool_calls"][1]["content"] == "Lima is in Peru"
    finally:
        server.stop()


def test_mcp_server_time_a_third_party_server_used_unchanged(tmp_path):
    script = write_script(tmp_path / "s.yaml", {"calls": [("get_current_time", {"timezone": "Asia/Tokyo"})]},
                          {"content": "done"})
    r = invoke("run", "--mcp", "python -m mcp_server_time --local-timezone Europe/Paris", "--script",
               script, "What time is it in Tokyo?", "--json")
    assert r.exit_code == 0, r.output
    (call,) = json.loads(r.stdout)["tool_calls"]
    assert call["ok"] and json.loads(call["content"])["timezone"] == "Asia/Tokyo"
