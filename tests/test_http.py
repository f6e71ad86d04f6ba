"""The real network path: the official openai client against a server on 127.0.0.1."""

import json
import socket

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.engine.session import Session, StopReason
from agentdbg.providers.openai_compat import OpenAICompatible

runner = CliRunner()
SECRET = "sk-test-DO-NOT-PRINT-1234567890abcdef"


def test_full_loop_over_http(model_server, sample_tools):
    provider = OpenAICompatible("offline", model_server.base_url, SECRET)
    s = Session.for_question(provider, sample_tools, "订单 ORD-2026-001 到哪里了?")
    list(s.run())
    assert s.stop_reason is StopReason.COMPLETED and "杭州转运中心已发出" in s.answer()
    # what went over the wire: tools and tool_choice, and the growing messages array
    bodies = model_server.requests
    assert len(bodies) == 3
    assert bodies[0]["tool_choice"] == "auto" and len(bodies[0]["tools"]) == 6
    assert [len(b["messages"]) for b in bodies] == [1, 3, 5]
    assert bodies[2]["messages"][3]["tool_calls"][0]["function"]["name"] == "query_logistics"
    assert s.usage["total_tokens"] > 0


def test_cli_against_the_server(model_server):
    r = runner.invoke(app, ["run", "北京和上海今天哪个更热?", "--model", "offline-over-http",
                            "--base-url", model_server.base_url, "--json",
                            "--temperature", "0.2", "--no-parallel-tool-calls"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["stop_reason"] == "completed"
    body = model_server.requests[0]
    assert body["model"] == "offline-over-http"
    assert body["temperature"] == 0.2 and body["parallel_tool_calls"] is False


@pytest.mark.parametrize("status,needle", [
    (500, "HTTP 500: the server failed"),
    (429, "HTTP 429: rate limited"),
    (401, "HTTP 401: authentication failed"),
    (404, "HTTP 404: not found: check the model name"),
])
def test_http_errors_are_one_line_model_errors(model_server, status, needle, tmp_path):
    model_server.intercept = lambda path, body: (status, {"error": {"message": "upstream says no"}})
    save = tmp_path / "run.jsonl"
    r = runner.invoke(app, ["run", "q", "--model", "gpt-x", "--base-url", model_server.base_url,
                            "--api-key", SECRET, "--save", str(save)])
    assert r.exit_code == 7, r.output
    assert "stop: model_error" in r.stdout and needle in r.stdout
    assert model_server.base_url in r.stdout and "upstream says no" in r.stdout
    assert SECRET not in r.output and SECRET not in save.read_text()
    from agentdbg.transcript import load_transcript
    t = load_transcript(save)
    assert t.final_messages() == [{"role": "user", "content": "q"}]
    assert [e.event_type for e in t.events] == ["request", "model_error", "stop"]


def test_refused_connection(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connections are refused
        r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url",
                                f"http://127.0.0.1:{port}/v1"])
    assert r.exit_code == 7
    assert "cannot connect" in r.stdout and f"127.0.0.1:{port}" in r.stdout


def test_model_error_midway_keeps_the_run(model_server, sample_tools):
    calls = {"n": 0}

    def fail_second(path, body):
        calls["n"] += 1
        return (503, {"error": {"message": "overloaded"}}) if calls["n"] == 2 else None
    model_server.intercept = fail_second
    s = Session.for_question(OpenAICompatible("m", model_server.base_url), sample_tools,
                             "订单 ORD-2026-001 到哪里了?")
    list(s.run())
    assert s.stop_reason is StopReason.MODEL_ERROR and "HTTP 503" in s.stop_detail
    assert [m["role"] for m in s.messages] == ["user", "assistant", "tool"]
