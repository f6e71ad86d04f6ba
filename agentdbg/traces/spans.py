"""OpenTelemetry spans, decoded from OTLP (JSON or protobuf) into one plain shape.

``Span`` holds what the readers use: ids (hex, as OTLP/JSON writes them), name, times, the
attributes as plain values (``{"stringValue": "x"}`` → ``"x"``, an ``arrayValue`` a list, a
``kvlistValue`` a dict), the events, the status and the resource's attributes. OTLP/JSON is
``ExportTraceServiceRequest`` (``resourceSpans`` → ``scopeSpans`` → ``spans``); protobuf is the
same message, read with ``opentelemetry-proto``. Each value read is data: a field of the wrong
shape is an ``OtlpError`` naming where it is.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import N_, Msg

MAX_SPANS = 1_000_000      # spans in one export request or file document


class OtlpError(ValueError):
    """Not an OTLP trace export (the text says where)."""


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int = 0
    end_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None           # the status message when the status is ERROR
    resource: dict[str, Any] = field(default_factory=dict)

    @property
    def latency_ms(self) -> float | None:
        return (self.end_ns - self.start_ns) / 1e6 if self.end_ns >= self.start_ns > 0 else None


# -- OTLP/JSON -------------------------------------------------------------------------------

def from_json(doc: Any, where: str = "") -> list[Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP/JSON."""
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans", doc.get("resource_spans")), list):
        raise OtlpError(Msg(N_("{where}not an OTLP trace export (no 'resourceSpans' array)"),
                            {"where": where}))
    out: list[Span] = []
    resource_spans: list[Any] = doc.get("resourceSpans", doc.get("resource_spans")) or []
    for r, rs in enumerate(resource_spans):
        at = f"{where}resourceSpans[{r}]"
        if not isinstance(rs, dict):
            raise OtlpError(Msg("{at} must be an object", {"at": at}))
        resource = _attributes_json(_get(rs, "resource", {}).get("attributes"), f"{at}.resource")
        scopes = rs.get("scopeSpans", rs.get("scope_spans", rs.get("instrumentationLibrarySpans", [])))
        if not isinstance(scopes, list):
            raise OtlpError(Msg("{at}.scopeSpans must be an array", {"at": at}))
        for s, ss in enumerate(scopes):
            spans = ss.get("spans") if isinstance(ss, dict) else None
            if not isinstance(spans, list):
                raise OtlpError(Msg("{at}.scopeSpans[{s}].spans must be an array", {"at": at, "s": s}))
            for k, span in enumerate(spans):
                out.append(_span_json(span, f"{at}.scopeSpans[{s}].spans[{k}]", resource))
                if len(out) > MAX_SPANS:
                    raise OtlpError(Msg("{where}more than {limit} spans in one export",
                                        {"where": where, "limit": MAX_SPANS}))
    return out


def _get(value: Any, key: str, default: Any) -> Any:
    got = value.get(key, default) if isinstance(value, dict) else default
    return got if isinstance(got, type(default)) else default


def _span_json(span: Any, at: str, resource: dict[str, Any]) -> Span:
    if not isinstance(span, dict):
        raise OtlpError(Msg("{at} must be an object", {"at": at}))
    trace, sid = span.get("traceId", span.get("trace_id")), span.get("spanId", span.get("span_id"))
    if not isinstance(trace, str) or not isinstance(sid, str):
        raise OtlpError(Msg("{at}: field 'traceId' and 'spanId' must be strings", {"at": at}))
    parent = span.get("parentSpanId", span.get("parent_span_id"))
    events = []
    for e, ev in enumerate(span.get("events") or []):
        if isinstance(ev, dict):
            events.append((str(ev.get("name") or ""), _nanos(ev.get("timeUnixNano")),
                           _attributes_json(ev.get("attributes"), f"{at}.events[{e}]")))
    status: dict[str, Any] = span["status"] if isinstance(span.get("status"), dict) else {}
    code = status.get("code")
    failed = code in (2, "2", "STATUS_CODE_ERROR")
    return Span(_hex(trace), _hex(sid), _hex(parent) if isinstance(parent, str) and parent else None,
                str(span.get("name") or ""), _nanos(span.get("startTimeUnixNano")),
                _nanos(span.get("endTimeUnixNano")), _attributes_json(span.get("attributes"), at),
                events, (str(status.get("message") or "error")) if failed else None, resource)


def _hex(value: str) -> str:
    """A span or trace id as hex (OTLP/JSON writes hex; a protobuf-to-JSON mapping, base64)."""
    if all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except ValueError:
        return value


def _nanos(value: Any) -> int:
    try:
        return int(value) if not isinstance(value, bool) else 0
    except (TypeError, ValueError):
        return 0


def _attributes_json(attrs: Any, at: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if attrs is None:
        return out
    if not isinstance(attrs, list):
        raise OtlpError(Msg("{at}.attributes must be an array", {"at": at}))
    for kv in attrs:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            try:
                out[kv["key"]] = _value_json(kv.get("value"))
            except RecursionError:
                raise OtlpError(Msg("{at}: attribute {key} nested too deeply",
                                    {"at": at, "key": repr(kv["key"])})) from None
    return out


def _value_json(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            return _nanos(value[key])
    array = value.get("arrayValue", value.get("array_value"))
    if isinstance(array, dict):
        return [_value_json(v) for v in array.get("values") or []]
    kvlist = value.get("kvlistValue", value.get("kvlist_value"))
    if isinstance(kvlist, dict):
        return {kv["key"]: _value_json(kv.get("value")) for kv in kvlist.get("values") or []
                if isinstance(kv, dict) and isinstance(kv.get("key"), str)}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


# -- OTLP/protobuf ---------------------------------------------------------------------------

def from_protobuf(data: bytes) -> list[Span]:
    """The spans of a serialized ``ExportTraceServiceRequest`` (needs ``opentelemetry-proto``)."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise OtlpError(Msg("reading OTLP protobuf needs opentelemetry-proto: pip install "
                            "'agentdbg-cli[report]'")) from None
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise OtlpError(Msg("not an OTLP protobuf trace export ({problem})", {"problem": exc})) from None
    out: list[Span] = []
    for rs in request.resource_spans:
        resource = _attributes_proto(rs.resource.attributes)
        for ss in rs.scope_spans:
            for span in ss.spans:
                status = span.status
                out.append(Span(span.trace_id.hex(), span.span_id.hex(),
                                span.parent_span_id.hex() or None, span.name,
                                span.start_time_unix_nano, span.end_time_unix_nano,
                                _attributes_proto(span.attributes),
                                [(e.name, e.time_unix_nano, _attributes_proto(e.attributes))
                                 for e in span.events],
                                (status.message or "error") if status.code == 2 else None, resource))
                if len(out) > MAX_SPANS:
                    raise OtlpError(Msg("more than {limit} spans in one export", {"limit": MAX_SPANS}))
    return out


def _attributes_proto(attrs: Any) -> dict[str, Any]:
    try:
        return {kv.key: _value_proto(kv.value) for kv in attrs}
    except RecursionError:
        raise OtlpError(Msg("an attribute nested too deeply")) from None


def _value_proto(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value_proto(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value_proto(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind) if kind else None
