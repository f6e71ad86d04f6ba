"""Proxy backlog: the relay's and the analyst's memory when big requests come faster than the
analysis reads them, and how the stop ends it.

A local upstream answers at once; N requests of S MB (each its own conversation) go through
`agentdbg proxy` from C clients at a time. Both processes' resident memory is sampled every
20 ms; then the proxy is stopped (SIGINT) and the time to stop and the transcripts are counted.

    python bench/proxy_backlog.py                 # 80 requests of 16 MB, 8 at a time
    python bench/proxy_backlog.py --requests 20 --mb 4

Target: the relay's memory bounded (about the 64 MB queue budget plus the requests in flight),
every relayed conversation recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from _util import machine

UPSTREAM = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
ANSWER = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
    "content": "ok"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1,
    "total_tokens": 2}}).encode()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        while n:
            n -= len(self.rfile.read(min(n, 1 << 20)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
'''


def rss_mb(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    found = re.search(r"VmRSS:\s+(\d+) kB", text)
    return int(found.group(1)) / 1024 if found else 0.0


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Sampler(threading.Thread):
    def __init__(self, relay: int):
        super().__init__(daemon=True)
        self.relay, self.peak = relay, {"relay": 0.0, "analyst": 0.0}
        self.start_rss = rss_mb(relay)
        self.running = True

    def run(self) -> None:
        while self.running:
            self.peak["relay"] = max(self.peak["relay"], rss_mb(self.relay))
            for child in children(self.relay):
                self.peak["analyst"] = max(self.peak["analyst"], rss_mb(child))
            time.sleep(0.02)


def body(n: int, mb: int) -> bytes:
    text = (f"conversation {n}: " + "x" * (mb << 20))[: mb << 20]
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=80)
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--stall", action="store_true",
                    help="stop the analyst (SIGSTOP) while the requests are sent, as a starved one")
    ap.add_argument("--drain", type=float, default=60.0, help="the proxy's --drain-timeout")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="agentdbg-backlog-"))
    env = {**os.environ, "AGENTDBG_HOME": str(folder / "home"), "NO_COLOR": "1"}
    up = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE, text=True)
    port = int(up.stdout.readline())
    log = open(folder / "proxy.log", "w+", encoding="utf-8")
    proxy = subprocess.Popen([sys.executable, "-m", "agentdbg", "proxy", "--upstream",
                              f"http://127.0.0.1:{port}/v1", "--port", "0", "--save",
                              str(folder / "saved"), "--drain-timeout", str(args.drain)], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        url = ""
        while not url:
            time.sleep(0.05)
            first = (folder / "proxy.log").read_text().split("\n", 1)
            url = first[0].split()[2] if len(first) == 2 and "http://" in first[0] else ""
        sampler = Sampler(proxy.pid)
        sampler.start()
        (analyst,) = children(proxy.pid)
        if args.stall:
            os.kill(analyst, signal.SIGSTOP)
        start = time.perf_counter()
        with httpx.Client(timeout=600) as client, ThreadPoolExecutor(args.concurrency) as pool:
            codes = list(pool.map(lambda n: client.post(f"{url}/chat/completions",
                                                        content=body(n, args.mb)).status_code,
                                  range(args.requests)))
        relayed = time.perf_counter() - start
        relay_rss = rss_mb(proxy.pid)
        if args.stall:
            os.kill(analyst, signal.SIGCONT)
        proxy.send_signal(signal.SIGINT)
        stop = time.perf_counter()
        proxy.wait(600)
        stopped = time.perf_counter() - stop
        sampler.running = False
        saved = list((folder / "saved").glob("*.jsonl"))
        print(f"proxy_backlog: {machine()}")
        print(f"  {args.requests} requests of {args.mb} MB, {args.concurrency} at a time: "
              f"{codes.count(200)} answered 200 in {relayed:.1f} s")
        print(f"  relay RSS: {sampler.start_rss:.0f} MB at start, {relay_rss:.0f} MB when all were "
              f"relayed, peak {sampler.peak['relay']:.0f} MB" + (" (analyst stopped meanwhile)"
                                                                 if args.stall else ""))
        print(f"  analyst RSS: peak {sampler.peak['analyst']:.0f} MB")
        print(f"  stop (SIGINT) took {stopped:.1f} s; transcripts: {len(saved)} of {args.requests}")
        said = [line for line in (folder / "proxy.log").read_text().splitlines()
                if line.startswith("agentdbg")]
        for line in said[-6:]:
            print(f"  said: {line[:150]}")
    finally:
        if proxy.poll() is None:
            proxy.kill()
        up.kill()


if __name__ == "__main__":
    main()
