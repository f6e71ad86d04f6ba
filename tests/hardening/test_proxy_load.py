"""The proxy under load (issue 21): the analysis backlog is bounded in memory and spills to disk,
the stop drains it within a bounded time and names what it could not record, responses are
relayed as sent while the analyst's copy is bounded (a gzip bomb included), and long streams
never hold up another client."""

import contextlib
import gzip
import hashlib
import http.client
import io
import json
import os
import re
import signal
import threading
import time
import urllib.parse
from pathlib import Path

from proxy_helpers import COMPLETION, Proxy, Upstream, chunk, sse
from test_proxy_safety import post


def analyst_of(proxy) -> int:
    pid = proxy.proc.pid
    (child,) = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(child)


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def wait_idle(pid: int, seconds: float = 15) -> None:
    """Until ``pid`` has slept through six looks 50 ms apart: the analyst waits for its next job
    (it prints an exchange's line before it counts the job done; stopped in between, that job
    would still count as left)."""
    deadline, asleep = time.monotonic() + seconds, 0
    while asleep < 6:
        assert time.monotonic() < deadline, "the analyst never went idle"
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        asleep = asleep + 1 if state == "S" else 0
        time.sleep(0.05)


def big(n: int, mb: float) -> bytes:
    text = f"conversation {n} " + "x" * int(mb * (1 << 20))
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()


def wait_for(proxy, text: str, seconds: float = 30) -> str:
    deadline = time.time() + seconds
    while text not in proxy.output():
        assert time.time() < deadline, proxy.output()[-2000:]
        time.sleep(0.05)
    return proxy.output()


def test_the_backlog_of_a_stalled_analyst_stays_bounded_and_is_recorded(upstream, tmp_path,
                                                                        monkeypatch):
    """The analyst gets no CPU (stopped, as under load): 50 requests of 2 MB are relayed at once,
    the relay grows by about its 8 MB queue budget, not by 100 MB; the rest waits on disk and
    every conversation is recorded in the end."""
    monkeypatch.setenv("AGENTDBG_PROXY_QUEUE_MB", "8")
    proxy = Proxy(upstream.url, tmp_path)
    analyst = analyst_of(proxy)
    spool = tmp_path / "agentdbg-home" / "spool"
    try:
        assert post(proxy.url, big(0, 0.001))[0] == 200
        time.sleep(0.5)
        before = rss_mb(proxy.proc.pid)
        os.kill(analyst, signal.SIGSTOP)
        for n in range(1, 51):
            assert post(proxy.url, big(n, 2))[0] == 200
        grown = rss_mb(proxy.proc.pid) - before
        waiting = list(spool.glob("proxy-*/*.body"))
        assert grown < 60, f"the relay grew by {grown:.0f} MB for a 100 MB backlog"
        assert len(waiting) >= 20, waiting
        os.kill(analyst, signal.SIGCONT)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(analyst, signal.SIGCONT)
        out = proxy.stop()
    assert len(list((tmp_path / "saved").glob("*.jsonl"))) == 51, out
    assert "not recorded" not in out and "Traceback" not in out, out
    assert list(spool.glob("proxy-*")) == []                  # the spool folder is gone


