"""The example app, for each of its loop-bug flags, through `agentdbg proxy` in front of
`agentdbg serve --offline` — three real processes talking HTTP on 127.0.0.1."""

import base64
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from agentdbg.transcript import load_transcript, messages_over_time

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "examples" / "agent_app.py"
SECRET = "sk-proxytest-SECRET-abcdefghijklmnop"
ORDER_Q = "订单 ORD-2026-001 到哪里了?"


class Proc:
    """A background `agentdbg ...` process whose first line is 'agentdbg X: ... URL'."""

    def __init__(self, args, log: Path, env=None):
        self.log = log
        self.fh = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "agentdbg", *args], stdout=self.fh,
                                     stderr=subprocess.STDOUT, env=env or {**os.environ, "COLUMNS": "200"})
        deadline = time.time() + 20
        while time.time() < deadline:
            text = log.read_text(encoding="utf-8")
            first = text.split("\n", 1)[0]
            if "\n" in text and "http://" in first:  # the whole first line, not part of it
                self.url = first.split()[-1] if "->" not in first else first.split()[2]
                return
            if self.proc.poll() is not None:
                raise AssertionError(log.read_text())
            time.sleep(0.05)
        raise AssertionError(f"no URL from {args}: {log.read_text()}")

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.fh.close()
        return self.output()


@pytest.fixture
def stack(tmp_path):
    """serve --offline, and a proxy in front of it saving transcripts to tmp_path/saved.
    ``lenient``: serve answers protocol errors too, so a buggy loop keeps going."""
    started = []

    def start(*proxy_args, lenient=False):
        serve = Proc(["serve", "--offline", "--port", "0", *(["--lenient"] if lenient else [])],
                     tmp_path / "serve.log")
        proxy = Proc(["proxy", "--upstream", serve.url, "--port", "0", "--save",
                      str(tmp_path / "saved"), *proxy_args], tmp_path / "proxy.log")
        started.extend([proxy, serve])
        return serve, proxy
    yield start
    for p in started:
        p.stop()


def run_app(tmp_path, proxy, *flags, timeout=60):
    env = {**os.environ, "OPENAI_BASE_URL": proxy.url, "OPENAI_API_KEY": SECRET}
    return subprocess.run([sys.executable, str(APP), ORDER_Q, "--dump", str(tmp_path / "dump.jsonl"),
                           *flags], capture_output=True, text=True, env=env, timeout=timeout)


def summaries(output: str) -> list[str]:
    """The proxy's one-line verdict per request, in order."""
    return [line for line in output.splitlines() if line.startswith(("✓ ", "✗ ", "! "))]


def transcripts(tmp_path) -> list:
    return [load_transcript(p) for p in sorted((tmp_path / "saved").glob("*.jsonl"))]


