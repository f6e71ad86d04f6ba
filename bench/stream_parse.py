"""Reading a relayed stream back: a Chat Completions stream of up to 5.6 MB (one long answer
and a call with long arguments, in small deltas) read as the proxy's analyst reads it
(``read_reply``: the whole body at once) and fed in 1 KB chunks, beside a bare linear parse
of the same bytes (split the lines, ``json.loads`` each ``data:`` line) timed in the same run.

Target: the 5.6 MB stream read in <= 0.2 s on a quiet machine (the bare parse takes 76 ms
there), and linear: the time per MB stays flat as the stream grows.

    python bench/stream_parse.py
"""

from __future__ import annotations

import json
import time

from _util import machine

from agentdbg.server.proxy.reading import read_reply
from agentdbg.wire.chat import ChatCodec, StreamAccumulator, encode_stream

BYTES_PER_REPEAT = 401      # what one repeat of the sentence below adds to the stream


def chat_stream(megabytes: float) -> bytes:
    text = "杭州转运中心已发出，" * int(megabytes * 1e6 / BYTES_PER_REPEAT)
    message = {"role": "assistant", "content": text, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "save", "arguments": json.dumps({"body": text[: len(text) // 4]})}}]}
    return b"".join(encode_stream(message, completion_id="c", model="m", created=0,
                                  finish_reason="tool_calls"))


def bare(data: bytes) -> float:
    start = time.perf_counter()
    for line in data.split(b"\n"):
        if line.startswith(b"data: {"):
            json.loads(line[6:])
    return time.perf_counter() - start


def analyst(data: bytes) -> float:
    start = time.perf_counter()
    replied = read_reply(ChatCodec(), 200, data, True)
    assert replied.reply is not None and replied.reply.message["tool_calls"][0]["function"]["name"] == "save"
    return time.perf_counter() - start


def chunked(data: bytes, size: int = 1024) -> float:
    start = time.perf_counter()
    acc = StreamAccumulator()
    for i in range(0, len(data), size):
        acc.feed(data[i:i + size])
    acc.close()
    assert acc.message["tool_calls"][0]["function"]["name"] == "save"
    return time.perf_counter() - start


def main() -> None:
    print(f"machine: {machine()}")
    print(f"{'MB':>5} {'bare parse s':>13} {'analyst s':>10} {'x bare':>7} {'s/MB':>6} "
          f"{'1KB chunks s':>13}")
    last = None
    for mb in (0.7, 1.4, 2.8, 5.6):
        data = chat_stream(mb)
        base = min(bare(data) for _ in range(3))
        whole = min(analyst(data) for _ in range(3))
        pieces = min(chunked(data) for _ in range(3))
        last = (len(data) / 1e6, base, whole)
        print(f"{len(data) / 1e6:>5.1f} {base:>13.3f} {whole:>10.3f} {whole / base:>7.2f} "
              f"{whole / (len(data) / 1e6):>6.3f} {pieces:>13.3f}")
    assert last is not None
    size, base, whole = last
    print(f"{size:.1f} MB read by the analyst in {whole:.3f} s, {whole / base:.2f}x the bare parse "
          f"(target <= 0.2 s on a quiet machine, where the bare parse takes 0.076 s: "
          f"<= {0.2 / 0.076:.1f}x)")


if __name__ == "__main__":
    main()