def test_the_stop_waits_a_bounded_time_then_names_what_it_could_not_record(upstream, tmp_path):
    proxy = Proxy(upstream.url, tmp_path, "--drain-timeout", "1")
    analyst = analyst_of(proxy)
    try:
        assert post(proxy.url, big(0, 0.001))[0] == 200
        wait_for(proxy, "← response for conversation 1")
        wait_idle(analyst)
        os.kill(analyst, signal.SIGSTOP)
        for n in range(1, 4):
            assert post(proxy.url, big(n, 0.001))[0] == 200
        proxy.proc.send_signal(signal.SIGINT)
        # three exchanges (a request and a response each), not six jobs
        wait_for(proxy, "stopped analysing after 1 s: recording the 3 exchange(s) left without "
                        "analysing them", 15)
        os.kill(analyst, signal.SIGCONT)
        proxy.proc.wait(30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(analyst, signal.SIGCONT)
        out = proxy.stop()
    assert "3 relayed exchange(s) are not recorded in full:" in out, out
    named = [line for line in out.splitlines() if "the proxy's request #" in line and
             "not recorded: the proxy stopped before agentdbg analysed it" in line]
    assert [re.search(r"request #(\d+) \(Chat Completions, ", line).group(1) for line in named] \
        == ["2", "3", "4"], out
    assert all("from 127.0.0.1:" in line for line in named)
    (first,) = (tmp_path / "saved").glob("*.jsonl")           # what was analysed is complete
    assert json.loads(first.read_text(encoding="utf-8").splitlines()[-1])["type"] == "stop"


def raw_response(url: str, body: bytes, path="/v1/chat/completions"):
    """The response exactly as the proxy sent it: status, headers, undecoded bytes."""
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=60)
    conn.request("POST", path, body=body, headers={"content-type": "application/json",
                                                   "accept-encoding": "gzip"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def test_a_gzip_bomb_is_relayed_as_sent_and_inflated_only_up_to_a_cap(upstream, tmp_path):
    """An upstream that compresses although asked for identity: 64 MB of JSON in a small gzip.
    The app gets the very bytes with their content-encoding; the analyst inflates 32 MB of it at
    most and says so."""
    content = "y" * (64 << 20)
    answer = {**COMPLETION, "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": content}}]}
    bomb = gzip.compress(json.dumps(answer).encode(), compresslevel=9, mtime=0)
    assert len(bomb) < 200_000

    def reply(handler, body):
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-encoding", "gzip")
        handler.send_header("content-length", str(len(bomb)))
        handler.end_headers()
        handler.wfile.write(bomb)
    upstream.reply = reply
    proxy = Proxy(upstream.url, tmp_path)
    try:
        status, headers, data = raw_response(proxy.url, big(1, 0.001))
        assert status == 200 and headers.get("content-encoding") == "gzip"
        assert data == bomb
        sent = {k.lower(): v for k, v in upstream.seen[-1]["headers"].items()}
        assert sent["accept-encoding"] == "identity"
        out = wait_for(proxy, "inflates past 32 MB")
        assert rss_mb(analyst_of(proxy)) < 300
    finally:
        out = proxy.stop()
    assert "conversation 1: the upstream's gzip body inflates past 32 MB: agentdbg analysed the " \
        "first 32 MB of it; the app got it as sent" in out, out
    (path,) = (tmp_path / "saved").glob("*.jsonl")
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    error = next(e for e in events if e["type"] == "model_error")
    assert "inflates past 32 MB" in error["message"]


def test_a_stream_larger_than_the_copy_cap_is_relayed_whole_and_the_cut_is_said(upstream, tmp_path):
    piece = "z" * (1 << 20)
    events = [chunk({"role": "assistant", "content": ""})] + \
        [chunk({"content": piece}) for _ in range(40)] + [chunk({}, "stop"), b"[DONE]"]
    stream = sse(*events)

    def reply(handler, body):
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("content-length", str(len(stream)))
        handler.end_headers()
        for start in range(0, len(stream), 1 << 20):
            handler.wfile.write(stream[start:start + (1 << 20)])
    upstream.reply = reply
    proxy = Proxy(upstream.url, tmp_path)
    try:
        body = json.dumps({"model": "m", "stream": True,
                           "messages": [{"role": "user", "content": "long"}]}).encode()
        status, _, data = raw_response(proxy.url, body)
        assert status == 200 and hashlib.sha256(data).digest() == hashlib.sha256(stream).digest()
    finally:
        out = proxy.stop()
    said = "agentdbg analysed the first 32 MB of the 40 MB the upstream sent (the copy of one " \
        "response is capped at 32 MB); the app got all of it"
    assert f"conversation 1: {said}" in out, out[-3000:]
    (path,) = (tmp_path / "saved").glob("*.jsonl")
    response = next(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                    if '"type": "response"' in line)
    assert said in response["note"]


def test_long_streams_never_keep_another_client_waiting(upstream, tmp_path):
    """40 streams that stay open (more than the old pool of 32): a plain request from another
    client is answered at once."""
    release = threading.Event()

    def reply(handler, body):
        if b'"stream": true' not in body:
            Upstream.send(handler, 200, json.dumps(COMPLETION).encode())
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(sse(chunk({"role": "assistant", "content": "thinking"})))
        handler.wfile.flush()
        release.wait(60)
        handler.wfile.write(sse(chunk({}, "stop"), b"[DONE]"))
    upstream.reply = reply
    proxy = Proxy(upstream.url, tmp_path)
    conns = []
    try:
        netloc = urllib.parse.urlsplit(proxy.url).netloc
        body = json.dumps({"model": "m", "stream": True,
                           "messages": [{"role": "user", "content": "slow"}]}).encode()
        for _ in range(40):
            conn = http.client.HTTPConnection(netloc, timeout=60)
            conn.request("POST", "/v1/chat/completions", body=body,
                         headers={"content-type": "application/json"})
            resp = conn.getresponse()
            assert b"thinking" in resp.read1(65536)      # each stream is under way
            conns.append(conn)
        start = time.monotonic()
        status, data, _ = post(proxy.url, {"model": "m", "messages": [
            {"role": "user", "content": "quick"}]}, timeout=20)
        took = time.monotonic() - start
        assert status == 200 and json.loads(data) == COMPLETION
        assert took < 5, f"a plain request waited {took:.1f} s behind 40 streams"
    finally:
        release.set()
        for conn in conns:
            conn.close()
        proxy.stop()


