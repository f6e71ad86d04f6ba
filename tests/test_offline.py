"""The offline model: plans from schemas, on the samples and on an unseen tools file."""

import json

from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.offline import OfflineModel


def run(tools, question, **config):
    s = Session.for_question(OfflineModel(), tools, question, RunConfig(**config))
    list(s.run())
    return s


def calls_per_turn(s):
    return [[(c["function"]["name"], json.loads(c["function"]["arguments"]))
             for c in m.get("tool_calls", [])] for m in s.messages if m["role"] == "assistant"]


def test_order_question_makes_two_dependent_calls_then_answers(sample_tools):
    s = run(sample_tools, "订单 ORD-2026-001 到哪里了?")
    assert calls_per_turn(s) == [
        [("query_order", {"order_id": "ORD-2026-001"})],
        [("query_logistics", {"tracking_no": "SF123456"})],
        [],
    ]
    assert s.stop_reason is StopReason.COMPLETED
    assert "杭州转运中心已发出" in s.answer()
    assert "pattern" in s.turns[0].note and "earlier tool result" in s.turns[1].note
    # the seed's exact argument text
    assert s.messages[1]["tool_calls"][0]["function"]["arguments"] == '{"order_id":"ORD-2026-001"}'


def test_weather_comparison_goes_out_in_one_turn(sample_tools):
    s = run(sample_tools, "北京和上海今天哪个更热?")
    assert calls_per_turn(s)[0] == [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    assert len(calls_per_turn(s)) == 2
    answer = s.answer()
    assert "最高 上海（29）" in answer and "最低 北京（24）" in answer


def test_unknown_order_says_plainly_it_could_not_get_it(sample_tools):
    s = run(sample_tools, "订单 ORD-2026-999 到哪里了?")
    assert "没能获取" in s.answer() and "not_found" in s.answer()


def test_no_fillable_tool_answers_without_calls(sample_tools):
    s = run(sample_tools, "hello there")
    assert calls_per_turn(s) == [[]] and "could not match this question to any tool" in s.answer()


def test_retryable_error_is_retried_once(sample_tools):
    s = run(sample_tools, "SKU-1001 有货吗?")  # check_inventory is slower than its 1 s timeout
    assert [len(t) for t in calls_per_turn(s)] == [1, 1, 0]
    assert "retrying check_inventory once" in s.turns[1].note
    assert "timeout" in s.answer() and s.answer().count("未能获取") == 1  # reported once


def test_never_repeats_a_call(sample_tools):
    msgs = [
        {"role": "user", "content": "订单 ORD-2026-002 呢"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "x1", "type": "function",
             "function": {"name": "query_order", "arguments": '{"order_id": "ORD-2026-002"}'}}]},
        {"role": "tool", "tool_call_id": "x1", "content": '{"status": "pending"}'},
    ]
    reply = OfflineModel().complete(ModelRequest(msgs, sample_tools.openai_tools()))
    assert "tool_calls" not in reply.message and "pending" in reply.message["content"]


def test_parallel_tool_calls_false_sends_one_call(sample_tools):
    s = run(sample_tools, "北京和上海今天哪个更热?", parallel_tool_calls=False)
    assert [len(t) for t in calls_per_turn(s)] == [1, 1, 0]


def test_tool_choice_none_answers_directly(sample_tools):
    s = run(sample_tools, "订单 ORD-2026-001 到哪里了?", tool_choice="none")
    assert calls_per_turn(s) == [[]]


def test_works_on_a_tools_file_it_has_never_seen(tools_from):
    tools = tools_from("""
        version: 1
        tools:
          - name: find_flight
            description: Find a flight by its number. Use when the user names a flight.
            parameters:
              type: object
              properties:
                flight: {type: string, pattern: "^[A-Z]{2}[0-9]{3,4}$", description: flight number}
              required: [flight]
            handler:
              fixture: {gate: B12, airport_code: PVG, delay_minutes: 40}
          - name: airport_info
            description: Details of an airport by IATA code.
            parameters:
              type: object
              properties:
                airport_code: {type: string, description: IATA code}
                lang: {type: string, enum: [en, zh], description: language}
              required: [airport_code]
            handler:
              fixture: {name: Shanghai Pudong, terminals: 2}
          - name: rebook
            description: Rebook a passenger.
            parameters:
              type: object
              properties:
                booking_ref: {type: string}
              required: [booking_ref]
            side_effects: true
            handler: {fixture: {ok: 1}}
    """)
    s = run(tools, "Is flight MU5101 delayed? Answer in en")
    assert calls_per_turn(s) == [
        [("find_flight", {"flight": "MU5101"})],
        [("airport_info", {"airport_code": "PVG", "lang": "en"})],
        [],
    ]
    assert "delay_minutes=40" in s.answer() and "Shanghai Pudong" in s.answer()
