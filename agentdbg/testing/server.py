"""A small in-process OpenAI-compatible endpoint, stdlib only (no streaming).

``POST /v1/chat/completions`` and ``GET /v1/models``. The test suite and the
benchmarks start it in a thread to drive the real ``openai`` client over real
HTTP, with an ``intercept`` hook to misbehave on purpose (status codes, malformed
bodies, delays). Users get ``agentdbg serve`` (``serve.py``), which also streams.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agentdbg.errors import ProviderError
from agentdbg.providers.base import ModelRequest, Provider
from agentdbg.transcript.events import JSON, JSONObject
from agentdbg.wire.chat import completion_json

#: a hook that may answer instead of the provider: (path, body) -> (status, payload) or None
Intercept = Callable[[str, JSONObject], "tuple[int, JSONObject | bytes] | None"]


def error_payload(message: str, type_: str = "invalid_request_error",
                  code: JSON = None) -> JSONObject:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    server: ModelServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = -1  # headers and body leave in one write: no 40 ms delayed-ACK stall per request

    def log_message(self, format: str, *args: object) -> None:  # quiet by default
        pass

    def _send(self, status: int, payload: JSONObject | bytes) -> None:
        """Send JSON (a dict) or raw bytes (a test server misbehaving on purpose)."""
        data = payload if isinstance(payload, bytes) else \
            json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [
                {"id": self.server.model_name, "object": "model", "owned_by": "agentdbg"}]})
        else:
            self._send(404, error_payload(f"no route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._send(400, error_payload("request body is not JSON"))
        self.server.requests.append(body)
        if self.server.intercept:
            answer = self.server.intercept(self.path, body)
            if answer is not None:
                return self._send(*answer)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._send(404, error_payload(f"no route {self.path}"))
        try:
            with self.server.lock:
                reply = self.server.provider.complete(ModelRequest.from_body(body))
        except ProviderError as exc:
            return self._send(500, error_payload(exc.message, "server_error"))
        self.server.count += 1
        self._send(200, completion_json(reply.message, body, reply.usage, reply.finish_reason))


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, provider: Provider, host: str = "127.0.0.1", port: int = 0,
                 intercept: Intercept | None = None, model_name: str = "offline"):
        super().__init__((host, port), _Handler)
        self.provider = provider
        self.intercept = intercept
        self.model_name = model_name
        self.requests: list[JSONObject] = []
        self.count = 0
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}/v1"

    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket],
                     client_address: object) -> None:
        """A client that went away mid-answer (a timeout, a test that is done) is not an error:
        no traceback on the test run's output. Anything else is printed as usual."""
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):   # BrokenPipe, ConnectionReset …
            return
        super().handle_error(request, client_address)

    def start(self) -> ModelServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True,
                         name="agentdbg-server").start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
