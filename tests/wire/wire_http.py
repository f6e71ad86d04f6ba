"""A real HTTP server on 127.0.0.1 answering ``POST /v1/responses`` and ``POST /v1/messages``
from the wire builders and encoders, with agentdbg's offline model behind the chat form.

Every request is checked first and rejected with the real API's status and error body when
the checker finds an error, as ``serve`` will do.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

from support import QuietServer

from agentdbg.checker.formats import check_anthropic, check_responses
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.offline import OfflineModel
from agentdbg.wire import (
    anthropic,
    anthropic_reply,
    anthropic_stream,
    responses,
    responses_reply,
    responses_stream,
)

FORMATS = {
    "/v1/responses": (check_responses, responses.to_chat, responses_reply.response_json,
                      responses_stream.encode_stream, responses_reply.rejection),
    "/v1/messages": (check_anthropic, anthropic.to_chat, anthropic_reply.message_json,
                     anthropic_stream.encode_stream, anthropic_reply.rejection),
}


class WireServer(QuietServer):
    daemon_threads = True

    def __init__(self, reasoning: str | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reasoning = reasoning          # the offline model's "thinking", as a reasoning model
        self.requests: list[dict] = []      # bodies as received
        self.findings: list[list] = []      # what the checker said about each
        self.sent: list[bytes] = []         # the bytes answered

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> WireServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: WireServer

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        route = FORMATS.get(self.path.split("?")[0])
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if route is None:
            return self._json(404, {"error": {"message": "no such route"}})
        check, to_chat, build, encode, rejection = route
        self.server.requests.append(body)
        findings = check(body)
        self.server.findings.append(findings)
        rejected = rejection(findings)
        if rejected:
            return self._json(*rejected)
        form = to_chat(body)
        reply = OfflineModel().complete(ModelRequest(
            messages=form.messages, tools=form.tools, tool_choice=form.tool_choice,
            model=body.get("model") or "offline"))
        message = dict(reply.message)
        if self.server.reasoning and message.get("tool_calls"):
            message["reasoning_content"] = self.server.reasoning
        native = build(message, body, reply.usage, reply.finish_reason)
        if not body.get("stream"):
            return self._json(200, native)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        chunks = list(encode(native))
        self.server.sent.append(b"".join(chunks))
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.server.sent.append(data)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
