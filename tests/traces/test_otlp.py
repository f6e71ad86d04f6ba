"""OTLP traces in: JSON Lines and protobuf files, the three ways instrumentations record a
model call's content (GenAI semantic conventions, OpenLLMetry's indexed attributes, OpenInference),
agents from gen_ai.agent.name, and a dropped tool result reported from the spans alone."""

from __future__ import annotations

import base64
import json

from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.transcript import load_transcript

from .support import FIXTURES, OTLP_JSON, pairs

runner = CliRunner()
PROXIED = FIXTURES / "codex" / "proxy-conversation-1.jsonl"


def _imported(tmp_path, source):
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return sorted(out.glob("*.jsonl")), result.output


def _protobuf(doc: dict) -> bytes:
    """The same export as OTLP protobuf (ids are bytes there: hex in OTLP/JSON)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(doc, ExportTraceServiceRequest()).SerializeToString()


def test_agentdbgs_own_otlp_json_export_comes_back_as_the_same_conversation(tmp_path):
    [path], said = _imported(tmp_path, OTLP_JSON)
    assert pairs(path) == pairs(PROXIED)
    assert "the spans do not record the requests' parameters" in said
    result = runner.invoke(app, ["check", str(OTLP_JSON)])
    assert result.exit_code == 0 and "no findings (3 recorded request(s)" in result.output


def test_a_protobuf_file_is_read_like_its_json(tmp_path):
    binary = tmp_path / "traces.binpb"
    binary.write_bytes(_protobuf(json.loads(OTLP_JSON.read_text().splitlines()[0])))
    [path], _ = _imported(tmp_path, binary)
    assert pairs(path) == pairs(PROXIED)


# -- spans as the instrumentations write them -------------------------------------------------

def _attrs(values: dict) -> list:
    def value(v):
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"stringValue": v}
    return [{"key": k, "value": value(v)} for k, v in values.items()]


def _export(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": _attrs({"service.name": "app"})},
                                          "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]})


def _span(n: int, attrs: dict, *, trace: str = "ab" * 16, parent: str | None = None,
          events: list | None = None, error: bool = False) -> dict:
    span = {"traceId": trace, "spanId": f"{n:016x}", "name": "chat gpt-4o-mini",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n * 10**9),
            "endTimeUnixNano": str(1_700_000_000_000_000_000 + n * 10**9 + 5 * 10**8),
            "attributes": _attrs(attrs), "events": events or []}
    if parent:
        span["parentSpanId"] = parent
    if error:
        span["status"] = {"code": 2, "message": "Error code: 400"}
    return span


TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather",
                                                         "arguments": '{"city": "Paris"}'}}


def openllmetry(n: int, drop: bool) -> dict:
    attrs = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
             "llm.request.type": "chat", "gen_ai.prompt.0.role": "user",
             "gen_ai.prompt.0.content": "weather in Paris?",
             "llm.request.functions.0.name": "get_weather",
             "llm.request.functions.0.parameters": json.dumps(TOOL["function"]["parameters"])}
    if n == 1:
        attrs.update({"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
                      "gen_ai.completion.0.tool_calls.0.id": "call_1",
                      "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                      "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}'})
    else:
        attrs.update({"gen_ai.prompt.1.role": "assistant",
                      "gen_ai.prompt.1.tool_calls.0.id": "call_1",
                      "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
                      "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "Paris"}'})
        if not drop:
            attrs.update({"gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.tool_call_id": "call_1",
                          "gen_ai.prompt.2.content": '{"temp_c": 18}',
                          "gen_ai.completion.0.role": "assistant",
                          "gen_ai.completion.0.content": "18 °C in Paris."})
    return _span(n, attrs, error=drop and n == 2)


def openinference(n: int, drop: bool) -> dict:
    attrs = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
             "llm.input_messages.0.message.role": "user",
             "llm.input_messages.0.message.content": "weather in Paris?",
             "llm.tools.0.tool.json_schema": json.dumps(TOOL),
             "llm.invocation_parameters": json.dumps({"temperature": 0})}
    if n == 1:
        attrs.update({"llm.output_messages.0.message.role": "assistant",
                      "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                      "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
                      "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
                          '{"city": "Paris"}'})
    else:
        attrs.update({"llm.input_messages.1.message.role": "assistant",
                      "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_1",
                      "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
                      "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments":
                          '{"city": "Paris"}'})
        if not drop:
            attrs.update({"llm.input_messages.2.message.role": "tool",
                          "llm.input_messages.2.message.tool_call_id": "call_1",
                          "llm.input_messages.2.message.content": '{"temp_c": 18}',
                          "llm.output_messages.0.message.role": "assistant",
                          "llm.output_messages.0.message.content": "18 °C in Paris."})
    return _span(n, attrs, error=drop and n == 2)


def semconv_events(n: int, drop: bool) -> dict:
    events = [{"name": "gen_ai.user.message", "attributes": _attrs({"content": "weather in Paris?"})}]
    if n == 1:
        events.append({"name": "gen_ai.choice", "attributes": _attrs({
            "finish_reason": "tool_calls", "message": json.dumps({"tool_calls": [CALL]})})})
    else:
        events.append({"name": "gen_ai.assistant.message",
                       "attributes": _attrs({"tool_calls": json.dumps([CALL])})})
        if not drop:
            events.append({"name": "gen_ai.tool.message",
                           "attributes": _attrs({"id": "call_1", "content": '{"temp_c": 18}'})})
            events.append({"name": "gen_ai.choice", "attributes": _attrs({
                "finish_reason": "stop", "message": json.dumps({"content": "18 °C in Paris."})})})
    return _span(n, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                     "gen_ai.tool.definitions": json.dumps([TOOL])}, events=events, error=drop and n == 2)


def test_each_instrumentations_layout_becomes_the_same_conversation(tmp_path):
    for make in (openllmetry, openinference, semconv_events):
        source = tmp_path / f"{make.__name__}.json"
        source.write_text(_export(make(1, False), make(2, False)))
        [path], _ = _imported(tmp_path / make.__name__, source)
        assert pairs(path) == [("call_1", "get_weather", {"city": "Paris"}, '{"temp_c": 18}')], make
        header = load_transcript(path).header
        assert [t["function"]["name"] for t in header.tools] == ["get_weather"]
        result = runner.invoke(app, ["check", str(path)])
        assert result.exit_code == 0 and "no findings" in result.output, (make, result.output)


def test_a_dropped_tool_result_is_reported_in_the_apis_words_from_the_spans_alone(tmp_path):
    for make in (openllmetry, openinference, semconv_events):
        source = tmp_path / f"{make.__name__}.json"
        source.write_text(_export(make(1, True), make(2, True)))
        result = runner.invoke(app, ["check", str(source)])
        assert result.exit_code == 1, (make, result.output)
        assert "missing-tool-response" in result.output
        assert "An assistant message with 'tool_calls' must be followed by tool messages responding " \
               "to each 'tool_call_id'" in " ".join(result.output.split()), result.output


def test_agents_of_one_trace_are_conversations_linked_to_the_first(tmp_path):
    root = _span(9, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"})
    tool = _span(10, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "call_9"},
                 parent=root["spanId"])
    helper = _span(11, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
                   parent=tool["spanId"])
    first = semconv_events(1, False) | {"parentSpanId": root["spanId"]}
    second = semconv_events(12, False) | {"parentSpanId": helper["spanId"]}
    source = tmp_path / "agents.json"
    source.write_text(_export(first, second, helper, tool, root))   # parents end last
    paths, _ = _imported(tmp_path, source)
    headers = [load_transcript(p).header for p in paths]
    assert [h.agent for h in headers] == ["planner", "helper"]
    assert headers[1].started_by.conversation == 1 and headers[1].started_by.call_id == "call_9"


def test_secrets_in_span_attributes_never_reach_the_transcript(tmp_path):
    key = "sk-" + "a1B2" * 10
    span = openinference(1, False)
    span["attributes"] += _attrs({"llm.invocation_parameters": json.dumps({"api_key": key, "temperature": 0})})
    span["attributes"] += _attrs({"llm.input_messages.0.message.content": f"my key is {key}"})
    source = tmp_path / "secret.json"
    source.write_text(_export(span))
    [path], _ = _imported(tmp_path, source)
    text = path.read_text(encoding="utf-8")
    assert key not in text and "[REDACTED]" in text
    assert '"api_key"' not in text


def test_bad_otlp_is_one_line_naming_the_file_and_line(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_text(_export(openinference(1, False)) + "\n" + '{"resourceSpans": [{"scopeSpans": 3}]}\n')
    result = runner.invoke(app, ["import", str(source), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "bad.jsonl:2: resourceSpans[0].scopeSpans must be an array" in result.output
    assert "Traceback" not in result.output
