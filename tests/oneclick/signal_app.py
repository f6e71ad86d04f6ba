"""A command for the terminal and signal tests, run under `agentdbg proxy -- python signal_app.py
MODE`: it says what its terminal is, asks the model through the proxy (OPENAI_BASE_URL), and
does what MODE says with the signals it gets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request


def ask(text: str) -> str:
    body = {"model": "demo", "messages": [{"role": "user", "content": text}]}
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps(body).encode(),
        headers={"content-type": "application/json",
                 "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(request, timeout=60) as resp:
        return json.load(resp)["choices"][0]["message"]["content"] or ""


def main() -> int:
    mode = sys.argv[1]
    got: list[int] = []
    signal.signal(signal.SIGINT, lambda n, f: got.append(n))
    signal.signal(signal.SIGTERM, lambda n, f: got.append(n))
    if mode == "tty":
        print("tty:", os.isatty(0), os.isatty(1), os.isatty(2), flush=True)
        print("type a line:", flush=True)
        line = sys.stdin.readline().strip()
        print(f"got: {line}; model: {bool(ask(line))}", flush=True)
        return 0
    ask("before the signal")
    if mode == "orphan":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        print("left a process behind", flush=True)
        return 0
    print("ready", flush=True)
    wanted = 2 if mode == "sigint" else 1
    while len(got) < wanted:
        if mode == "sigint" and len(got) == 1 and not getattr(main, "said", False):
            print("first Ctrl-C: ignored", flush=True)
            main.said = True  # type: ignore[attr-defined]
        time.sleep(0.05)
    ask(f"after {signal.Signals(got[-1]).name}")
    print(f"answered after {signal.Signals(got[-1]).name}", flush=True)
    return 5


if __name__ == "__main__":
    sys.exit(main())
