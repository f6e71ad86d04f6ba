"""A recording upstream on 127.0.0.1 and a real ``agentdbg proxy`` process in front of it."""

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from support import QuietServer

COMPLETION = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "hello"}}],
              "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def sse(*chunks) -> bytes:
    return b"".join(b"data: " + (c if isinstance(c, bytes) else json.dumps(c).encode()) + b"\n\n"
                    for c in chunks)


def chunk(delta: dict, finish=None) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


class Upstream:
    """Answers every request; remembers each one's path, query and headers.

    ``reply(handler, body)`` may be replaced to answer differently."""

    def __init__(self):
        self.seen: list[dict] = []
        self.reply = self.completion
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                upstream.seen.append({"method": self.command, "path": self.path,
                                      "headers": dict(self.headers), "size": len(body)})
                upstream.reply(self, body)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def send(handler, status: int, data: bytes, ctype="application/json") -> None:
        handler.send_response(status)
        handler.send_header("content-type", ctype)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def completion(self, handler, body: bytes) -> None:
        self.send(handler, 200, json.dumps(COMPLETION).encode())

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Proxy:
    """``agentdbg proxy`` in its own process; ``output()`` is what it printed."""

    def __init__(self, upstream: str, tmp_path: Path, *args, nofile: int | None = None):
        self.log = tmp_path / "proxy.log"
        self.fh = open(self.log, "w", encoding="utf-8")

        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentdbg", "proxy", "--upstream", upstream, "--port", "0",
             "--save", str(tmp_path / "saved"), *args], stdout=self.fh, stderr=subprocess.STDOUT,
            env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}, preexec_fn=limit,
            start_new_session=True)  # its own group: stop() ends its analyst process too
        deadline = time.time() + 30
        while time.time() < deadline:
            first = self.output().split("\n", 1)
            if len(first) == 2 and "http://" in first[0]:
                self.url = first[0].split()[2]
                return
            if self.proc.poll() is not None:
                raise AssertionError(self.output())
            time.sleep(0.05)
        raise AssertionError(f"the proxy never said its URL: {self.output()}")

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        with contextlib.suppress(OSError):  # whatever it started (its analyst) goes with it
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.fh.close()
        return self.output()

    def saved(self) -> str:
        """Every transcript the proxy wrote, as one text."""
        folder = self.log.parent / "saved"
        return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.jsonl")))


class Serve(Proxy):
    """``agentdbg serve ARGS`` in its own process (its first line ends with its URL)."""

    def __init__(self, tmp_path: Path, *args):  # not Proxy.__init__: that starts a proxy
        self.log = tmp_path / "serve.log"
        self.fh = open(self.log, "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "serve", "--port", "0", *args],
                                     stdout=self.fh, stderr=subprocess.STDOUT,
                                     env={**os.environ, "NO_COLOR": "1"}, start_new_session=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            first = self.output().split("\n", 1)
            if len(first) == 2 and "http://" in first[0]:
                self.url = first[0].split()[-1]
                return
            if self.proc.poll() is not None:
                raise AssertionError(self.output())
            time.sleep(0.05)
        raise AssertionError(f"serve never said its URL: {self.output()}")
