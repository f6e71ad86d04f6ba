"""Failing model endpoints, against a real local HTTP server misbehaving on purpose."""

import json
import socket
import threading
import time
import warnings

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.transcript import load_transcript

runner = CliRunner()
KEY = "sk-hardening-TESTKEY-1234567890abcdef"


def run(server, *extra, save=None):
    args = ["run", "订单 ORD-2026-001 到哪里了?", "--model", "m", "--base-url", server.base_url,
            "--api-key", KEY, *extra]
    if save is not None:
        args += ["--save", str(save)]
    return runner.invoke(app, args)


@pytest.mark.parametrize("status,needle", [
    (401, "authentication failed"), (403, "permission denied"), (404, "not found: check the model"),
    (429, "rate limited"), (500, "the server failed"), (503, "the server failed"),
    (400, "the API rejected the request"),
])
def test_status_codes(model_server, status, needle):
    model_server.intercept = lambda p, b: (status, {"error": {"message": f"nope {status}"}})
    r = run(model_server)
    assert r.exit_code == 7 and f"HTTP {status}: {needle}" in r.stdout
    assert f"nope {status}" in r.stdout and KEY not in r.output


@pytest.mark.parametrize("payload,needle", [
    (b"{this is not json", "not valid JSON"),
    ({"id": "x", "object": "chat.completion", "choices": []}, "answered with no choices"),
    (b'"just a string"', "is not a chat completion"),
])
def test_malformed_200s(model_server, payload, needle):
    model_server.intercept = lambda p, b: (200, payload)
    r = run(model_server)
    assert r.exit_code == 7, r.output
    assert needle in r.stdout


def test_unparsable_tool_call_arguments_are_caught(model_server):
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "query_order", "arguments": '{"order_id": "ORD-2026-001"'}}]}}]}
    model_server.intercept = lambda p, b: (200, reply)
    r = run(model_server, "--profile", "vllm")
    assert r.exit_code == 8  # the executor answered invalid_json; vLLM would reject the next request
    assert '"type": "invalid_json"' in r.stdout and "arguments-invalid-json" in r.stdout


@pytest.mark.parametrize("call_id", [[], {}, {"id": "c1"}])
def test_a_call_id_that_is_not_a_string_is_a_finding(model_server, call_id):
    """An endpoint answering ``"id": []``: the view draws the call, the checker names the
    missing id, the SDK's serializer warnings stay off the screen."""
    asked = {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}

    def reply(path, body):
        answered = any(m.get("role") == "tool" for m in body["messages"])
        message = {"role": "assistant", "content": "done"} if answered else asked
        return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [
            {"index": 0, "finish_reason": "stop" if answered else "tool_calls", "message": message}]}
    model_server.intercept = reply
    for extra in ([], ["--send-anyway"], ["--json"]):
        with warnings.catch_warnings(record=True) as caught:   # what would reach stderr
            warnings.simplefilter("always")
            r = run(model_server, *extra)
        assert not [w for w in caught if "Pydantic" in str(w.message)], caught
        assert r.exit_code in (0, 8), r.output
        assert "internal error" not in r.output and "Traceback" not in r.output, r.output
        if "--json" in extra:
            assert json.loads(r.stdout)["stop_reason"] in ("invalid_request", "completed")
        else:
            assert "tool-call-missing-id" in r.stdout, r.stdout
        assert "Pydantic" not in r.output and "UserWarning" not in r.output, r.output


def test_refused_and_dns_failure():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1"])
    assert r.exit_code == 7 and "cannot connect" in r.stdout
    r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", "http://no-such-host.invalid/v1",
                            "--timeout", "20"])
    assert r.exit_code == 7 and "cannot connect" in r.stdout and "no-such-host.invalid" in r.stdout


def test_slow_server_hits_the_run_timeout(model_server):
    def slow(path, body):
        time.sleep(3)
        return None
    model_server.intercept = slow
    start = time.time()
    r = run(model_server, "--timeout", "0.5")
    assert time.time() - start < 3
    assert r.exit_code == 6 and "stop: timeout" in r.stdout and "timed out" in r.stdout


def test_bounded_retries_with_backoff(model_server, tmp_path):
    calls = {"n": 0}
    lock = threading.Lock()

    def flaky(path, body):
        with lock:
            calls["n"] += 1
            n = calls["n"]
        return (503, {"error": {"message": "overloaded"}}) if n <= 2 else None
    model_server.intercept = flaky
    r = run(model_server, "--retries", "2")
    assert r.exit_code == 0 and "stop: completed" in r.stdout
    calls["n"] = -100  # from now on always failing
    model_server.intercept = lambda p, b: (503, {"error": {"message": "down"}})
    save = tmp_path / "t.jsonl"
    r = run(model_server, "--retries", "1", save=save)
    assert r.exit_code == 7
    t = load_transcript(save)
    assert [e.event_type for e in t.events] == ["request", "model_error", "stop"]


def test_key_echoed_by_the_server_is_never_shown(model_server, tmp_path):
    model_server.intercept = lambda p, b: (401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    save = tmp_path / "k.jsonl"
    r = run(model_server, save=save)
    assert r.exit_code == 7 and KEY not in r.output and "[REDACTED]" in r.stdout
    assert KEY not in save.read_text(encoding="utf-8")


def test_a_one_letter_placeholder_key_is_not_masked_out_of_every_word(model_server):
    model_server.intercept = lambda p, b: (500, {"error": {"message": "script examples/x.yaml "
                                                           "has 1 turn(s)"}})
    r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", model_server.base_url,
                            "--api-key", "x"])
    assert r.exit_code == 7 and "script examples/x.yaml has 1 turn(s)" in r.stdout, r.stdout


def test_a_reply_echoing_the_key_never_shows_it(model_server, tmp_path):
    echo = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
        "index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": f"echo Bearer {KEY} and {KEY[:-3]}"}}]}
    model_server.intercept = lambda p, b: (200, echo)
    save = tmp_path / "e.jsonl"
    r = run(model_server, save=save)
    assert r.exit_code == 0, r.output
    assert KEY not in r.output and "[REDACTED]" in r.stdout
    assert KEY not in save.read_text(encoding="utf-8")


def test_failure_midway_keeps_the_transcript(model_server, tmp_path):
    calls = {"n": 0}

    def second_fails(path, body):
        calls["n"] += 1
        return (500, {"error": {"message": "boom"}}) if calls["n"] == 2 else None
    model_server.intercept = second_fails
    save = tmp_path / "m.jsonl"
    r = run(model_server, save=save)
    assert r.exit_code == 7
    types = [e.event_type for e in load_transcript(save).events]
    assert types == ["request", "response", "tool", "request", "model_error", "stop"]


def test_credentials_of_the_base_url_echoed_by_the_server_are_never_shown(model_server, tmp_path):
    """Those in the URL, and the Basic token an HTTP client makes of them: off the screen, as in
    the transcript."""
    import base64

    token = base64.b64encode(b"alice:pa55-SECRET-word").decode()
    echoed = f"you are alice:pa55-SECRET-word, Basic {token}"
    model_server.intercept = lambda p, b: (200, {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
            "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": echoed}}]})
    url = model_server.base_url.replace("http://", "http://alice:pa55-SECRET-word@")
    save = tmp_path / "t.jsonl"
    r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", url, "--api-key", KEY,
                            "--save", str(save)])
    assert r.exit_code == 0, r.output
    for text in (r.output, save.read_text(encoding="utf-8")):
        assert "[REDACTED]" in text and "pa55-SECRET-word" not in text and token not in text
