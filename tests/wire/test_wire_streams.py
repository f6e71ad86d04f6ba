"""Stream encoders produce the real event sequences; accumulators rebuild them from any chunking
and never raise on garbage."""

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdbg.wire.anthropic_reply import message_json
from agentdbg.wire.anthropic_stream import AnthropicAccumulator
from agentdbg.wire.anthropic_stream import encode_stream as anthropic_stream
from agentdbg.wire.common import SSEParser
from agentdbg.wire.responses_reply import response_json
from agentdbg.wire.responses_stream import ResponsesAccumulator
from agentdbg.wire.responses_stream import encode_stream as responses_stream

REPLY = {"role": "assistant", "content": "Checking the weather in both cities now.",
         "reasoning_content": "Two cities, two calls.",
         "tool_calls": [
             {"id": "call_a", "type": "function",
              "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"c\"}"}},
             {"id": "call_b", "type": "function",
              "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]}
USAGE = {"prompt_tokens": 40, "completion_tokens": 25, "total_tokens": 65}
R_BODY = {"model": "o4-mini", "input": "weather?", "reasoning": {"effort": "low"}, "stream": True}
A_BODY = {"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user", "content": "weather?"}],
          "thinking": {"type": "enabled", "budget_tokens": 1024}, "stream": True}


def events(raw: bytes) -> list[tuple[str, dict]]:
    parser = SSEParser()
    return [(e, json.loads(d)) for e, d in parser.feed(raw) + parser.close()]


def feed(acc, raw: bytes, size: int):
    for i in range(0, len(raw), size):
        acc.feed(raw[i:i + size])
    acc.close()
    return acc


# -- Responses --------------------------------------------------------------------------------

def test_responses_stream_is_the_real_event_sequence():
    response = response_json(REPLY, R_BODY, USAGE)
    evs = events(b"".join(responses_stream(response)))
    kinds = [e for e, _ in evs]
    assert all(e == d["type"] for e, d in evs)
    assert [d["sequence_number"] for _, d in evs] == list(range(len(evs)))
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert evs[0][1]["response"]["status"] == "in_progress" and evs[0][1]["response"]["output"] == []
    # per item: reasoning summary, then the message's content part, then each call
    assert kinds[2:8] == ["response.output_item.added", "response.reasoning_summary_part.added",
                          "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
                          "response.reasoning_summary_text.done", "response.reasoning_summary_part.done"]
    text = [d["delta"] for e, d in evs if e == "response.output_text.delta"]
    assert "".join(text) == REPLY["content"] and len(text) == 3
    fc_added = [d["item"] for e, d in evs if e == "response.output_item.added"
                and d["item"]["type"] == "function_call"]
    assert [(i["call_id"], i["arguments"], i["status"]) for i in fc_added] == [
        ("call_a", "", "in_progress"), ("call_b", "", "in_progress")]
    assert all(i["id"].startswith("fc_") for i in fc_added)
    deltas = [d for e, d in evs if e == "response.function_call_arguments.delta"]
    assert "".join(d["delta"] for d in deltas if d["output_index"] == 2) == "{\"city\": \"Paris\", \"unit\": \"c\"}"
    done = [d for e, d in evs if e == "response.function_call_arguments.done"]
    assert [d["arguments"] for d in done] == [c["function"]["arguments"] for c in REPLY["tool_calls"]]
    assert evs[-1][1]["response"] == response


def test_responses_same_request_same_bytes():
    one = b"".join(responses_stream(response_json(REPLY, R_BODY, USAGE)))
    two = b"".join(responses_stream(response_json(REPLY, dict(R_BODY), USAGE)))
    other = b"".join(responses_stream(response_json(REPLY, {**R_BODY, "input": "x"}, USAGE)))
    assert one == two and one != other


def test_responses_accumulator_byte_by_byte_and_whole():
    response = response_json(REPLY, R_BODY, USAGE)
    raw = b"".join(responses_stream(response))
    for size in (1, 7, len(raw)):
        acc = feed(ResponsesAccumulator(), raw, size)
        assert acc.native == response and acc.notes == []
        msg = acc.message
        assert [(c["id"], c["function"]["arguments"]) for c in msg["tool_calls"]] == [
            (c["id"], c["function"]["arguments"]) for c in REPLY["tool_calls"]]
        assert msg["content"] == REPLY["content"] and acc.reply.finish_reason == "tool_calls"
    shape = acc.shape()
    assert any(s.startswith("call call_a (get_weather): arguments in 3 delta(s)") for s in shape)
    assert any(s.startswith("call call_b (get_weather): arguments in 2 delta(s)") for s in shape)


