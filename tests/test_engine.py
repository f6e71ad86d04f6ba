"""The Session state machine, driven by the scripted model (no network, no printing)."""

import json

from support import scripted

from agentdbg.engine.phases import Phase
from agentdbg.engine.session import (
    ApprovalNeeded,
    ModelReplied,
    RunConfig,
    Session,
    StopReason,
    ToolsExecuted,
)
from agentdbg.errors import ExitStatus, ProviderError

ORDER_CALL = {"name": "query_order", "arguments": {"order_id": "ORD-2026-001"}, "id": "call_order_1"}


def run(session):
    events = list(session.run())
    return events


def test_assistant_message_is_appended_before_its_results(sample_tools):
    model = scripted({"tool_calls": [ORDER_CALL]}, {"content": "已发货"})
    s = Session.for_question(model, sample_tools, "订单 ORD-2026-001 到哪里了?")
    ev = s.step()
    assert isinstance(ev, ModelReplied) and s.phase is Phase.TOOLS
    assert s.messages[-1]["role"] == "assistant"  # appended before anything runs
    ev = s.step()
    assert isinstance(ev, ToolsExecuted)
    assert s.messages[2] == {"role": "tool", "tool_call_id": "call_order_1",
                             "content": '{"status": "shipped", "tracking_no": "SF123456"}'}
    s.step()
    assert s.stop_reason is StopReason.COMPLETED and s.answer() == "已发货"


def test_completed_run_records_usage_per_request_and_totals(sample_tools):
    s = Session.for_question(scripted({"tool_calls": [ORDER_CALL]}, {"content": "ok"}),
                             sample_tools, "q")
    run(s)
    assert len(s.turns) == 2
    assert all(t.usage["total_tokens"] > 0 for t in s.turns)
    assert s.usage["total_tokens"] == sum(t.usage["total_tokens"] for t in s.turns)
    assert s.turns[0].finish_reason == "tool_calls" and s.turns[1].finish_reason == "stop"


def test_max_turns_is_not_an_answer(sample_tools):
    turns = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": c}}]}
             for c in ["北京", "上海", "杭州", "广州"]]
    s = Session.for_question(scripted(*turns), sample_tools, "q", RunConfig(max_turns=3))
    run(s)
    assert s.stop_reason is StopReason.MAX_TURNS and s.answer() is None
    assert len(s.turns) == 3 and "3 turns" in s.stop_detail
    assert s.stop_reason.exit_status == ExitStatus.MAX_TURNS


def test_max_tool_calls_stops_before_executing(sample_tools):
    calls = [{"name": "get_weather", "arguments": {"city": c}} for c in ["北京", "上海", "杭州"]]
    s = Session.for_question(scripted({"tool_calls": calls}), sample_tools, "q",
                             RunConfig(max_tool_calls=2))
    run(s)
    assert s.stop_reason is StopReason.MAX_TOOL_CALLS and s.tool_calls_made == 0


def test_repeated_identical_call_with_same_result_stops(sample_tools):
    same = {"tool_calls": [{"name": "query_order", "arguments": {"order_id": "ORD-2026-001"}}]}
    # key order differs: canonical arguments still match
    same2 = {"tool_calls": [{"name": "query_order", "arguments": '{ "order_id" : "ORD-2026-001" }'}]}
    s = Session.for_question(scripted(same, same2, same, {"content": "never"}), sample_tools, "q")
    run(s)
    assert s.stop_reason is StopReason.REPEATED_CALL and s.tool_calls_made == 3
    assert "3 times in a row" in s.stop_detail and s.answer() is None


def test_repeat_with_changing_result_does_not_stop(tools_from):
    ts = tools_from("""
        version: 1
        tools:
          - name: tick
            description: Returns something new each time.
            handler: {python: "time:time_ns"}
    """)
    turns = [{"tool_calls": [{"name": "tick", "arguments": {}}]}] * 3 + [{"content": "done"}]
    s = Session.for_question(scripted(*turns), ts, "q")
    run(s)
    assert s.stop_reason is StopReason.COMPLETED


def test_whole_run_timeout(sample_tools):
    now = [0.0]
    s = Session.for_question(scripted({"content": "x"}), sample_tools, "q",
                             RunConfig(timeout=5), clock=lambda: now[0])
    now[0] = 100.0  # the wall clock moves past the limit before the first step
    run(s)
    assert s.stop_reason is StopReason.TIMEOUT and "5s" in s.stop_detail


