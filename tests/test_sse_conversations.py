"""The stream accumulator and the proxy's conversation rules, without any server."""

import json

from agentdbg.server.proxy.conversations import Tracker
from agentdbg.wire.chat import StreamAccumulator, encode_stream

CALLS = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}},
    {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}]}


def test_encode_then_accumulate_round_trips_and_describes_the_stream():
    data = b"".join(encode_stream(CALLS, completion_id="x", model="m", created=0,
                                  finish_reason="tool_calls", usage={"total_tokens": 3}))
    acc = StreamAccumulator()
    for i in range(0, len(data), 7):  # arbitrary network splits
        acc.feed(data[i:i + 7])
    assert acc.message == CALLS and acc.finish_reason == "tool_calls"
    assert acc.usage == {"total_tokens": 3}
    shape = acc.shape()
    assert "call call_a at index 0: id sent once, 3 deltas joined by index" in shape
    # the id really is only in the first delta of each call
    deltas = [json.loads(line[6:])["choices"][0]["delta"] for line in data.decode().splitlines()
              if line.startswith("data: {")]
    ids = [tc.get("id") for d in deltas for tc in d.get("tool_calls", [])]
    assert ids.count("call_a") == 1 and ids.count(None) == 4


def chunk(delta):
    return ("data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]}) + "\n\n").encode()


def test_parallel_calls_sharing_an_index_are_shown_plainly():
    acc = StreamAccumulator()
    acc.feed(chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}]}))
    acc.feed(chunk({"tool_calls": [{"index": 0, "id": "call_2", "function": {"name": "f", "arguments": "{}"}}]}))
    assert "two calls share index 0 (call_1 and call_2): an accumulator keyed by index merges them" \
        in acc.shape()
    assert acc.message["tool_calls"][0]["function"]["arguments"] == "{}{}"  # what a naive app gets


def test_a_call_that_never_carries_an_id():
    acc = StreamAccumulator()
    acc.feed(chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]}))
    assert "call at index 0 never carried an id" in acc.shape()


def test_chunks_only_the_lenient_json_reader_accepts_read_as_before():
    # what the stdlib json reads and a strict parser refuses: a 70-bit integer, NaN, a lone
    # surrogate; the stream also ends its lines with CRLF and arrives in 5-byte pieces
    data = (b'data: {"choices": [{"index": 0, "delta": {"content": "\\ud800x"}}]}\r\n\r\n'
            b'data: {"choices": [{"index": 0, "delta": {"content": "y"}, "finish_reason": "stop"}],'
            b' "usage": {"total_tokens": 1180591620717411303424, "cost": NaN}}\r\n\r\n'
            b"data: [DONE]")
    acc = StreamAccumulator()
    for i in range(0, len(data), 5):
        acc.feed(data[i:i + 5])
    acc.close()
    assert acc.message["content"] == "\ud800xy" and acc.finish_reason == "stop"
    assert acc.usage["total_tokens"] == 2 ** 70 and acc.usage["cost"] != acc.usage["cost"]
    assert acc.chunks == 2 and acc.notes == []


U = {"role": "user", "content": "北京和上海哪个更热?"}


def rules_for(tmp_path, first, reply, second):
    tracker = Tracker(tmp_path, "http://upstream/v1")
    conv = tracker.assign(first)
    tracker.record_request(conv, {"messages": first}, [])
    tracker.record_response(conv, first, reply, usage={}, finish=None, latency_ms=0)
    again = tracker.assign(second)
    assert again is conv
    return [(f.rule, f.index) for f in conv.rules.check(second)]


def test_history_rewritten_between_requests(tmp_path):
    ta = {"role": "tool", "tool_call_id": "call_a", "content": '{"temperature": 24}'}
    tb = {"role": "tool", "tool_call_id": "call_b", "content": '{"temperature": 29}'}
    answer = {"role": "assistant", "content": "上海更热。"}
    first = [U, CALLS, ta, tb]
    second = [U, CALLS, {**ta, "content": '{"temperature": 35}'}, tb, answer,
              {"role": "user", "content": "杭州呢?"}]
    assert rules_for(tmp_path, first, answer, second) == [("history-rewritten", 2)]


def test_a_correct_follow_up_has_no_cross_findings(tmp_path):
    second = [U, CALLS, {"role": "tool", "tool_call_id": "call_a", "content": "{}"},
              {"role": "tool", "tool_call_id": "call_b", "content": "{}"}]
    assert rules_for(tmp_path, [U], CALLS, second) == []


def test_same_question_asked_afresh_is_a_new_conversation(tmp_path):
    tracker = Tracker(tmp_path, "u")
    conv = tracker.assign([U])
    tracker.record_request(conv, {"messages": [U]}, [])
    tracker.record_response(conv, [U], CALLS, usage={}, finish=None, latency_ms=0)
    follow = [U, CALLS, {"role": "tool", "tool_call_id": "call_a", "content": "{}"}]
    tracker.record_request(conv, {"messages": follow}, [])
    tracker.record_response(conv, follow, {"role": "assistant", "content": "ok"}, usage={},
                            finish="stop", latency_ms=0)
    assert tracker.assign([U]) is not conv
    paths = tracker.close()
    assert len(paths) == 1 and '"reason": "completed"' in paths[0].read_text(encoding="utf-8")
