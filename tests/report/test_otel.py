"""OpenTelemetry export received by a real OTLP/HTTP receiver on 127.0.0.1 (official protobufs)."""

from __future__ import annotations

import json
import socket
from datetime import datetime

import pytest

from agentdbg.report import semconv as sc
from agentdbg.report.otel import ExportError, LiveExporter, conversation_id, export_transcript

from .otlp_receiver import Receiver, attributes
from .report_fixtures import ORDER_Q, ROOT

ROOT_ID = b"\x00" * 8


def by_name(spans):
    out: dict[str, list] = {}
    for s in spans:
        out.setdefault(s.name, []).append(s)
    return out


def test_a_run_is_one_agent_span_with_chat_and_tool_children(made):
    with Receiver() as r:
        result = export_transcript(made["run"], otlp_url=r.url)
    assert r.paths == ["/v1/traces"] and r.content_types == ["application/x-protobuf"]
    spans = r.spans()
    assert result.spans == len(spans) == 6
    names = by_name(spans)
    (agent,) = names["invoke_agent"]
    assert len(names["chat offline"]) == 3
    assert [attributes(s)[sc.TOOL_NAME] for s in names["execute_tool query_order"] +
            names["execute_tool query_logistics"]] == ["query_order", "query_logistics"]
    assert agent.parent_span_id == b"" and all(s.parent_span_id == agent.span_id for s in spans
                                               if s is not agent)
    assert len({s.trace_id for s in spans}) == 1 and agent.trace_id.hex() == result.trace_id
    assert r.scopes()[0].name == "agentdbg"
    a = attributes(agent)
    assert a[sc.OPERATION_NAME] == "invoke_agent" and a[sc.PROVIDER_NAME] == "agentdbg.offline"
    assert a[sc.STOP_REASON] == "completed"
    assert a[sc.CONVERSATION_ID] == conversation_id("order", False) != "order"   # no content
    assert a[sc.USAGE_INPUT_TOKENS] == 2111 and a[sc.USAGE_OUTPUT_TOKENS] == 138   # estimated from the answer
    chat = sorted(names["chat offline"], key=lambda s: s.start_time_unix_nano)
    first = attributes(chat[0])
    assert first[sc.OPERATION_NAME] == "chat" and first[sc.REQUEST_MODEL] == "offline"
    assert first[sc.USAGE_INPUT_TOKENS] == 625 and first[sc.USAGE_OUTPUT_TOKENS] == 45
    assert first[sc.RESPONSE_FINISH_REASONS] == ["tool_calls"]
    assert attributes(chat[2])[sc.RESPONSE_FINISH_REASONS] == ["stop"]
    tool = attributes(names["execute_tool query_order"][0])
    assert tool[sc.TOOL_CALL_ID] == "call_o1" and tool[sc.OPERATION_NAME] == "execute_tool"
    assert sc.ERROR_TYPE not in tool
    assert chat[0].kind == 3 and agent.kind == 1 and names["execute_tool query_order"][0].kind == 1
    for s in spans:                       # no content unless asked for
        assert not {sc.INPUT_MESSAGES, sc.OUTPUT_MESSAGES, sc.TOOL_CALL_ARGUMENTS,
                    sc.TOOL_CALL_RESULT, sc.TOOL_DEFINITIONS, sc.TOOL_DESCRIPTION} & set(attributes(s))


def test_timestamps_come_from_the_transcript(made):
    header = json.loads(made["run"].read_text(encoding="utf-8").splitlines()[0])
    created = int(datetime.strptime(header["created"], "%Y-%m-%dT%H:%M:%S%z").timestamp() * 1e9)
    with Receiver() as r:
        export_transcript(made["run"], otlp_url=r.url)
    spans = sorted(r.spans(), key=lambda s: (s.start_time_unix_nano, s.name != "invoke_agent"))
    assert spans[0].name == "invoke_agent" and spans[0].start_time_unix_nano == created
    events = [e for line in made["run"].read_text(encoding="utf-8").splitlines()[1:]
              for e in [json.loads(line)]]
    latencies = [e["latency_ms"] for e in events if e["type"] == "response"]
    chats = [s for s in spans if s.name.startswith("chat")]
    assert [round((s.end_time_unix_nano - s.start_time_unix_nano) / 1e6, 3) for s in chats] == latencies
    tools = [e for e in events if e["type"] == "tool"]
    executes = [s for s in spans if s.name.startswith("execute_tool")]
    assert [round((s.end_time_unix_nano - s.start_time_unix_nano) / 1e6, 3) for s in executes] == \
        [t["duration_ms"] for t in tools]
    order = [s.name.split()[0] for s in spans[1:]]
    assert order == ["chat", "execute_tool", "chat", "execute_tool", "chat"]
    assert all(s.end_time_unix_nano <= spans[0].end_time_unix_nano for s in spans)


