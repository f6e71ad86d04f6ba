"""Native <-> chat conversion: what the engine sees, and what goes back on the wire."""

import copy
import json

import pytest
from wire_samples import ANTHROPIC_BODY, RESPONSES_BODY

from agentdbg.checker import check
from agentdbg.wire import anthropic as A
from agentdbg.wire import detect_format
from agentdbg.wire import responses as R
from agentdbg.wire.common import strip_wire


def chat(form):
    return strip_wire(form.messages)


def back(module, form):
    return module.from_chat(form.messages, form.tools, form.tool_choice, form.parallel_tool_calls,
                            params=form.params, native_tools=form.native_tools)


# -- Responses ------------------------------------------------------------------------------

def test_responses_to_chat_carries_calls_ids_arguments_and_outputs():
    form = R.to_chat(RESPONSES_BODY)
    msgs = chat(form)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "assistant",
                                         "user", "assistant", "tool", "assistant", "tool"]
    assert form.sources[:4] == ["instructions", "input[0]", "input[2]", "input[4]"]
    calls = msgs[2]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("call_a", "get_weather", "{\"city\":\"Paris\"}"),
        ("call_b", "get_weather", "{\"city\": \"Rome\"}")]          # arguments byte for byte
    assert form.call_locs[(2, 0)] == (2,) and form.call_locs[(2, 1)] == (3,)
    assert msgs[3] == {"role": "tool", "tool_call_id": "call_a", "content": "{\"temp_c\": 18}"}
    assert msgs[4]["content"] == [{"type": "text", "text": "21"}]
    assert msgs[5] == {"role": "assistant", "content": "Paris 18, Rome 21."}
    assert msgs[7]["tool_calls"][0] == {"id": "call_c", "type": "custom",
                                        "custom": {"name": "lint", "input": "ruff check ."}}
    shell = msgs[9]["tool_calls"][0]
    assert shell["id"] == "call_d" and shell["function"]["name"] == "local_shell_call"
    assert json.loads(shell["function"]["arguments"])["action"]["command"] == ["ls"]
    # user parts: text and URL image carried, the file kept as a marker
    assert msgs[1]["content"][1] == {"type": "image_url",
                                     "image_url": {"url": "https://x.test/a.png", "detail": "auto"}}
    assert msgs[1]["content"][2] == {"type": "wire", "item": {"type": "input_file", "file_id": "file-123"}}
    assert [t["function"]["name"] for t in form.tools if t["type"] == "function"] == ["get_weather"]
    assert form.native_tools == [{"type": "web_search"}, {"type": "local_shell"}]
    assert form.params == {"model": "o4-mini", "reasoning": {"effort": "low"}, "store": True}


def test_responses_chat_form_is_a_valid_chat_history():
    """The engine's checker sees a well-paired chat history where the native one is well paired."""
    form = R.to_chat(RESPONSES_BODY)
    found = check({"messages": form.messages, "tools": [t for t in form.tools if t["type"] == "function"]})
    pairing = {"orphan-tool-message", "missing-tool-response", "interleaved-message",
               "tool-call-id-mismatch", "duplicate-tool-response", "duplicate-tool-call-id"}
    assert [f.rule for f in found if f.rule in pairing] == []


def test_responses_round_trip_is_exact():
    body = copy.deepcopy(RESPONSES_BODY)
    assert back(R, R.to_chat(body)) == RESPONSES_BODY
    # a bare input array and a string input round-trip too
    assert back(R, R.to_chat(RESPONSES_BODY["input"]))["input"] == RESPONSES_BODY["input"]
    assert back(R, R.to_chat({"input": "hi"}))["input"] == [{"role": "user", "content": "hi"}]


def test_responses_edit_keeps_ids_reasoning_and_neighbours():
    form = R.to_chat(RESPONSES_BODY)
    form.messages[2]["tool_calls"][1]["function"]["arguments"] = "{\"city\": \"Roma\"}"
    form.messages[3]["content"] = "{\"temp_c\": 19}"
    body = back(R, form)
    assert body["input"][1] == RESPONSES_BODY["input"][1]                    # reasoning kept
    assert body["input"][3] == {**RESPONSES_BODY["input"][3], "arguments": "{\"city\": \"Roma\"}"}
    assert body["input"][4] == {**RESPONSES_BODY["input"][4], "output": "{\"temp_c\": 19}"}
    assert body["input"][5:] == RESPONSES_BODY["input"][5:]