def test_cancel_keeps_the_messages(sample_tools):
    s = Session.for_question(scripted({"tool_calls": [ORDER_CALL]}), sample_tools, "q")
    s.step()
    s.cancel()
    assert s.stop_reason is StopReason.CANCELLED and len(s.messages) == 2
    assert s.stop_reason.exit_status == ExitStatus.CANCELLED


def test_model_error_keeps_the_run_so_far(sample_tools):
    s = Session.for_question(scripted({"tool_calls": [ORDER_CALL]}), sample_tools, "q")
    run(s)  # the script has one turn; the second request runs past its end
    assert s.stop_reason is StopReason.MODEL_ERROR
    assert "has 1 turn(s); the run asked for turn 2" in s.stop_detail
    assert [m["role"] for m in s.messages] == ["user", "assistant", "tool"]


class Flaky:
    name = "flaky"

    def complete(self, request):
        raise ProviderError("http://x/v1/chat/completions: HTTP 500: the server failed: boom")


def test_provider_error_becomes_model_error(sample_tools):
    s = Session.for_question(Flaky(), sample_tools, "q")
    run(s)
    assert s.stop_reason is StopReason.MODEL_ERROR and "HTTP 500" in s.stop_detail


def email_turns():
    return ({"tool_calls": [{"name": "send_email", "id": "call_mail",
                             "arguments": {"to": "a@example.com", "subject": "s", "body": "b"}}]},
            {"content": "done"})


def test_approval_none_denies_side_effects(sample_tools):
    s = Session.for_question(scripted(*email_turns()), sample_tools, "q", RunConfig(approve="none"))
    run(s)
    assert json.loads(s.messages[2]["content"])["error"]["type"] == "denied"


def test_approval_all_runs_them(sample_tools):
    s = Session.for_question(scripted(*email_turns()), sample_tools, "q", RunConfig(approve="all"))
    run(s)
    assert json.loads(s.messages[2]["content"])["status"] in ("sent", "duplicate_ignored")


def test_approval_ask_pauses_as_data(sample_tools):
    s = Session.for_question(scripted(*email_turns()), sample_tools, "q", RunConfig(approve="ask"))
    s.step()
    ev = s.step()
    assert isinstance(ev, ApprovalNeeded) and ev.calls[0]["id"] == "call_mail"
    assert len(s.messages) == 2  # nothing ran
    s.decide(ev.calls[0], False)
    assert isinstance(s.step(), ToolsExecuted)
    assert json.loads(s.messages[2]["content"])["error"]["type"] == "denied"


def test_idempotency_key_prevents_a_second_send(sample_tools):
    args = {"to": "b@example.com", "subject": "s", "body": "b", "idempotency_key": "k-42"}
    turns = [{"tool_calls": [{"name": "send_email", "arguments": args}]}] * 2 + [{"content": "x"}]
    s = Session.for_question(scripted(*turns), sample_tools, "q", RunConfig(approve="all"))
    run(s)
    first, second = json.loads(s.messages[2]["content"]), json.loads(s.messages[4]["content"])
    assert first["status"] == "sent" and second["status"] == "duplicate_ignored"
    assert first["message_id"] == second["message_id"]


def test_parallel_turn_answers_every_call_with_its_id(sample_tools):
    calls = [{"name": "get_weather", "id": f"w{i}", "arguments": {"city": c}}
             for i, c in enumerate(["北京", "上海", "火星"])]
    s = Session.for_question(scripted({"tool_calls": calls}, {"content": "x"}), sample_tools, "q")
    run(s)
    tool_msgs = [m for m in s.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["w0", "w1", "w2"]
    assert json.loads(tool_msgs[2]["content"])["error"]["type"] == "not_found"


def test_engine_imports_no_ui_module():
    import subprocess
    import sys
    code = ("import sys; import agentdbg.engine.session, agentdbg.providers.offline;"
            "bad=[m for m in ('rich','typer','prompt_toolkit','openai') if m in sys.modules];"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_an_estimate_does_not_count_a_formats_round_trip_data():
    from agentdbg.providers.base import ModelRequest, estimated_usage

    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    plain = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
    kept = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [
        {**call, "wire": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}, "x": "y" * 400}}]}]
    reply = {"role": "assistant", "content": "done"}
    assert estimated_usage(ModelRequest(messages=kept), reply) == \
        estimated_usage(ModelRequest(messages=plain), reply)
