"""The relay's own client to the upstream (``server/proxy/upstream.py``): a streamed answer costs the
relay little CPU, and answers HTTP/1.1 allows in other shapes (a body that ends when the
connection does, a ``100 Continue`` first) are relayed whole, and recorded."""

import json
import os

import httpx
from proxy_helpers import COMPLETION
from test_proxy_stream_batches import chunked, sse_events, start_stream, streamed

EVENTS = 1000
ROUNDS = 10


def relay_cpu_ms(pid: int) -> float:
    """CPU ms process ``pid`` has used, every thread counted (the analyst is another process)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
            total += int(fh.read().split()[0])
    return total / 1e6


def test_a_streamed_answer_of_1000_events_costs_the_relay_little_cpu(upstream, proxy):
    """Read through httpx (httpcore, h11: each piece of the chunked encoding through ten layers of
    Python), this answer (its 1,000 events sent as 1,000 chunks at once) cost the relay 31.6 ms
    of CPU on the 2-core test machine; read with httptools, 5.4 ms."""
    events = sse_events(EVENTS)
    whole = chunked(events) + b"0\r\n\r\n"

    def burst(handler, body):
        start_stream(handler)
        handler.wfile.write(whole)
    upstream.reply = burst
    for _ in range(2):                    # the connections and code paths warm
        assert b"".join(streamed(proxy.url)) == b"".join(events)
    before = relay_cpu_ms(proxy.proc.pid)
    for _ in range(ROUNDS):
        assert b"".join(streamed(proxy.url)) == b"".join(events)
    per_answer = (relay_cpu_ms(proxy.proc.pid) - before) / ROUNDS
    assert per_answer < 9.0, f"{per_answer:.1f} ms of relay CPU per streamed answer"
    assert "✓ no findings" in proxy.stop()    # and the analyst got every answer


def test_an_answer_that_ends_with_its_connection_is_relayed_whole(upstream, proxy):
    data = json.dumps(COMPLETION).encode()

    def until_close(handler, body):       # no length, no chunks: the body ends at the close
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.wfile.write(data[:40])
        handler.wfile.flush()
        handler.wfile.write(data[40:])
        handler.close_connection = True
    upstream.reply = until_close
    with httpx.Client(timeout=30) as client:
        for _ in range(2):                # and the next request gets a fresh connection
            r = client.post(proxy.url + "/chat/completions",
                            json={"model": "m", "messages": [{"role": "user", "content": "q"}]})
            assert r.status_code == 200 and r.content == data
    out = proxy.stop()
    assert out.count("hello") >= 2 and "not recorded" not in out
    assert proxy.saved().count('"content": "hello"') + proxy.saved().count('"content":"hello"') >= 2


def test_an_interim_100_continue_is_not_the_answer(upstream, proxy):
    def continue_first(handler, body):
        handler.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        handler.wfile.flush()
        upstream.send(handler, 200, json.dumps(COMPLETION).encode())
    upstream.reply = continue_first
    r = httpx.post(proxy.url + "/chat/completions", timeout=30,
                   json={"model": "m", "messages": [{"role": "user", "content": "q"}]})
    assert r.status_code == 200 and r.json() == COMPLETION
    assert "✓ no findings" in proxy.stop()


def test_an_upstream_with_endless_headers_is_cut_at_a_bound(upstream, proxy):
    """An upstream that sends header after header (or interim answer after interim answer),
    never ending its head: the relay stops at 64 KiB and answers 502 at once, instead of
    holding every header it is sent until the app gives up."""
    def endless(handler, body, interim):
        try:
            if not interim:
                handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
            i = 0
            while True:                # until the relay hangs up
                handler.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n" if interim
                                    else b"x-filler-%08d: %s\r\n" % (i, b"y" * 24))
                i += 1
        except OSError:
            pass
        handler.close_connection = True
    for interim in (False, True):
        upstream.reply = lambda h, b, interim=interim: endless(h, b, interim)
        r = httpx.post(proxy.url + "/chat/completions", timeout=20,
                       json={"model": "m", "messages": [{"role": "user", "content": "q"}]})
        assert r.status_code == 502 and "RemoteProtocolError" in r.text, r.text
    assert "Traceback" not in proxy.stop()


def test_an_upstream_that_closes_mid_body_cuts_the_answer_and_says_so(upstream, proxy):
    """The app sees the cut (its client raises, as a direct connection would make it), and the
    proxy says what happened in one line, no traceback."""
    def cut(handler, body):
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", "1000")
        handler.end_headers()
        handler.wfile.write(b'{"id": "chatcmpl-1", ')
        handler.wfile.flush()
        handler.close_connection = True
    upstream.reply = cut
    try:
        r = httpx.post(proxy.url + "/chat/completions", timeout=30,
                       json={"model": "m", "messages": [{"role": "user", "content": "q"}]})
        got = r.content
    except httpx.HTTPError:
        got = b"raised"
    assert got != json.dumps(COMPLETION).encode()
    out = proxy.stop()
    assert "Traceback" not in out


def test_an_app_that_drops_a_stream_stops_the_upstream_and_what_arrived_is_recorded(upstream, proxy):
    """The app closes its connection after the first event: the proxy stops reading the upstream
    at once (its connection closes, so a real API stops generating) and records the events that
    arrived, without a traceback."""
    import threading
    import time

    events = sse_events(400)
    upstream_cut = threading.Event()

    def endless(handler, body):          # an event every 20 ms until the proxy hangs up
        start_stream(handler)
        try:
            for event in events:
                handler.wfile.write(chunked([event]))
                handler.wfile.flush()
                time.sleep(0.02)
        except OSError:
            upstream_cut.set()
        handler.close_connection = True
    upstream.reply = endless
    with httpx.Client(timeout=30) as client, client.stream(
            "POST", proxy.url + "/chat/completions",
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "q"}]}) as r:
        first = next(r.iter_raw())
        assert first.startswith(b"data: ")
    assert upstream_cut.wait(5), "the proxy went on reading the upstream after the app left"
    out = proxy.stop()
    assert "Traceback" not in out
    assert '"type": "response"' in proxy.saved()   # what arrived of the answer is recorded