def assert_no_secret(tmp_path, *texts):
    for text in texts:
        assert SECRET not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def assert_byte_identical(tmp_path, serve, t):
    """What the app received through the proxy == what the upstream sends for each request."""
    received = [base64.b64decode(json.loads(line)["body"])
                for line in (tmp_path / "dump.jsonl").read_text().splitlines()]
    requests = [e for e in t.events if e.event_type == "request"]
    assert len(received) == len(requests)
    for event, messages, got in zip(requests, messages_over_time(t.events), received):
        params = {k: v for k, v in event.params.items()}
        body = {**params, "messages": messages, "tools": t.header.tools}
        req = urllib.request.Request(serve.url + "/chat/completions",
                                     data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as resp:
            assert resp.read() == got


@pytest.mark.parametrize("stream", [False, True])
def test_a_correct_loop_is_clean_and_relayed_byte_identical(tmp_path, stack, stream):
    serve, proxy = stack()
    flags = ["--stream"] if stream else []
    r = run_app(tmp_path, proxy, *flags)
    assert r.returncode == 0 and "杭州转运中心已发出" in r.stdout, r.stderr
    out = proxy.stop()
    assert summaries(out) == ["✓ no findings"] * 3
    if stream:
        assert "stream: call call_o1 at index 0: id sent once" in out
    (t,) = transcripts(tmp_path)
    assert t.stop.reason == "completed"
    assert_byte_identical(tmp_path, serve, t)
    replay = subprocess.run([sys.executable, "-m", "agentdbg", "replay", str(t.path), "--json"],
                            capture_output=True, text=True)
    assert replay.returncode == 0, replay.stderr  # a correct loop replays with no divergence
    from agentdbg.transcript.compare import first_difference
    assert first_difference(t.final_messages(), json.loads(replay.stdout)["messages"]) is None
    shown = subprocess.run([sys.executable, "-m", "agentdbg", "replay", str(t.path)],
                           capture_output=True, text=True).stdout
    # the app answers each turn's calls in its next request: pending there, never "unanswered"
    assert "✗" not in shown and shown.count("… pending execution") == 2, shown
    assert_no_secret(tmp_path, r.stdout, r.stderr, out, serve.stop())


def test_forget_assistant_is_rejected_by_serve_as_the_real_api_would(tmp_path, stack):
    _serve, proxy = stack()
    r = run_app(tmp_path, proxy, "--forget-assistant")
    assert r.returncode != 0
    assert "400" in r.stderr and "messages with role 'tool' must be a response to a preceeding " \
        "message with 'tool_calls'" in r.stderr
    lines = summaries(proxy.stop())
    assert lines == ["✓ no findings", "✗ 1 error(s), 0 warning(s): orphan-tool-message@1"]


def test_forget_assistant(tmp_path, stack):
    _serve, proxy = stack(lenient=True)
    r = run_app(tmp_path, proxy, "--forget-assistant")
    assert r.returncode == 3  # never got an answer: the model kept asking
    out = proxy.stop()
    lines = summaries(out)
    assert lines[0] == "✓ no findings"
    # one defect, one finding: the orphan result is what the API rejects
    assert lines[1] == "✗ 1 error(s), 0 warning(s): orphan-tool-message@1"
    assert "repeated-call@3" in lines[3]
    assert_no_secret(tmp_path, r.stdout, r.stderr, out)


def test_drop_results(tmp_path, stack):
    _serve, proxy = stack(lenient=True)
    run_app(tmp_path, proxy, "--drop-results")
    lines = summaries(proxy.stop())
    assert lines[1] == "✗ 1 error(s), 0 warning(s): missing-tool-response@1"


def test_mangle_ids(tmp_path, stack):
    _serve, proxy = stack(lenient=True)
    run_app(tmp_path, proxy, "--mangle-ids")
    out = proxy.stop()
    assert summaries(out)[1] == "✗ 1 error(s), 0 warning(s): tool-call-id-mismatch@2"
    assert "tool_call_id 'call_o1_x' is not an id of the tool_calls in message 1" in out


def test_no_limit_never_stops_and_repeated_call_is_reported(tmp_path, stack):
    _serve, proxy = stack(lenient=True)
    env = {**os.environ, "OPENAI_BASE_URL": proxy.url, "OPENAI_API_KEY": SECRET}
    app = subprocess.Popen([sys.executable, str(APP), ORDER_Q, "--no-limit", "--forget-assistant"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline and len(summaries(proxy.output())) < 8:
        time.sleep(0.1)
    still_running = app.poll() is None
    app.kill()
    app.wait()
    lines = summaries(proxy.stop())
    assert still_running and len(lines) >= 8  # past the default 5 turns: no limit
    assert next(n for n, line in enumerate(lines) if "repeated-call" in line) == 3


def test_block_invalid_answers_the_app_with_a_400(tmp_path, stack):
    _serve, proxy = stack("--block-invalid")
    r = run_app(tmp_path, proxy, "--forget-assistant")
    assert r.returncode != 0
    assert "400" in r.stderr and "agentdbg proxy blocked this request" in r.stderr
    assert "orphan-tool-message at messages[1]" in r.stderr
    out = proxy.stop()
    assert "blocked: answered the app with HTTP 400" in out
    (t,) = transcripts(tmp_path)
    assert [e.event_type for e in t.events][-2:] == ["blocked", "stop"]


def test_other_paths_pass_through(tmp_path, stack):
    _serve, proxy = stack()
    req = urllib.request.Request(proxy.url + "/models", headers={"Authorization": f"Bearer {SECRET}"})
    with urllib.request.urlopen(req) as resp:
        assert json.loads(resp.read())["data"][0]["owned_by"] == "agentdbg"


def test_streams_are_relayed_as_they_arrive(tmp_path):
    """A slow upstream: the first chunk reaches the app long before the last one exists."""
    import threading

    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from agentdbg.server.net import bind, url_of
    from agentdbg.server.net import run_app as serve_app

    async def slow(request):
        import asyncio

        async def chunks():
            yield b'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "a"}}]}\n\n'
            await asyncio.sleep(1.5)
            yield b'data: {"choices": [{"index": 0, "delta": {"content": "b"}, "finish_reason": "stop"}]}\n\n'
            yield b"data: [DONE]\n\n"
        return StreamingResponse(chunks(), media_type="text/event-stream",
                                 headers={"x-request-id": "req_123", "x-ratelimit-remaining-requests": "42"})

    sock = bind("127.0.0.1", 0)
    threading.Thread(target=serve_app, args=(Starlette(routes=[
        Route("/v1/chat/completions", slow, methods=["POST"])]), sock), daemon=True).start()
    proxy = Proc(["proxy", "--upstream", url_of(sock), "--port", "0", "--save", str(tmp_path / "s")],
                 tmp_path / "proxy.log")
    try:
        body = json.dumps({"model": "m", "stream": True,
                           "messages": [{"role": "user", "content": "hi"}]}).encode()
        start = time.perf_counter()
        req = urllib.request.Request(proxy.url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as resp:
            headers = dict(resp.headers)
            first = resp.readline()
            first_at = time.perf_counter() - start
            rest = resp.read()
        total = time.perf_counter() - start
    finally:
        out = proxy.stop()
    assert b'"content": "a"' in first and first_at < 1.0 < total
    assert headers["x-request-id"] == "req_123" and headers["x-ratelimit-remaining-requests"] == "42"
    assert b"[DONE]" in rest and "ab" in out  # the view shows the assembled message


def test_serve_replay_names_the_first_difference_stays_put_and_serves_many_conversations(tmp_path):
    rec = tmp_path / "rec.jsonl"
    subprocess.run([sys.executable, "-m", "agentdbg", "run", ORDER_Q, "--save", str(rec)],
                   capture_output=True, check=True)
    serve = Proc(["serve", "--replay", str(rec), "--port", "0"], tmp_path / "serve.log")
    try:
        def post(messages):
            req = urllib.request.Request(serve.url + "/chat/completions", data=json.dumps(
                {"model": "m", "messages": messages}).encode(),
                headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req) as resp:
                    return resp.status, json.loads(resp.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())
        question = [{"role": "user", "content": ORDER_Q}]
        status, doc = post(question)
        assert status == 200
        reply = doc["choices"][0]["message"]
        assert reply["tool_calls"][0]["id"] == "call_o1"
        # a valid request that differs from the recording: a 400 (a 409 would be retried by
        # the openai client) naming the first difference
        wrong = question + [reply, {"role": "tool", "tool_call_id": "call_o1", "content": "{}"}]
        status, doc = post(wrong)
        assert status == 400 and doc["error"]["code"] == "replay_diverged"
        assert "first difference at messages[2].content" in doc["error"]["message"]
        # ... and the recording stayed where it was: the right request is answered
        right = question + [reply, {"role": "tool", "tool_call_id": "call_o1",
                                    "content": '{"status": "shipped", "tracking_no": "SF123456"}'}]
        status, doc = post(right)
        assert status == 200 and doc["choices"][0]["message"]["tool_calls"][0]["function"][
            "name"] == "query_logistics"
        # a second app starting afresh replays from the beginning, not "no further request"
        status, doc = post(question)
        assert status == 200 and doc["choices"][0]["message"]["tool_calls"][0]["id"] == "call_o1"
        # an invalid request is judged first, as the real API would
        status, doc = post(question + [{"role": "tool", "tool_call_id": "call_o1", "content": "{}"}])
        assert status == 400 and "messages with role 'tool' must be a response" in doc["error"]["message"]
        assert doc["error"]["param"] == "messages.[1].role"
    finally:
        out = serve.stop()
    assert "Traceback" not in out


def test_proxy_binds_loopback_and_hides_the_key(tmp_path, stack):
    serve, proxy = stack()
    assert proxy.url.startswith("http://127.0.0.1:")
    run_app(tmp_path, proxy, "--stream")
    assert_no_secret(tmp_path, proxy.stop(), serve.stop())


def test_serve_script_plain_and_streaming(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: 第一轮\n  - tool_calls: [{name: f, id: c1, arguments: {x: 1}}]\n",
                      encoding="utf-8")
    serve = Proc(["serve", "--script", str(script), "--port", "0"], tmp_path / "serve.log")
    try:
        def post(stream):
            req = urllib.request.Request(serve.url + "/chat/completions", data=json.dumps(
                {"model": "m", "stream": stream, "messages": [{"role": "user", "content": "q"}]}).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as resp:
                return resp.read()
        first = json.loads(post(False))
        assert first["choices"][0]["message"]["content"] == "第一轮"
        streamed = post(True).decode("utf-8")
        assert '"id": "c1"' in streamed and streamed.rstrip().endswith("data: [DONE]")
    finally:
        serve.stop()


def test_the_proxy_warns_on_an_empty_answer_and_marks_warnings_as_warnings(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: ''\n  - content: ''\n  - content: 好的\n  - content: 嗯\n",
                      encoding="utf-8")
    serve = Proc(["serve", "--script", str(script), "--port", "0"], tmp_path / "serve.log")
    proxy = Proc(["proxy", "--upstream", serve.url, "--port", "0", "--save", str(tmp_path / "saved")],
                 tmp_path / "proxy.log")
    try:
        def post(path, body):
            req = urllib.request.Request(proxy.url + path, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as resp:
                return json.loads(resp.read())
        post("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "q"}]})
        post("/messages", {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "r"}]})
        post("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "s"}]})
        broken = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{"}}
        post("/chat/completions", {"model": "m", "messages": [   # a warning only (OpenAI accepts it)
            {"role": "user", "content": "t"}, {"role": "assistant", "content": None, "tool_calls": [broken]},
            {"role": "tool", "tool_call_id": "c1", "content": "invalid_json"}]})
    finally:
        out = proxy.stop()
        serve.stop()
    assert out.count("! warning empty-final-answer") == 2, out  # chat and Anthropic; not "好的"
    assert summaries(out)[-1] == "! 0 error(s), 1 warning(s): arguments-invalid-json@1"  # not ✗
