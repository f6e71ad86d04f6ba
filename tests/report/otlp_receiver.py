"""A real OTLP/HTTP trace receiver on 127.0.0.1, built on the official protobuf definitions.

It decodes each POST to /v1/traces as an ExportTraceServiceRequest (protobuf, optionally
gzip-compressed), keeps it, and answers with an ExportTraceServiceResponse, as a
Collector does. ``status`` makes it refuse (e.g. 400) to test delivery failures.
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from support import QuietServer


class Receiver:
    def __init__(self, status: int = 200):
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        self.content_types: list[str] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.paths.append(self.path)
                receiver.content_types.append(self.headers.get("Content-Type") or "")
                if receiver.status != 200 or self.path != "/v1/traces":
                    self.send_response(receiver.status if receiver.status != 200 else 404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.requests.append(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def spans(self) -> list:
        """Every span received, as protobuf Span messages."""
        return [span for r in self.requests for rs in r.resource_spans
                for ss in rs.scope_spans for span in ss.spans]

    def scopes(self) -> list:
        return [ss.scope for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans]


def attributes(span) -> dict:
    """A protobuf span's (or event's) attributes as plain Python values."""
    out = {}
    for kv in span.attributes:
        out[kv.key] = value_of(kv.value)
    return out


def value_of(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value_of(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None