def test_responses_accumulator_rebuilds_a_cut_stream_and_says_so():
    raw = b"".join(responses_stream(response_json(REPLY, R_BODY, USAGE)))
    cut = raw[:raw.index(b"event: response.function_call_arguments.done")]
    acc = feed(ResponsesAccumulator(), cut, 5)
    assert acc.final is None
    assert acc.notes == ["the stream ended before response.completed: the response is partial"]
    calls = acc.message["tool_calls"]
    assert calls[0]["id"] == "call_a" and calls[0]["function"]["arguments"] == REPLY["tool_calls"][0]["function"]["arguments"]


def test_responses_accumulator_notes_protocol_slips():
    def ev(d):
        return f"event: {d['type']}\ndata: {json.dumps(d)}\n\n".encode()

    acc = ResponsesAccumulator()
    acc.feed(ev({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1"}}))
    acc.feed(ev({"type": "response.function_call_arguments.delta", "sequence_number": 1,
                 "output_index": 4, "item_id": "fc_x", "delta": "{"}))
    acc.feed(ev({"type": "response.output_item.added", "sequence_number": 5, "output_index": 0,
                 "item": {"type": "function_call", "id": "fc_1", "name": "w", "arguments": ""}}))
    acc.feed(b"data: {not json\n\n")
    acc.close()
    assert acc.notes == [
        "response.function_call_arguments.delta for output_index 4 before its output_item.added",
        "sequence_number 5 after 1: events lost or reordered",
        "the function_call at output_index 0 came without a call_id",
        "an event that is not JSON: '{not json'",
        "the stream ended before response.completed: the response is partial"]


# -- Anthropic --------------------------------------------------------------------------------

def test_anthropic_stream_is_the_real_event_sequence():
    message = message_json(REPLY, A_BODY, USAGE)
    evs = events(b"".join(anthropic_stream(message)))
    kinds = [e for e, _ in evs]
    assert all(e == d["type"] for e, d in evs)
    assert kinds[0] == "message_start" and kinds[1] == "content_block_start" and kinds[2] == "ping"
    assert kinds[-2:] == ["message_delta", "message_stop"] and kinds.count("ping") == 1
    start = evs[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["id"].startswith("msg_01")
    blocks = [d["content_block"] for e, d in evs if e == "content_block_start"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert blocks[2] == {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {}}
    json_deltas = [d["delta"]["partial_json"] for e, d in evs
                   if e == "content_block_delta" and d["index"] == 2]
    assert json_deltas[0] == "" and json.loads("".join(json_deltas)) == {"city": "Paris", "unit": "c"}
    assert any(d["delta"]["type"] == "signature_delta" for e, d in evs if e == "content_block_delta")
    assert evs[-2][1] == {"type": "message_delta",
                          "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                          "usage": {"output_tokens": 25}}


def test_anthropic_accumulator_byte_by_byte_and_whole():
    message = message_json(REPLY, A_BODY, USAGE)
    raw = b"".join(anthropic_stream(message))
    for size in (1, 11, len(raw)):
        acc = feed(AnthropicAccumulator(), raw, size)
        assert acc.native == message and acc.notes == [] and acc.pings == 1
        calls = acc.message["tool_calls"]
        assert [(c["id"], json.loads(c["function"]["arguments"])) for c in calls] == [
            ("call_a", {"city": "Paris", "unit": "c"}), ("call_b", {"city": "Rome"})]
        assert acc.reply.finish_reason == "tool_calls"
    assert "call call_a (get_weather): input in 4 input_json_delta(s)" in acc.shape()


def test_anthropic_accumulator_keeps_broken_input_text_and_notes_it():
    def ev(d):
        return f"event: {d['type']}\r\ndata: {json.dumps(d)}\r\n\r\n".encode()

    acc = AnthropicAccumulator()
    acc.feed(ev({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                     "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}}))
    acc.feed(ev({"type": "content_block_start", "index": 0,
                 "content_block": {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}}))
    for piece in ["", "{\"city\": \"Par", "is\", "]:
        acc.feed(ev({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "input_json_delta", "partial_json": piece}}))
    acc.feed(ev({"type": "content_block_stop", "index": 0}))
    acc.feed(ev({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}}))
    acc.feed(ev({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    acc.close()
    assert acc.message["tool_calls"][0]["function"]["arguments"] == "{\"city\": \"Paris\", "
    assert acc.notes[0].startswith("call toolu_1: its input_json_delta pieces do not join into JSON")
    assert acc.notes[1:] == ["a delta for block 3 that never started",
                             "the stream carried an error: overloaded_error: Overloaded",
                             "the stream ended before message_stop: the message is partial"]


# -- never raise ------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_accumulators_never_raise_on_garbage(data):
    for acc in (ResponsesAccumulator(), AnthropicAccumulator()):
        acc.feed(data)
        acc.feed(b"data: " + data + b"\n\n")
        acc.close()
        assert isinstance(acc.native, dict) and isinstance(acc.message, dict)
        assert isinstance(acc.shape(), list)


EVENT_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 5) | st.text(max_size=5),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                st.sampled_from(["type", "index", "output_index", "delta", "item",
                                                 "content_block", "response", "content_index",
                                                 "partial_json", "text", "message"]), inner, max_size=4),
                            max_leaves=10)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([
    "response.created", "response.output_item.added", "response.output_text.delta",
    "response.function_call_arguments.delta", "response.output_item.done", "response.completed",
    "response.content_part.added", "response.reasoning_summary_text.delta", "message_start",
    "content_block_start", "content_block_delta", "content_block_stop", "message_delta"]),
    st.dictionaries(st.sampled_from(["index", "output_index", "delta", "item", "content_block",
                                     "response", "content_index", "message", "summary_index"]),
                    EVENT_VALUES, max_size=5)), max_size=8))
def test_accumulators_never_raise_on_well_framed_nonsense(evs):
    raw = b"".join(f"event: {k}\ndata: {json.dumps({'type': k, **v})}\n\n".encode() for k, v in evs)
    for acc in (ResponsesAccumulator(), AnthropicAccumulator()):
        acc.feed(raw)
        acc.close()
        assert isinstance(acc.message, dict) and isinstance(acc.shape(), list)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5000), max_size=12))
def test_any_chunking_gives_the_same_result(cuts):
    response = response_json(REPLY, R_BODY, USAGE)
    message = message_json(REPLY, A_BODY, USAGE)
    for raw, acc, native in ((b"".join(responses_stream(response)), ResponsesAccumulator(), response),
                             (b"".join(anthropic_stream(message)), AnthropicAccumulator(), message)):
        points = sorted({c % len(raw) for c in cuts} | {0, len(raw)})
        for a, b in itertools.pairwise(points):
            acc.feed(raw[a:b])
        acc.close()
        assert acc.native == native and acc.notes == []


# -- said in the chosen language --------------------------------------------------------------

def _slipping_streams() -> list[str]:
    """Every note and shape line three accumulators give for streams that slip in every way
    they can (English, as a transcript records them)."""
    from agentdbg.wire.chat_stream import StreamAccumulator

    def ev(d, event=None):
        return f"event: {event or d['type']}\ndata: {json.dumps(d)}\n\n".encode()

    def data(*chunks):
        return b"".join(b"data: " + (c if isinstance(c, bytes) else json.dumps(c).encode()) + b"\n\n"
                        for c in chunks)

    def choice(delta, finish=None):
        return {"choices": [{"delta": delta, "finish_reason": finish}]}

    chat = StreamAccumulator()
    chat.feed(data(b"oops", b"[1]", {"choices": "x"}, {"choices": [1]}, choice(1),
                   choice({"tool_calls": 1}), choice({"tool_calls": [1]}), choice({}, 7),
                   choice({"tool_calls": [{"index": "a", "id": "c0", "function": {"name": "f"}}]}),
                   choice({"tool_calls": [{"index": 0, "id": "c9"}]}),
                   choice({"tool_calls": [{"index": 1, "function": {"name": "g", "arguments": "{}"}}]}),
                   b"[" * 200_000))
    chat.close()
    anthropic = AnthropicAccumulator()
    for d, event in [({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, None),
                     ({"type": "message_start", "message": {"content": []}}, "ping"),
                     ({"type": "content_block_start"}, None),
                     ({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, None),
                     ({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "name": "w"}}, None),
                     ({"type": "content_block_start", "index": 4, "content_block": {"type": "thinking"}}, None),
                     ({"type": "content_block_start", "index": 5, "content_block": {"type": "web_search"}}, None),
                     ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}, None),
                     ({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{"}}, None),
                     ({"type": "content_block_delta", "index": 0, "delta": {"type": "odd_delta"}}, None),
                     ({"type": "content_block_delta", "index": 9, "delta": {}}, None),
                     ({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{"}}, None),
                     ({"type": "content_block_stop", "index": 3}, None),
                     ({"type": "content_block_stop", "index": 9}, None),
                     ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, None)]:
        anthropic.feed(ev(d, event))
    anthropic.feed(b"data: [1]\n\ndata: {oops\n\ndata: " + b"[" * 200_000 + b"\n\n")
    anthropic.close()
    responses = ResponsesAccumulator()
    for d in [{"type": "response.created", "sequence_number": 0, "response": {"id": "r"}},
              {"type": "response.function_call_arguments.delta", "sequence_number": 1, "output_index": 4, "delta": "{"},
              {"type": "response.output_item.added", "sequence_number": 5},
              {"type": "response.output_item.added", "sequence_number": 6, "output_index": 0,
               "item": {"type": "function_call", "id": "fc_1", "name": "w", "arguments": ""}},
              {"type": "response.output_item.added", "sequence_number": 7, "output_index": 0,
               "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "w", "arguments": ""}},
              {"type": "response.output_item.added", "sequence_number": 8, "output_index": 1,
               "item": {"type": "message", "id": "msg_1", "content": []}},
              {"type": "response.output_item.added", "sequence_number": 9, "output_index": 2,
               "item": {"type": "reasoning", "id": "rs_1"}},
              {"type": "response.output_text.delta", "sequence_number": 10, "output_index": 1,
               "content_index": 3, "delta": "x"},
              {"type": "response.function_call_arguments.delta", "sequence_number": 11, "output_index": 0, "delta": "{"},
              {"type": "response.function_call_arguments.done", "sequence_number": 12, "output_index": 0,
               "arguments": "{}"},
              {"type": "response.output_item.done", "sequence_number": 13},
              {"type": "response.output_item.done", "sequence_number": 14, "output_index": 7, "item": {"type": "x"}},
              {"type": "response.output_item.done", "sequence_number": 15, "output_index": 0,
               "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "w", "arguments": "[]"}},
              {"type": "error", "sequence_number": 16, "code": "server_error", "message": "boom"},
              {"type": "response.incomplete", "sequence_number": 17,
               "response": {"incomplete_details": {"reason": "max_output_tokens"}}}]:
        responses.feed(ev(d))
    responses.close()
    return chat.shape() + anthropic.shape() + responses.shape()


def test_every_stream_note_reads_back_in_chinese():
    """Each line a stream gives (a template per shape, values as the stream carried them) is
    said in Chinese by ``stream_note``, read back from the English the transcript records."""
    import re

    from agentdbg import i18n
    from agentdbg.wire.common import stream_note

    lines = _slipping_streams()
    assert len(lines) >= 40, lines
    try:
        i18n.use("zh")
        said = {line: stream_note(line) for line in lines}
    finally:
        i18n.use("en")
    untranslated = [line for line, zh in said.items() if zh == line or not re.search(r"[\u4e00-\u9fff]", zh)]
    assert untranslated == [], untranslated
    assert said["a chunk that is not JSON: b'oops'"] == "一个不是 JSON 的数据块：b'oops'"
    assert said["a chunk that is an array, not an object: b'[1]'"] == "一个数据块是数组，而不是对象：b'[1]'"
    assert said["web_search block 5"] == "web_search 块 5"
    assert said["reasoning item rs_1"] == "reasoning 项 rs_1"
    assert [stream_note(line) for line in lines] == lines    # English as it was