def test_contents_only_when_asked(made):
    with Receiver() as r:
        export_transcript(made["run"], otlp_url=r.url, content=True)
    names = by_name(r.spans())
    chat = sorted(names["chat offline"], key=lambda s: s.start_time_unix_nano)
    a = attributes(chat[1])
    inputs = json.loads(a[sc.INPUT_MESSAGES])
    assert inputs[0] == {"role": "user", "parts": [{"type": "text", "content": ORDER_Q}]}
    assert inputs[1]["parts"][0] == {"type": "tool_call", "id": "call_o1", "name": "query_order",
                                     "arguments": {"order_id": "ORD-2026-001"}}
    assert inputs[2]["parts"][0]["type"] == "tool_call_response"
    output = json.loads(a[sc.OUTPUT_MESSAGES])
    assert output[0]["role"] == "assistant" and output[0]["finish_reason"] == "tool_calls"
    assert "query_order" in a[sc.TOOL_DEFINITIONS]
    tool = attributes(names["execute_tool query_order"][0])
    assert json.loads(tool[sc.TOOL_CALL_ARGUMENTS]) == {"order_id": "ORD-2026-001"}
    assert json.loads(tool[sc.TOOL_CALL_RESULT])["tracking_no"] == "SF123456"


def test_a_failed_tool_and_the_users_actions(made):
    with Receiver() as r:
        export_transcript(made["step"], otlp_url=r.url)
    names = by_name(r.spans())
    failed, retried = sorted(names["execute_tool query_logistics"], key=lambda s: s.start_time_unix_nano)
    assert attributes(failed)[sc.ERROR_TYPE] == "timeout" and attributes(failed)[sc.INJECTED] is True
    assert failed.status.code == 2 and retried.status.code == 0
    assert sc.ERROR_TYPE not in attributes(retried)
    (agent,) = names["invoke_agent"]
    actions = [attributes(e)[sc.ACTION] for e in agent.events if e.name == sc.EVENT_ACTION]
    assert actions == ["drop", "rewind", "edit", "fail"]
    assert any(e.name == sc.EVENT_BLOCKED for e in agent.events)
    blocked = [attributes(e) for e in agent.events if e.name == sc.EVENT_FINDING]
    assert blocked[0][sc.FINDING_RULE] == "orphan-tool-message" and blocked[0][sc.FINDING_INDEX] == 1


def test_findings_are_events_on_the_span_of_their_message(made):
    with Receiver() as r:
        export_transcript(made["proxy_forget"], otlp_url=r.url, content=True)
    spans = r.spans()
    agent = next(s for s in spans if s.name == "invoke_agent")
    assert attributes(agent)[sc.PROVIDER_NAME] == "openai"        # an OpenAI-compatible endpoint
    # the app gave up on a tool call it never answered: the proxy records what was sent
    assert attributes(agent)[sc.STOP_REASON] == "completed"
    chats = sorted([s for s in spans if s.name == "chat demo"], key=lambda s: s.start_time_unix_nano)
    second = [attributes(e) for e in chats[1].events if e.name == sc.EVENT_FINDING]
    rules = {f[sc.FINDING_RULE] for f in second}
    assert rules == {"orphan-tool-message"}  # one defect, one finding
    orphan = next(f for f in second if f[sc.FINDING_RULE] == "orphan-tool-message")
    assert orphan[sc.FINDING_SEVERITY] == "error" and orphan[sc.FINDING_INDEX] == 1
    assert orphan[sc.FINDING_API_ERROR].startswith("Invalid parameter: messages with role 'tool'")
    usage = attributes(chats[0])
    assert usage[sc.USAGE_INPUT_TOKENS] > 0 and "agentdbg.usage.estimated" not in usage
    assert attributes(chats[0])[sc.SERVER_ADDRESS] == "127.0.0.1"


