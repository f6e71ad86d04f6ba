"""Reading a relayed stream back: a 5.6 MB Chat Completions stream (one long answer and a
call with long arguments, in small deltas) fed to each format's accumulator, whole (as the
proxy's analyst gets it) and in 1 KB chunks. The time should grow linearly with the size.

    python bench/stream_parse.py
"""

from __future__ import annotations

import json
import time

from agentdbg.wire.chat import StreamAccumulator, encode_stream


def chat_stream(megabytes: float) -> bytes:
    text = "杭州转运中心已发出，" * int(megabytes * 1e6 / 60)
    message = {"role": "assistant", "content": text, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "save", "arguments": json.dumps({"body": text[: len(text) // 4]})}}]}
    return b"".join(encode_stream(message, completion_id="c", model="m", created=0,
                                  finish_reason="tool_calls"))


def timed(data: bytes, chunk: int | None) -> float:
    start = time.perf_counter()
    acc = StreamAccumulator()
    if chunk is None:
        acc.feed(data)
    else:
        for i in range(0, len(data), chunk):
            acc.feed(data[i:i + chunk])
    acc.feed(b"\n")     # the end of the stream (works on older versions too)
    assert acc.message["tool_calls"][0]["function"]["name"] == "save"
    return time.perf_counter() - start


def main() -> None:
    print(f"{'MB':>6} {'whole s':>8} {'1KB chunks s':>13}")
    for mb in (0.7, 1.4, 2.8, 5.6):
        data = chat_stream(mb)
        whole = min(timed(data, None) for _ in range(3))
        chunked = min(timed(data, 1024) for _ in range(3))
        print(f"{len(data) / 1e6:>6.1f} {whole:>8.3f} {chunked:>13.3f}")


if __name__ == "__main__":
    main()