AGENT_MESSAGE = {"type": "agent_message", "id": "amsg_1", "author": "/root/greet", "recipient": "/root",
                 "content": [{"type": "input_text", "text": "Message Type: FINAL_ANSWER\nTask name: /root\n"
                              "Sender: /root/greet\nPayload:\nhello"},
                             {"type": "encrypted_content", "encrypted_content": "gAAAA-sealed"}]}


def test_an_agent_message_is_the_receiver_s_user_message_and_goes_back_as_it_came():
    """Codex's agents write to each other with agent_message items: the model reads them as its
    input, so the chat form shows them as user messages (not hidden under a neighbour)."""
    body = {"model": "m", "input": [{"role": "user", "content": "go"}, AGENT_MESSAGE]}
    form = R.to_chat(copy.deepcopy(body))
    assert [(m["role"], m["content"][0]["text"][-5:]) for m in form.messages[1:]] == [("user", "hello")]
    assert back(R, form) == body
    form.messages[1]["content"][0]["text"] = "Message Type: FINAL_ANSWER\nPayload:\nedited"
    [item] = back(R, form)["input"][1:]
    assert {k: v for k, v in item.items() if k != "content"} == \
        {k: v for k, v in AGENT_MESSAGE.items() if k != "content"}
    assert item["content"] == [{"type": "input_text", "text": "Message Type: FINAL_ANSWER\nPayload:\nedited"},
                               AGENT_MESSAGE["content"][1]]


def test_responses_new_engine_messages_become_items():
    form = R.to_chat({"model": "m", "input": "weather?"})
    msgs = form.messages + [
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}},
            {"id": "call_2", "type": "custom", "custom": {"name": "lint", "input": "x"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "ok"}]}]
    body = R.from_chat(msgs, params=form.params)
    assert body["input"][1:] == [
        {"role": "assistant", "content": "Let me look."},
        {"type": "function_call", "call_id": "call_1", "name": "w", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "lint", "input": "x"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "custom_tool_call_output", "call_id": "call_2",
         "output": [{"type": "input_text", "text": "ok"}]}]


def test_responses_tool_choice_maps_both_ways():
    for native, chat_form in [
        ({"type": "function", "name": "w"}, {"type": "function", "function": {"name": "w"}}),
        ("required", "required"),
        ({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "w"}]},
         {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
             {"type": "function", "function": {"name": "w"}}]}}),
    ]:
        assert R.choice_to_chat(native) == chat_form
        assert R.choice_from_chat(chat_form) == native


def test_responses_a_defect_is_carried_not_fixed():
    """A lost reasoning item or an orphan output stays lost / orphaned through the round trip."""
    body = {"input": [{"role": "user", "content": "q"},
                      {"type": "function_call_output", "call_id": "call_x", "output": "1"}]}
    form = R.to_chat(body)
    assert [f.rule for f in check(strip_wire(form.messages))] == ["orphan-tool-message"]
    assert back(R, form)["input"] == body["input"]


# -- Anthropic ------------------------------------------------------------------------------

def test_anthropic_to_chat_splits_user_messages_in_order():
    form = A.to_chat(ANTHROPIC_BODY)
    msgs = chat(form)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "user",
                                         "assistant", "tool", "user", "assistant"]
    assert form.sources[3:6] == ["messages[2].content[0]", "messages[2].content[1]",
                                 "messages[2].content[2]"]
    assert form.locs[3:6] == [(2, 0), (2, 1), (2, 2)]
    asst = msgs[2]
    assert asst["content"] == "Checking both."
    assert [(c["id"], json.loads(c["function"]["arguments"])) for c in asst["tool_calls"]] == [
        ("toolu_01A", {"city": "Paris"}), ("toolu_01B", {"city": "Rome"})]
    assert form.call_locs[(2, 0)] == (1, 2) and form.call_locs[(2, 1)] == (1, 3)
    assert msgs[4] == {"role": "tool", "tool_call_id": "toolu_01B", "content": "timeout",
                       "is_error": True}
    assert msgs[7] == {"role": "tool", "tool_call_id": "toolu_01C", "content": ""}
    assert msgs[1]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}
    assert msgs[1]["content"][2]["type"] == "wire"
    assert form.tools == [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather",
        "parameters": ANTHROPIC_BODY["tools"][0]["input_schema"]},
        "wire": {"tool": ANTHROPIC_BODY["tools"][0]}}]
    assert form.tool_choice == "auto" and form.parallel_tool_calls is True
    assert form.native_tools == [ANTHROPIC_BODY["tools"][1]]


