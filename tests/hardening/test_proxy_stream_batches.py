"""A stream's events go out in batches: what arrived together leaves together, in as few writes
as the relay can, byte for byte; an event that comes alone still leaves at once."""

import asyncio
import json
import threading

import httpx
from proxy_helpers import chunk

from agentdbg.server.proxy.batches import batches

EVENTS = 1000


def sse_events(n: int) -> list[bytes]:
    """A Chat Completions stream of ``n`` events: one text delta each, then the end."""
    parts = [b"data: " + json.dumps(chunk({"role": "assistant", "content": ""})).encode() + b"\n\n"]
    parts += [b"data: " + json.dumps(chunk({"content": f"词{k} "})).encode() + b"\n\n"
              for k in range(n - 3)]
    parts.append(b"data: " + json.dumps(chunk({}, finish="stop")).encode() + b"\n\n")
    parts.append(b"data: [DONE]\n\n")
    return parts


def chunked(parts: list[bytes]) -> bytes:
    """``parts`` in HTTP/1.1 chunked encoding, one chunk each, as a server writes them."""
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts)


def start_stream(handler) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()


def streamed(url: str) -> list[bytes]:
    """The pieces (HTTP chunks) the app receives for one streamed request."""
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", url + "/chat/completions",
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "q"}]}) as r:
        assert r.status_code == 200
        return list(r.iter_raw())


def test_a_burst_of_events_goes_out_in_a_few_writes_byte_for_byte(upstream, proxy):
    events = sse_events(EVENTS)

    def burst(handler, body):           # every event its own chunk, all sent at once
        start_stream(handler)
        handler.wfile.write(chunked(events) + b"0\r\n\r\n")
    upstream.reply = burst
    pieces = streamed(proxy.url)
    assert b"".join(pieces) == b"".join(events)
    # one write per event before (1,000 pieces); now what arrived together goes out together
    assert len(pieces) < EVENTS // 10, len(pieces)
    out = proxy.stop()
    assert "✓ no findings" in out  # the analyst got the whole stream


def test_an_event_that_comes_alone_goes_out_at_once(upstream, proxy):
    events = sse_events(10)
    released = threading.Event()
    waited_out = []

    def trickle(handler, body):        # the first event, then the rest once the app has it
        start_stream(handler)
        handler.wfile.write(chunked(events[:1]))
        handler.wfile.flush()
        waited_out.append(not released.wait(20))
        handler.wfile.write(chunked(events[1:]) + b"0\r\n\r\n")
    upstream.reply = trickle
    got = b""
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", proxy.url + "/chat/completions",
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "q"}]}) as r:
        for piece in r.iter_raw():
            got += piece
            released.set()
    assert got == b"".join(events)
    assert waited_out == [False]       # the first event reached the app before the rest was sent


def test_the_reader_stays_at_most_its_allowance_ahead_of_a_slow_app():
    read = []

    async def source():
        for k in range(100):
            read.append(k)
            yield b"x" * 10

    async def main():
        out = batches(source(), ahead=50)
        first = await out.__anext__()
        for _ in range(20):             # the app does not ask for more: the reader waits
            await asyncio.sleep(0)
        ahead = len(read)
        rest = [piece async for piece in out]
        return first, ahead, rest

    first, ahead, rest = asyncio.run(main())
    assert ahead <= 6 + len(first) // 10, ahead   # about 50 bytes past what was written
    assert first + b"".join(rest) == b"x" * 1000  # and nothing is lost
