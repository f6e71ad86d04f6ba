"""Transcript size: a proxy conversation whose user message is 1 MB, in each wire format.

The conversation is two exchanges (the model calls a tool, then answers), analysed and recorded
as the proxy's analyst does it. Prints the transcript's size and how many times the message's
text is in it.

    python bench/transcript_size.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "hardening"))

from _util import machine
from recordings import analyse, proxy_exchanges

SIZE = 1_000_000


def with_big_question(wire: str, text: str) -> list:
    exchanges = proxy_exchanges(wire)
    for request, _ in exchanges:
        key = "input" if wire == "responses" else "messages"
        items = request.get(key) or []
        for item in items:
            if isinstance(item, dict) and item.get("role") == "user" and isinstance(item.get("content"), str):
                item["content"] = text
    return exchanges


def main() -> None:
    words = (f"订单{n:07d} " for n in range(SIZE))
    text = ""
    for w in words:                    # 1 MB of UTF-8 that repeats nowhere
        text += w
        if len(text.encode()) >= SIZE:
            break
    marker = json.dumps(text, ensure_ascii=False)[1:-1][-200:]
    print(f"machine: {machine()}")
    print(f"message: {len(text.encode()) / 1e6:.1f} MB (UTF-8); two exchanges, the second resends it")
    for wire in ("chat", "responses", "anthropic"):
        folder = tempfile.mkdtemp()
        (path,), _ = analyse(wire, with_big_question(wire, text), folder)
        data = Path(path).read_text(encoding="utf-8")
        copies = data.count(marker)
        print(f"{wire:10} transcript {len(data.encode()) / 1e6:6.2f} MB   the message {copies} time(s)")


if __name__ == "__main__":
    main()