def test_the_otlp_json_file(made, tmp_path):
    out = tmp_path / "trace.otlp.jsonl"
    result = export_transcript(made["parallel"], json_path=out)
    (line,) = out.read_text(encoding="utf-8").splitlines()
    doc = json.loads(line)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == result.spans == 5
    names = sorted(s["name"] for s in spans)
    assert names == ["chat offline", "chat offline", "execute_tool get_weather",
                     "execute_tool get_weather", "invoke_agent"]
    agent = next(s for s in spans if s["name"] == "invoke_agent")
    assert len(agent["spanId"]) == 16 and agent["traceId"] == result.trace_id   # hex, as OTLP/JSON
    assert all(s["parentSpanId"] == agent["spanId"] for s in spans if s is not agent)
    resource = {a["key"]: a["value"] for a in doc["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["service.name"] == {"stringValue": "agentdbg"}


def test_delivery_failures_are_one_line(made):
    with Receiver(status=400) as r, pytest.raises(ExportError) as info:
        export_transcript(made["run"], otlp_url=r.url, timeout=3)
    assert info.value.message.startswith(f"{r.url}/v1/traces: the OTLP receiver did not take the spans")
    assert "\n" not in info.value.message
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()                                   # nothing listens there now
    with pytest.raises(ExportError) as refused:
        export_transcript(made["run"], otlp_url=f"http://127.0.0.1:{port}", timeout=1)
    assert refused.value.message == (f"http://127.0.0.1:{port}/v1/traces: connection refused: nothing "
                                     f"listens on 127.0.0.1:{port} (is the receiver running?)")
    with pytest.raises(ExportError, match="not an http"):
        export_transcript(made["run"], otlp_url="ftp://x")


def test_the_live_exporter_exports_a_session_as_it_runs():
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import load_tools

    tools = load_tools(ROOT / "tools.yaml")
    session = Session.for_question(OfflineModel(), tools, "北京和上海今天哪个更热?", RunConfig(),
                                   precheck=check_model_request)
    header = {"model": "offline", "provider": "offline", "base_url": None,
              "tools": tools.openai_tools()}
    with Receiver() as r:
        live = LiveExporter(header, otlp_url=r.url, content=True)
        session.observers.append(live)
        list(session.run())
        live.close()
        spans = r.spans()
    names = by_name(spans)
    (agent,) = names["invoke_agent"]
    assert len(names["chat offline"]) == 2 and len(names["execute_tool get_weather"]) == 2
    assert all(s.parent_span_id == agent.span_id for s in spans if s is not agent)
    assert attributes(agent)[sc.STOP_REASON] == "completed"
    first = min(names["chat offline"], key=lambda s: s.start_time_unix_nano)
    assert json.loads(attributes(first)[sc.INPUT_MESSAGES])[0]["role"] == "user"
    assert all(s.end_time_unix_nano >= s.start_time_unix_nano for s in spans)


def test_the_pinned_names_are_the_conventions_names():
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as g
    from opentelemetry.semconv.attributes import error_attributes, server_attributes

    pinned = {sc.OPERATION_NAME: g.GEN_AI_OPERATION_NAME, sc.PROVIDER_NAME: g.GEN_AI_PROVIDER_NAME,
              sc.REQUEST_MODEL: g.GEN_AI_REQUEST_MODEL, sc.USAGE_INPUT_TOKENS: g.GEN_AI_USAGE_INPUT_TOKENS,
              sc.USAGE_OUTPUT_TOKENS: g.GEN_AI_USAGE_OUTPUT_TOKENS,
              sc.RESPONSE_FINISH_REASONS: g.GEN_AI_RESPONSE_FINISH_REASONS,
              sc.TOOL_NAME: g.GEN_AI_TOOL_NAME, sc.TOOL_CALL_ID: g.GEN_AI_TOOL_CALL_ID,
              sc.TOOL_TYPE: g.GEN_AI_TOOL_TYPE, sc.TOOL_DESCRIPTION: g.GEN_AI_TOOL_DESCRIPTION,
              sc.CONVERSATION_ID: g.GEN_AI_CONVERSATION_ID, sc.INPUT_MESSAGES: g.GEN_AI_INPUT_MESSAGES,
              sc.OUTPUT_MESSAGES: g.GEN_AI_OUTPUT_MESSAGES, sc.TOOL_DEFINITIONS: g.GEN_AI_TOOL_DEFINITIONS,
              sc.TOOL_CALL_ARGUMENTS: g.GEN_AI_TOOL_CALL_ARGUMENTS,
              sc.TOOL_CALL_RESULT: g.GEN_AI_TOOL_CALL_RESULT,
              sc.REQUEST_TEMPERATURE: g.GEN_AI_REQUEST_TEMPERATURE,
              sc.ERROR_TYPE: error_attributes.ERROR_TYPE, sc.SERVER_ADDRESS: server_attributes.SERVER_ADDRESS,
              sc.SERVER_PORT: server_attributes.SERVER_PORT}
    assert all(ours == theirs for ours, theirs in pinned.items())
    ops = g.GenAiOperationNameValues
    assert (
        ops.CHAT.value, ops.EXECUTE_TOOL.value, ops.INVOKE_AGENT.value) == (sc.OP_CHAT, sc.OP_EXECUTE_TOOL, sc.OP_INVOKE_AGENT)


def test_the_provider_name_follows_the_api_a_local_endpoint_spoke():
    from agentdbg.report.otel import provider_name

    local = "http://127.0.0.1:8765/v1"
    assert provider_name({"provider": "claude", "api": "anthropic", "base_url": local}) == "anthropic"
    assert provider_name({"provider": "m", "api": "chat", "base_url": local}) == "openai"
    assert provider_name({"provider": "m", "api": "chat", "base_url": "https://api.deepseek.com"}) == "deepseek"
    assert provider_name({"provider": "offline", "api": "anthropic"}) == "agentdbg.offline"