def test_anthropic_round_trip_is_exact():
    assert back(A, A.to_chat(copy.deepcopy(ANTHROPIC_BODY))) == ANTHROPIC_BODY
    bare = ANTHROPIC_BODY["messages"]
    assert back(A, A.to_chat(bare))["messages"] == bare


def test_anthropic_edit_rebuilds_around_thinking_and_server_blocks():
    form = A.to_chat(ANTHROPIC_BODY)
    form.messages[6]["tool_calls"][0]["function"]["arguments"] = "{\"city\": \"Roma\"}"
    form.messages[7]["content"] = "22"
    body = back(A, form)
    blocks = body["messages"][3]["content"]
    assert [b["type"] for b in blocks] == ["redacted_thinking", "server_tool_use",
                                           "web_search_tool_result", "tool_use"]
    assert blocks[3] == {**ANTHROPIC_BODY["messages"][3]["content"][3], "input": {"city": "Roma"}}
    assert body["messages"][4]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01C", "content": "22"}]
    assert body["messages"][:3] == ANTHROPIC_BODY["messages"][:3]


def test_anthropic_new_results_become_one_user_message_results_first():
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{\"c\":1}"}},
                {"id": "call_2", "type": "function", "function": {"name": "w", "arguments": "{\"c\":2}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a"},
            {"role": "tool", "tool_call_id": "call_2", "content": "b", "is_error": True},
            {"role": "user", "content": "and?"}]
    body = A.from_chat(msgs, tool_choice="required", parallel_tool_calls=False,
                       params={"model": "c", "max_tokens": 10})
    assert body["system"] == "be brief"
    assert body["messages"] == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_1", "name": "w", "input": {"c": 1}},
            {"type": "tool_use", "id": "call_2", "name": "w", "input": {"c": 2}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "a"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "b", "is_error": True},
            {"type": "text", "text": "and?"}]}]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


def test_anthropic_broken_arguments_are_carried_for_the_checker():
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "toolu_1", "type": "function", "function": {"name": "w", "arguments": "{\"c\": "}}]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "x"}]
    from agentdbg.checker.formats import check_anthropic

    body = A.from_chat(msgs, params={"model": "c", "max_tokens": 5})
    assert body["messages"][1]["content"][0]["input"] == "{\"c\": "
    assert [f.rule for f in check_anthropic(body)] == ["tool-use-input-not-object"]


# -- detection ------------------------------------------------------------------------------

@pytest.mark.parametrize("doc,expected", [
    (RESPONSES_BODY, "responses"),
    (RESPONSES_BODY["input"], "responses"),
    ({"model": "gpt-5", "input": "hi"}, "responses"),
    ({"previous_response_id": "resp_1", "input": []}, "responses"),
    ([{"type": "function_call_output", "call_id": "c", "output": "1"}], "responses"),
    ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], "responses"),
    (ANTHROPIC_BODY, "anthropic"),
    (ANTHROPIC_BODY["messages"], "anthropic"),
    ({"model": "c", "max_tokens": 5, "system": "s", "messages": [{"role": "user", "content": "hi"}]},
     "anthropic"),
    ({"messages": [{"role": "user", "content": "q"}], "tools": [{"name": "w", "input_schema": {}}]},
     "anthropic"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "1"}]}],
     "anthropic"),
    ([{"role": "tool", "tool_call_id": "c", "content": "1"}], "chat"),
    ({"messages": [{"role": "user", "content": "q"}],
      "tools": [{"type": "function", "function": {"name": "w"}}]}, "chat"),
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], "chat"),
    # ties: nothing tells the formats apart, all three read it the same way -> chat
    ([{"role": "user", "content": "hi"}], "chat"),
    ({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"},
                                                   {"role": "assistant", "content": "yo"}]}, "chat"),
    ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "chat"),
    # not a conversation
    ({"foo": 1}, None), ([], None), ("text", None), ([1, 2], None),
])
def test_detect_format(doc, expected):
    assert detect_format(doc) == expected
