"""The proxy under hostile or unusual traffic (issue 11): keys in any header and in URLs stay
secret, bodies are bounded, the query string and the base path are kept, no descriptor is
held per conversation, and the analysis never stalls or cuts the relay."""

import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from proxy_helpers import COMPLETION, Proxy, Upstream, chunk, sse

from agentdbg.transcript import load_transcript

KEY = "azure-0123456789-SECRET-abcdef"


@pytest.fixture
def proxies(tmp_path):
    started = []

    def start(upstream_url, *args, **kw):
        started.append(Proxy(upstream_url, tmp_path, *args, **kw))
        return started[-1]
    yield start
    for p in started:
        p.stop()


def chat(n: int = 0, **extra) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": f"question {n}"}], **extra}


def post(url: str, body, headers=None, path="/chat/completions", timeout=60):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method="POST",
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


@pytest.mark.parametrize("header", ["api-key", "x-api-key"])
def test_api_key_headers_are_secrets_like_authorization(upstream, proxies, header):
    def echo(handler, body):  # as an upstream does when it rejects a key
        key = handler.headers.get(header, "")
        upstream.send(handler, 401, json.dumps({"error": {
            "message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}}).encode())
    upstream.reply = echo
    proxy = proxies(upstream.url)
    status, data, _ = post(proxy.url, chat(), {header: KEY})
    assert status == 401 and KEY.encode() in data  # the app gets its upstream's answer as sent
    assert upstream.seen[-1]["headers"].get(header) == KEY  # and the key reached the upstream
    out = proxy.stop()
    assert KEY not in out and KEY not in proxy.saved()


def test_credentials_in_the_upstream_url_are_never_printed_or_recorded(upstream, proxies):
    parts = urllib.parse.urlsplit(upstream.url)
    secret_url = f"http://bob:pa55-SECRET-word@{parts.netloc}{parts.path}"
    proxy = proxies(secret_url)
    status, _, _ = post(proxy.url, chat())
    assert status == 200
    out = proxy.stop()
    assert "pa55-SECRET-word" not in out and "pa55-SECRET-word" not in proxy.saved()
    assert "127.0.0.1" in out.splitlines()[0]  # the upstream is still named, without its password


def test_credentials_in_an_unreachable_upstream_are_not_printed(proxies, tmp_path):
    proxy = proxies("http://bob:pa55-SECRET-word@127.0.0.1:9/v1")  # nothing listens on port 9
    status, data, _ = post(proxy.url, chat())
    assert status == 502 and json.loads(data)["error"]["type"] == "proxy_error"
    out = proxy.stop()
    assert "pa55-SECRET-word" not in out and "pa55-SECRET-word" not in proxy.saved()


def test_a_body_over_32_mb_gets_a_413_with_a_json_error(upstream, proxies):
    proxy = proxies(upstream.url)
    big = json.dumps(chat(content="x")).encode()[:-1] + b', "pad": "' + b"x" * (33 << 20) + b'"}'
    status, data, _ = post(proxy.url, big)
    assert status == 413
    assert "error" in json.loads(data)
    assert not [s for s in upstream.seen if s["size"] > 32 << 20]  # never forwarded
    assert post(proxy.url, chat())[0] == 200  # and the proxy still serves


def test_the_query_string_reaches_the_upstream(upstream, proxies):
    proxy = proxies(upstream.url)
    status, _, _ = post(proxy.url, chat(), path="/chat/completions?api-version=2024-06-01")
    assert status == 200
    assert upstream.seen[-1]["path"] == "/v1/chat/completions?api-version=2024-06-01"


@pytest.mark.parametrize("path", ["/v1/%2e%2e/%2e%2e/anything", "/v1/../../anything",
                                  "/v1/models/%2E%2E/%2E%2E/%2e%2e/etc/passwd"])
def test_passthrough_stays_inside_the_upstreams_base_path(upstream, proxies, path):
    base = upstream.url.replace("/v1", "/deployments/d1/v1")
    proxy = proxies(base)
    host = urllib.parse.urlsplit(proxy.url).netloc
    conn = http.client.HTTPConnection(host, timeout=30)
    conn.request("GET", path)  # sent as written: no client-side normalisation
    conn.getresponse().read()
    conn.close()
    assert all(s["path"].startswith("/deployments/d1/v1/") and ".." not in s["path"]
               and "%2e" not in s["path"].lower() for s in upstream.seen), upstream.seen
    conn = http.client.HTTPConnection(host, timeout=30)
    conn.request("GET", "/v1/models?limit=2")  # an ordinary passthrough still works
    assert conn.getresponse().status == 200
    assert upstream.seen[-1]["path"] == "/deployments/d1/v1/models?limit=2"


def test_no_descriptor_is_held_per_conversation(upstream, proxies):
    proxy = proxies(upstream.url, nofile=64)  # ulimit -n 64
    statuses = [post(proxy.url, chat(n))[0] for n in range(100)]  # 100 conversations
    assert statuses == [200] * 100
    proxy.stop()
    saved = list((proxy.log.parent / "saved").glob("*.jsonl"))
    assert len(saved) == 100  # every conversation recorded


def test_an_sse_line_the_analysis_cannot_read_never_cuts_the_stream(upstream, proxies):
    stream = sse(chunk({"role": "assistant", "content": ""}), b"[]", chunk({"content": "hi"}),
                 b"{not json", chunk({}, "stop"), b"[DONE]")

    def reply(handler, body):
        upstream.send(handler, 200, stream, "text/event-stream")
    upstream.reply = reply
    proxy = proxies(upstream.url)
    status, data, _ = post(proxy.url, chat(stream=True))
    assert status == 200 and data == stream  # every byte, in order, to the end
    upstream.reply = upstream.completion
    assert post(proxy.url, chat(1))[0] == 200  # and the proxy goes on


def test_a_streams_notes_in_chinese_and_its_transcript_in_english(upstream, proxies):
    """`proxy --lang zh`: what the stream got wrong and how it carried the call are said in
    Chinese on the proxy's console (the chunk's bytes and the ids verbatim); the transcript
    records them in English, as before."""
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": '}}
    stream = sse(chunk({"role": "assistant", "content": None, "tool_calls": [call]}), b"oops",
                 {"choices": "x"}, chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
                 chunk({}, "tool_calls"), b"[DONE]")

    def reply(handler, body):
        upstream.send(handler, 200, stream, "text/event-stream")
    upstream.reply = reply
    proxy = proxies(upstream.url, "--lang", "zh")
    status, data, _ = post(proxy.url, chat(stream=True))
    assert status == 200 and data == stream
    out = proxy.stop()
    assert "  流：一个不是 JSON 的数据块：b'oops'" in out, out
    assert """  流：一个数据块的 choices 是字符串，而不是数组：b'{"choices": "x"}'""" in out, out
    assert "  流：index 0 处的调用 call_1：id 只发送了一次，2 个 delta 靠 index 拼接" in out, out
    assert "stream:" not in out and "a chunk" not in out and "deltas joined" not in out, out
    saved = proxy.saved()
    assert "a chunk that is not JSON: b'oops'" in saved, saved
    assert "call call_1 at index 0: id sent once, 2 deltas joined by index" in saved, saved


def test_an_undecoded_response_is_said_in_chinese(upstream, proxies):
    """`proxy --lang zh`: a response body agentdbg does not decode (br) or cannot inflate (bad
    gzip) is said in Chinese on the console; the transcript records the English."""
    bodies = iter([("br", b"\x0b\x01\x80hello"), ("gzip", b"not gzip at all")])

    def reply(handler, body):
        encoding, data = next(bodies)
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-encoding", encoding)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    upstream.reply = reply
    proxy = proxies(upstream.url, "--lang", "zh")
    assert post(proxy.url, chat(0))[0] == 200 and post(proxy.url, chat(1))[0] == 200
    out = proxy.stop()
    assert ("对话 1：上游发来的响应体采用 'br' 编码（代理要求的是 identity），agentdbg 不解码这种编码："
            "已原样转发，未做分析") in out, out
    assert "对话 2：上游的 gzip 响应体无法解压（" in out and "）：未做分析" in out, out
    # the error line keeps its status (twice, as in English) and reads the note back
    assert "上游返回了 HTTP 200：HTTP 200: 上游发来的响应体采用 'br' 编码" in out, out
    assert "the upstream" not in out, out
    assert "the upstream sent a 'br'-encoded body" in proxy.saved()


def test_a_30_mb_request_never_stalls_other_clients(upstream, proxies):
    proxy = proxies(upstream.url)
    big = chat(0)
    big["messages"] = [{"role": "user" if i % 2 == 0 else "assistant", "content": "y" * 3000}
                       for i in range(10_000)]  # about 30 MB of JSON to parse and check
    body = json.dumps(big).encode()
    assert len(body) > 30_000_000
    done = threading.Event()
    threading.Thread(target=lambda: (post(proxy.url, body, timeout=300), done.set()),
                     daemon=True).start()
    time.sleep(0.5)  # the big one is being read/analysed now
    took = []
    for n in range(1, 6):
        start = time.monotonic()
        assert post(proxy.url, chat(n))[0] == 200
        took.append(time.monotonic() - start)
    assert max(took) < 3, took  # no small request waits for the big one's analysis
    done.wait(300)


def test_a_hostile_schema_pattern_never_stops_the_analysis(upstream, proxies):
    proxy = proxies(upstream.url)
    body = chat(0, tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {
            "a": {"type": "string", "pattern": "^(a+)+$"}}}}}])
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "f", "arguments": json.dumps({"a": "a" * 34 + "!"})}}]}]
    assert post(proxy.url, body)[0] == 200
    assert post(proxy.url, chat(1))[0] == 200
    deadline = time.monotonic() + 20  # the analyst gets past the first request
    while proxy.output().count("← response") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proxy.output().count("← response") >= 2, proxy.output()


