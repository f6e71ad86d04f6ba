"""A real `agentdbg collect` process on a free port, and a receiver standing in for the user's
own collector (it keeps every request it gets, bytes and headers)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .tests_env import clean_env


class Collect:
    def __init__(self, tmp: Path, *args: str, env: dict | None = None):
        self.log = tmp / "collect.err"
        self.out = tmp / "collect.out"
        self.save = tmp / "collected"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentdbg", "collect", "--port", "0", "--save", str(self.save), *args],
            stdout=open(self.out, "wb"), stderr=open(self.log, "wb"), env=env or clean_env())
        deadline = time.time() + 30
        while time.time() < deadline:
            found = re.search(r"OTEL_EXPORTER_OTLP_ENDPOINT=(http://[^\s;；]+)[;；]", self.log.read_text())
            if found:
                self.endpoint = found.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"collect did not start: {self.log.read_text()}")

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        return self.log.read_text(encoding="utf-8")

    def transcripts(self) -> list[Path]:
        return sorted(self.save.glob("*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))


class Receiver:
    """The user's real collector: keeps (path, content-type, content-encoding, body) of each POST."""

    def __init__(self) -> None:
        got = self.got = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                got.append((self.path, self.headers.get("content-type"),
                            self.headers.get("content-encoding"), body))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