def test_when_every_upstream_connection_is_busy_the_answer_is_a_clear_503(upstream, tmp_path,
                                                                          monkeypatch):
    """Truly exhausted (here: a proxy allowed one connection, held by a stream): the next request
    waits POOL_WAIT at most, then gets a JSON 503 that says so."""
    import asyncio

    import httpx
    from rich.console import Console

    import agentdbg.server.proxy.app as proxy_app
    from agentdbg.server.proxy.analyst import Analysis
    from agentdbg.server.proxy.conversations import Tracker
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.server.proxy.workers import ThreadAnalyst

    monkeypatch.setattr(proxy_app, "POOL_WAIT", 0.5)
    release = threading.Event()

    def reply(handler, body):
        if json.loads(body).get("stream"):
            release.wait(30)
        Upstream.send(handler, 200, json.dumps(COMPLETION).encode())
    upstream.reply = reply
    tracker = Tracker(tmp_path / "saved", upstream.url)
    analyst = ThreadAnalyst(Analysis(tracker, ProxyView(Console(file=io.StringIO(), width=100),
                                                        tracker.redactor), "openai"))
    app = proxy_app.make_app(proxy_app.ProxyOptions(upstream=upstream.url, connections=1), analyst)

    async def both():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            held = asyncio.create_task(client.post("/v1/chat/completions", json={
                "model": "m", "stream": True, "messages": [{"role": "user", "content": "held"}]}))
            while not upstream.seen:
                await asyncio.sleep(0.02)
            busy = await client.post("/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "next"}]})
            release.set()
            return busy, await held
    busy, held = asyncio.run(both())
    assert held.status_code == 200
    assert busy.status_code == 503 and busy.headers["content-type"] == "application/json"
    error = busy.json()["error"]
    assert error["code"] == "proxy_connections_busy" and error["type"] == "proxy_error"
    assert error["message"].startswith("agentdbg proxy: all 1 connections to the upstream "
                                       "http://127.0.0.1:")
    assert error["message"].endswith(" are busy (waited 0.5 s); try again")
    analyst.close(10)
    (path,) = (tmp_path / "saved").glob("*conversation-2.jsonl")   # and the transcript says so
    failed = json.loads(path.read_text(encoding="utf-8").splitlines()[2])
    assert failed["type"] == "model_error" and failed["status"] == 503


def test_the_analyst_follows_a_bounded_amount_of_conversations(tmp_path):
    """Past what it may hold, the proxy ends the conversations the app used least recently:
    their transcripts are complete and say why they ended, the console says so once each, and a
    request that continues one starts a new conversation (never writes after a stop event)."""
    from rich.console import Console

    from agentdbg.server.proxy.analyst import Analysis, _run_job
    from agentdbg.server.proxy.conversations import Tracker
    from agentdbg.server.proxy.view import ProxyView

    tracker = Tracker(tmp_path, "http://upstream.invalid/v1", followed=3 << 20)
    out = io.StringIO()
    analysis = Analysis(tracker, ProxyView(Console(file=out, width=100), tracker.redactor), "openai")
    reply = COMPLETION["choices"][0]["message"]

    def exchange(n: int, messages: list) -> None:
        raw = json.dumps({"model": "m", "messages": messages}).encode()
        _run_job(analysis, ("request", n, raw, "127.0.0.1:1", False, "chat"))
        _run_job(analysis, ("response", n, 200, json.dumps(COMPLETION).encode(), 1.0, False))

    firsts = [[{"role": "user", "content": f"conversation {n} " + "x" * (1 << 20)}] for n in range(5)]
    for n, messages in enumerate(firsts):
        exchange(n + 1, messages)
    exchange(6, [*firsts[0], reply, {"role": "user", "content": "and then?"}])  # continues the 1st
    paths = _run_job(analysis, ("close",))
    printed = out.getvalue()
    assert "conversation 1 ended early to bound the proxy's memory" in printed
    assert "conversation 2 ended early" in printed and "conversation 5 ended early" not in printed
    assert len(paths) == 6                                    # the 6th: the 1st, continued
    for path in paths:
        events = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
        types = [e["type"] for e in events]
        assert types.count("stop") == 1 and types[-1] == "stop", (path, types)
    first = [json.loads(line) for line in Path(paths[0]).read_text(encoding="utf-8").splitlines()]
    assert first[-1]["detail"].endswith("(ended early: the proxy follows at most 3 MB of "
                                        "conversations in memory)")
