"""OTLP/HTTP protobuf export requests as the OpenTelemetry SDK's BatchSpanProcessor sends them:
GenAI chat spans (``gen_ai.input.messages`` / ``gen_ai.output.messages``) of conversations whose
history grows by a call and its result per span. What the collect tests and
bench/collect_throughput.py send."""

from __future__ import annotations

import json

SPANS = 100          # spans per export (the SDK's batches are up to 512)
CALLS = 10           # model calls per trace (conversation)


def export(first_trace: int, spans_n: int = SPANS, calls: int = CALLS) -> bytes:
    """One export request (protobuf): ``spans_n`` spans, ``calls`` per trace (traces numbered
    from ``first_trace``), each a chat call with its history and its reply."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    def attr(key: str, value: object) -> KeyValue:
        v = AnyValue(int_value=value) if isinstance(value, int) else AnyValue(string_value=str(value))
        return KeyValue(key=key, value=v)

    spans = []
    start = 1_767_000_000_000_000_000
    for n in range(spans_n):
        trace, k = first_trace + n // calls, n % calls
        history: list[dict] = [{"role": "user", "parts": [{"type": "text", "content": "weather in 10 cities?"}]}]
        for j in range(k):
            history.append({"role": "assistant", "parts": [
                {"type": "tool_call", "id": f"call_{j}", "name": "get_weather", "arguments": {"city": f"c{j}"}}]})
            history.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": f"call_{j}", "response": {"temp_c": 18}}]})
        out = [{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "tool_call", "id": f"call_{k}", "name": "get_weather", "arguments": {"city": f"c{k}"}}]}]
        begin = start + (trace * calls + k) * 1_000_000
        spans.append(Span(
            trace_id=trace.to_bytes(16, "big"), span_id=(trace * 100 + k + 1).to_bytes(8, "big"),
            name="chat gpt-4o-mini", kind=Span.SPAN_KIND_CLIENT,
            start_time_unix_nano=begin, end_time_unix_nano=begin + 500_000,
            attributes=[attr("gen_ai.operation.name", "chat"), attr("gen_ai.provider.name", "openai"),
                        attr("gen_ai.request.model", "gpt-4o-mini"),
                        attr("gen_ai.input.messages", json.dumps(history)),
                        attr("gen_ai.output.messages", json.dumps(out)),
                        attr("gen_ai.usage.input_tokens", 20 + 10 * k),
                        attr("gen_ai.usage.output_tokens", 12)]))
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource={"attributes": [attr("service.name", "bench")]},
        scope_spans=[ScopeSpans(scope={"name": "bench"}, spans=spans)])])
    return request.SerializeToString()