def test_a_deeply_nested_body_is_relayed_and_the_console_has_no_traceback(upstream, proxies):
    proxy = proxies(upstream.url)
    nested = b'{"model": "m", "messages": [{"role": "user", "content": "q", "x": ' + \
        b"[" * 400 + b"]" * 400 + b"}]}"
    status, data, _ = post(proxy.url, nested)
    assert status == 200 and json.loads(data) == COMPLETION
    out = proxy.stop()
    assert "Traceback" not in out


def events_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_a_request_nested_400_deep_is_recorded(upstream, proxies):
    """The checks cannot walk it all; the exchange is recorded anyway and reads back."""
    from typer.testing import CliRunner

    from agentdbg.cli import app

    proxy = proxies(upstream.url)
    nested = b'{"model": "m", "messages": [{"role": "user", "content": ' + b"[" * 400 + \
        b"]" * 400 + b"}]}"
    status, data, _ = post(proxy.url, nested)
    assert status == 200 and json.loads(data) == COMPLETION
    out = proxy.stop()
    assert "could not analyse" not in out and "Traceback" not in out, out
    (path,) = sorted((proxy.log.parent / "saved").glob("*.jsonl"))
    events = events_of(path)
    assert [e["type"] for e in events] == ["header", "request", "response", "stop"]
    request = load_transcript(path).events[0]   # the messages it sent, rebuilt by the reader
    assert json.dumps(request.messages[0]["content"]) == "[" * 400 + "]" * 400
    assert events[2]["message"]["content"] == "hello"
    for args in (["replay", str(path), "--json"], ["check", str(path)]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code in (0, 1) and "internal error" not in r.output, (args, r.output)


@pytest.mark.parametrize("odd", [b"[]", b'"str"', b"null", b"5", b'{"choices":5}',
                                 b'{"choices":[{"delta":{"tool_calls":{}}}]}'])
def test_a_stream_event_of_another_shape_is_noted_and_the_response_recorded(upstream, proxies, odd):
    stream = sse(chunk({"role": "assistant", "content": ""}), odd, chunk({"content": "hi"}),
                 b"{bad json", chunk({}, "stop"), b"[DONE]")
    upstream.reply = lambda handler, body: upstream.send(handler, 200, stream, "text/event-stream")
    proxy = proxies(upstream.url)
    status, data, _ = post(proxy.url, chat(stream=True))
    assert status == 200 and data == stream             # the client's stream is intact
    out = proxy.stop()
    assert "could not analyse" not in out and "Traceback" not in out, out
    (path,) = sorted((proxy.log.parent / "saved").glob("*.jsonl"))
    response = next(e for e in events_of(path) if e["type"] == "response")
    assert response["message"]["content"] == "hi" and response["finish_reason"] == "stop"
    assert repr(odd)[2:-1] in response["note"] and "not JSON: b'{bad json'" in response["note"]


def test_a_body_too_deep_to_parse_is_relayed_and_the_console_says_so(upstream, proxies):
    proxy = proxies(upstream.url)
    nested = b'{"model": "m", "messages": [{"role": "user", "content": ' + b"[" * 5000 + \
        b"]" * 5000 + b"}]}"
    status, data, _ = post(proxy.url, nested)
    assert status == 200 and json.loads(data) == COMPLETION
    out = proxy.stop()
    assert "a Chat Completions request nested too deeply for agentdbg to read; passed through " \
        "unchecked and unrecorded" in out, out
    assert "Traceback" not in out


def test_the_proxys_running_notes_in_chinese(upstream, proxies):
    """`proxy --lang zh`: a body too deep to read and an unchecked POST path said in Chinese
    (the API's name and the paths verbatim); the app still gets its answers."""
    proxy = proxies(upstream.url, "--lang", "zh")
    nested = b'{"model": "m", "messages": [{"role": "user", "content": ' + b"[" * 5000 + \
        b"]" * 5000 + b"}]}"
    status, data, _ = post(proxy.url, nested)
    assert status == 200 and json.loads(data) == COMPLETION
    post(proxy.url, {"input": "x"}, path="/embeddings")
    out = proxy.stop()
    assert "这个 Chat Completions 请求嵌套太深，agentdbg 无法读取；已原样转发，不检查也不记录" in out, out
    assert ("POST /v1/embeddings 原样转发，不做检查：agentdbg 只检查 /v1/chat/completions、"
            "/v1/responses 和 /v1/messages") in out, out
    assert "Traceback" not in out


# -- the analysis' safety nets, in this process (recordings.analyse runs the analyst's jobs) ---

def test_a_request_whose_checks_fail_is_recorded_unchecked(tmp_path, monkeypatch):
    from recordings import analyse, proxy_exchanges

    import agentdbg.server.proxy.analyst as analyst

    def failing(*args, **kwargs):
        raise RuntimeError("the checks broke")
    monkeypatch.setattr(analyst, "judge", failing)
    (path,), printed = analyse("responses", proxy_exchanges("responses")[:1], tmp_path)
    assert "agentdbg could not check this Responses API request (RuntimeError: the checks broke); " \
        "it is recorded unchecked in conversation 1" in printed, printed
    events = events_of(path)
    assert [e["type"] for e in events] == ["header", "request", "response", "stop"]
    assert events[1]["body"]["input"][0]["content"].startswith("订单") and events[1]["findings"] == []
    assert events[2]["message"]["tool_calls"][0]["id"] == "call_1"


def test_a_response_agentdbg_cannot_read_is_recorded_as_such(tmp_path, monkeypatch):
    from recordings import analyse, proxy_exchanges

    import agentdbg.server.proxy.analyst as analyst

    def failing(*args, **kwargs):
        raise RuntimeError("the reader broke")
    monkeypatch.setattr(analyst, "read_reply", failing)
    (path,), printed = analyse("chat", proxy_exchanges("chat")[:1], tmp_path)
    assert not [line for line in printed if "could not analyse" in line], printed
    events = events_of(path)
    assert [e["type"] for e in events] == ["header", "request", "model_error", "stop"]
    assert events[2]["message"] == ("HTTP 200: agentdbg could not read this response "
                                    "(RuntimeError: the reader broke)")


def test_a_finish_reason_or_usage_a_transcript_cannot_hold_is_noted(tmp_path):
    from recordings import analyse, proxy_exchanges
    from typer.testing import CliRunner

    from agentdbg.cli import app

    exchanges = proxy_exchanges("chat")
    exchanges[0][1]["choices"][0]["finish_reason"] = 5
    exchanges[0][1]["usage"] = {"prompt_tokens": "many", "completion_tokens": 1}
    (path,), _ = analyse("chat", exchanges, tmp_path)
    response = next(e for e in events_of(path) if e["type"] == "response")
    assert response.get("finish_reason") is None and response["usage"] == {"completion_tokens": 1}
    assert response["note"] == ('usage.prompt_tokens "many" is not a number: not recorded; '
                                "finish_reason 5 is not a string: not recorded")
    r = CliRunner().invoke(app, ["replay", str(path), "--json"])    # the transcript reads back
    assert r.exit_code == 0, r.output


def test_a_killed_proxy_leaves_no_analyst_behind_and_loses_no_exchange(upstream, proxies):
    """kill -9 of the proxy: its analyst writes what was relayed, ends the transcripts, exits."""
    import os
    import signal
    from pathlib import Path

    proxy = proxies(upstream.url)
    assert [post(proxy.url, chat(n))[0] for n in range(3)] == [200] * 3
    children = Path(f"/proc/{proxy.proc.pid}/task/{proxy.proc.pid}/children").read_text().split()
    assert len(children) == 1                                   # the analyst
    analyst = int(children[0])
    os.kill(proxy.proc.pid, signal.SIGKILL)
    proxy.proc.wait(10)
    deadline = time.time() + 15
    while time.time() < deadline and Path(f"/proc/{analyst}").exists() \
            and Path(f"/proc/{analyst}/stat").read_text().split()[2] != "Z":
        time.sleep(0.1)
    alive = Path(f"/proc/{analyst}").exists() and Path(f"/proc/{analyst}/stat").read_text().split()[2] != "Z"
    assert not alive, "the analyst outlived the proxy"
    spool = proxy.log.parent / "agentdbg-home" / "spool"
    assert list(spool.glob("proxy-*")) == []               # its backlog folder went with it
    saved = sorted((proxy.log.parent / "saved").glob("*.jsonl"))
    assert len(saved) == 3                      # the last one may have lost its response
    for path in saved:
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert events[1]["type"] == "request" and events[-1]["type"] == "stop"
        answered = events[-2]["type"] == "response"
        assert events[-1]["reason"] == ("completed" if answered else "cancelled")


def test_ctrl_c_with_a_request_in_flight_records_the_request(upstream, proxies):
    """The request was relayed: after Ctrl-C the transcript has it, and says it was never answered."""
    release = threading.Event()

    def held(handler, body):
        if b"question 2" in body:        # the second conversation's model never answers in time
            release.wait(30)
        Upstream.send(handler, 200, json.dumps(COMPLETION).encode())
    upstream.reply = held
    proxy = proxies(upstream.url)
    assert post(proxy.url, chat(1))[0] == 200
    threading.Thread(target=post, args=(proxy.url, chat(2)), kwargs={"timeout": 30},
                     daemon=True).start()
    deadline = time.time() + 10
    while len(upstream.seen) < 2 and time.time() < deadline:
        time.sleep(0.05)
    output = proxy.stop()                 # SIGINT, as Ctrl-C
    release.set()
    saved = sorted((proxy.log.parent / "saved").glob("*.jsonl"))
    assert len(saved) == 2, output
    events = [json.loads(line) for line in saved[1].read_text(encoding="utf-8").splitlines()]
    assert [e["type"] for e in events] == ["header", "request", "stop"]
    assert load_transcript(saved[1]).events[0].messages == [{"role": "user", "content": "question 2"}]
    assert events[2]["reason"] == "cancelled"
    assert events[2]["detail"] == "the proxy stopped before request 1 was answered"


# -- paths and failures of the proxy's own: JSON answers, one line on the console ---------------

@pytest.mark.parametrize("path", ["/v1/%00/x", "/v1/%1b%5b2J/x", "/v1/a%7fb", "/v1/models/%01"])
def test_a_path_with_a_control_character_gets_a_json_400(upstream, proxies, path):
    proxy = proxies(upstream.url)
    host = urllib.parse.urlsplit(proxy.url).netloc
    conn = http.client.HTTPConnection(host, timeout=30)
    conn.request("POST", path, body=b"{}")                # sent as written (curl --path-as-is)
    resp = conn.getresponse()
    data, ctype = resp.read(), resp.getheader("content-type")
    conn.close()
    assert resp.status == 400 and ctype == "application/json", (resp.status, data)
    error = json.loads(data)["error"]
    assert error["type"] == "invalid_request_error" and "control character" in error["message"]
    assert upstream.seen == []                            # never forwarded
    out = proxy.stop()
    assert "Traceback" not in out and "InvalidURL" not in out, out
    said = [line for line in out.splitlines() if "refused" in line]
    assert len(said) == 1 and "the path holds a character a URL cannot carry" in said[0], out
    assert not any(c in out for c in "\x00\x1b\x7f"), out    # shown as escapes


def test_a_path_the_proxy_does_not_serve_gets_a_json_404(upstream, proxies):
    proxy = proxies(upstream.url)
    status, data, headers = post(proxy.url.replace("/v1", ""), chat(), path="/elsewhere")
    assert status == 404 and headers["content-type"] == "application/json"
    assert json.loads(data)["error"]["message"] == "Not Found"


def test_a_failure_of_the_proxy_itself_is_a_json_500_and_one_line():
    import asyncio

    import httpx

    from agentdbg.server.proxy.app import ProxyApp, ProxyOptions

    class Analyst:
        def __init__(self):
            self.notes = []

        def note(self, text):
            self.notes.append(text)

        def add_secret(self, token):
            pass

    analyst = Analyst()
    proxy = ProxyApp(ProxyOptions(upstream="http://127.0.0.1:9/v1"), analyst)

    def broken(request):
        raise RuntimeError("a bug\nover two lines")
    proxy._remember_keys = broken                       # a bug in the relay's own code

    async def call():
        transport = httpx.ASGITransport(app=proxy.starlette())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/v1/chat/completions", json=chat())
    resp = asyncio.run(call())
    assert resp.status_code == 500 and resp.headers["content-type"] == "application/json"
    assert resp.json()["error"] == {"message": "agentdbg proxy failed on this request (RuntimeError)",
                                    "type": "proxy_error", "param": None, "code": None}
    assert analyst.notes == ["agentdbg proxy: failed on POST '/v1/chat/completions': RuntimeError: "
                             "a bug over two lines"]


# -- the upstream URL: Basic credentials are secrets, its query stays a query --------------------

@pytest.mark.parametrize("password", ["pa55-SECRET-word", "pw"])
def test_basic_credentials_from_the_upstream_url_are_never_printed_or_recorded(upstream, proxies,
                                                                               password):
    import base64

    token = base64.b64encode(f"alice:{password}".encode()).decode()

    def echo(handler, body):          # an upstream that says which credentials it got
        said = handler.headers.get("authorization", "")
        if b"question 1" in body:
            upstream.send(handler, 401, json.dumps({"error": {
                "message": f"bad credentials: {said}", "type": "invalid_request_error"}}).encode())
            return
        answer = json.loads(json.dumps(COMPLETION))
        answer["choices"][0]["message"]["content"] = f"you sent {said}"
        upstream.send(handler, 200, json.dumps(answer).encode())
    upstream.reply = echo
    parts = urllib.parse.urlsplit(upstream.url)
    proxy = proxies(f"http://alice:{password}@{parts.netloc}{parts.path}")
    assert post(proxy.url, chat(1))[0] == 401
    status, data, _ = post(proxy.url, chat(2))
    assert status == 200 and token in json.loads(data)["choices"][0]["message"]["content"]
    sent = {k.lower(): v for k, v in upstream.seen[-1]["headers"].items()}
    assert sent["authorization"] == f"Basic {token}"
    out = proxy.stop()
    saved = proxy.saved()
    assert "you sent Basic [REDACTED]" in saved and "bad credentials: Basic [REDACTED]" in out
    for secret in (token, f"alice:{password}"):
        assert secret not in out and secret not in saved, secret


def test_the_upstreams_own_query_stays_a_query_merged_with_the_requests(upstream, proxies):
    proxy = proxies(upstream.url + "?api-version=2024-06-01")
    assert post(proxy.url, chat(1))[0] == 200
    assert upstream.seen[-1]["path"] == "/v1/chat/completions?api-version=2024-06-01"
    assert post(proxy.url, chat(2), path="/chat/completions?trace=1")[0] == 200
    assert upstream.seen[-1]["path"] == "/v1/chat/completions?api-version=2024-06-01&trace=1"
    assert post(proxy.url, chat(3), path="/chat/completions?api-version=2025-01-01")[0] == 200
    assert upstream.seen[-1]["path"] == "/v1/chat/completions?api-version=2025-01-01"
    host = urllib.parse.urlsplit(proxy.url).netloc
    conn = http.client.HTTPConnection(host, timeout=30)
    conn.request("GET", "/v1/models")                     # a passthrough
    assert conn.getresponse().status == 200
    assert upstream.seen[-1]["path"] == "/v1/models?api-version=2024-06-01"


def test_a_lone_surrogate_in_a_blocked_request_is_answered_as_its_escape(upstream, proxies):
    """--block-invalid answers with the findings, which quote the request: a lone surrogate in it
    goes out as the JSON escape."""
    proxy = proxies(upstream.url, "--block-invalid")
    body = (b'{"model": "m", "messages": [{"role": "user", "content": "q"}, {"role": "assistant", '
            b'"content": null, "tool_calls": [{"id": "c1", "type": "function", "function": '
            b'{"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "\\ud800", '
            b'"content": "x"}]}')
    status, data, headers = post(proxy.url, body)
    assert status == 400 and headers["content-type"] == "application/json", data[:300]
    error = json.loads(data)["error"]
    assert error["code"] == "agentdbg_blocked" and "\ud800" in json.dumps(error["findings"],
                                                                          ensure_ascii=False)
    assert upstream.seen == []
    assert "Traceback" not in proxy.stop()
