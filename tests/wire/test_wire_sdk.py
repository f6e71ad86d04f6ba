"""The official clients over real HTTP against a server answering from the wire builders and
encoders: each runs a two-turn tool loop written the way its SDK docs write it. The clients
parse every event, get the calls with their ids and arguments, and their second request passes
the checker; a planted classic mistake gets the right rule and the real API's words."""

import json

import pytest
from wire_http import WireServer

from agentdbg.checker.formats import check_anthropic, check_responses

QUESTION = "What's the weather in Paris and Rome?"
MODEL = "claude-sonnet-4-6"
TEMPS = {"Paris": 18, "Rome": 24, "Oslo": 5}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "enum": list(TEMPS)}},
          "required": ["city"], "additionalProperties": False}
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "description": "Current temperature "
                    "for a city.", "parameters": SCHEMA, "strict": True}]
ANTHROPIC_TOOLS = [{"name": "get_weather", "description": "Current temperature for a city.",
                    "input_schema": SCHEMA}]


def get_weather(city: str) -> dict:
    return {"city": city, "temp_c": TEMPS[city]}


@pytest.fixture
def server():
    s = WireServer(reasoning="Two cities: call the tool for each.").start()
    yield s
    s.stop()


@pytest.fixture
def openai_client(server):
    import openai

    return openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0)


@pytest.fixture
def anthropic_client(server):
    import anthropic

    return anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0)


# -- Responses --------------------------------------------------------------------------------

def responses_first_turn(client, mode: str):
    """One request in the given mode; returns the final response object the client built."""
    kwargs = {"model": "o4-mini", "tools": RESPONSES_TOOLS, "reasoning": {"effort": "low"},
              "input": [{"role": "user", "content": QUESTION}]}
    if mode == "create":
        return client.responses.create(**kwargs), []
    if mode == "stream=True":
        seen, final = [], None
        for event in client.responses.create(**kwargs, stream=True):
            seen.append(event.type)
            if event.type == "response.completed":
                final = event.response
        return final, seen
    with client.responses.stream(**kwargs) as stream:
        seen = [event.type for event in stream]
        return stream.get_final_response(), seen


@pytest.mark.parametrize("mode", ["create", "stream=True", "responses.stream"])
def test_responses_tool_loop(server, openai_client, mode):
    response, seen = responses_first_turn(openai_client, mode)
    if mode != "create":
        assert seen[0] == "response.created" and seen[-1] == "response.completed"
        assert seen.count("response.function_call_arguments.delta") >= 2
    assert response.output[0].type == "reasoning"
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert [c.call_id for c in calls] == ["call_o1", "call_o2"]
    assert all(c.id.startswith("fc_") for c in calls)

    # the function-calling guide's loop: append the output, then one output per call
    input_list = [{"role": "user", "content": QUESTION}, *response.output]
    for item in response.output:
        if item.type == "function_call":
            result = get_weather(**json.loads(item.arguments))
            input_list.append({"type": "function_call_output", "call_id": item.call_id,
                               "output": json.dumps(result)})
    final = openai_client.responses.create(model="o4-mini", tools=RESPONSES_TOOLS,
                                           reasoning={"effort": "low"}, input=input_list)
    assert "Paris" in final.output_text and "24" in final.output_text
    second = server.requests[1]
    assert [i.get("type") for i in second["input"][1:4]] == ["reasoning", "function_call", "function_call"]
    assert check_responses(second) == []


def _responses_second(server, client, plant):
    response, _ = responses_first_turn(client, "create")
    input_list = [{"role": "user", "content": QUESTION}, *response.output]
    outputs = [{"type": "function_call_output", "call_id": i.call_id,
                "output": json.dumps(get_weather(**json.loads(i.arguments)))}
               for i in response.output if i.type == "function_call"]
    input_list = plant(input_list, outputs)
    import openai

    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(model="o4-mini", tools=RESPONSES_TOOLS,
                                reasoning={"effort": "low"}, input=input_list)
    return err.value, server.findings[-1], response


def test_responses_result_with_no_call(server, openai_client):
    # a history trim cut the call items and kept the outputs
    err, findings, _ = _responses_second(server, openai_client,
                                         lambda items, outs: [items[0], *outs])
    assert [f.rule for f in findings] == ["orphan-tool-message"]
    assert findings[0].index == 1 and findings[0].path == "input[1]"
    assert err.status_code == 400 and err.body["param"] == "input"
    assert err.body["message"] == "No tool call found for function call output with call_id call_o1."


def test_responses_call_with_no_result(server, openai_client):
    err, findings, _ = _responses_second(server, openai_client,
                                         lambda items, outs: [*items, outs[0]])
    assert [f.rule for f in findings] == ["missing-tool-response"]
    assert findings[0].path == "input[3]" and findings[0].tool_call_id == "call_o2"
    assert err.body["message"] == "No tool output found for function call call_o2."


def test_responses_lost_reasoning_item(server, openai_client):
    err, findings, response = _responses_second(
        server, openai_client,
        lambda items, outs: [i for i in items if getattr(i, "type", None) != "reasoning"] + outs)
    fc = next(i for i in response.output if i.type == "function_call")
    assert [f.rule for f in findings] == ["reasoning-item-missing"]
    assert findings[0].path == "input[1]"
    assert err.body["message"] == (f"Item '{fc.id}' of type 'function_call' was provided without "
                                   "its required 'reasoning' item: 'rs_…'.")


def test_responses_lost_reasoning_item_named_when_the_proxy_saw_it(server, openai_client):
    """With the earlier output known (what a proxy saw), the missing item is named."""
    response, _ = responses_first_turn(openai_client, "create")
    output = [i.model_dump(exclude_none=True) for i in response.output]
    resent = [{"role": "user", "content": QUESTION}] + [i for i in output if i["type"] != "reasoning"]
    resent += [{"type": "function_call_output", "call_id": i["call_id"], "output": "{}"}
               for i in output if i["type"] == "function_call"]
    found = check_responses({"input": resent}, prior=output)
    assert [f.rule for f in found] == ["reasoning-item-missing"]
    assert found[0].api_error.endswith(f"'reasoning' item: '{output[0]['id']}'.")


# -- Anthropic --------------------------------------------------------------------------------

def anthropic_first_turn(client, mode: str):
    kwargs = {"model": MODEL, "max_tokens": 1024, "tools": ANTHROPIC_TOOLS,
              "messages": [{"role": "user", "content": QUESTION}]}
    if mode == "create":
        return client.messages.create(**kwargs), []
    if mode == "stream=True":
        seen, deltas = [], []
        for event in client.messages.create(**kwargs, stream=True):
            seen.append(event.type)
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                deltas.append(event.delta.partial_json)
        assert json.loads("".join(deltas[:len(deltas) // 2])) == {"city": "Paris"}
        return None, seen
    with client.messages.stream(**kwargs) as stream:
        seen = [event.type for event in stream]
        return stream.get_final_message(), seen


@pytest.mark.parametrize("mode", ["create", "messages.stream"])
def test_anthropic_tool_loop(server, anthropic_client, mode):
    response, seen = anthropic_first_turn(anthropic_client, mode)
    if seen:
        assert seen[0] == "message_start" and seen[-1] == "message_stop"
        assert "input_json" in seen and "content_block_stop" in seen
    assert response.stop_reason == "tool_use"
    tool_uses = [b for b in response.content if b.type == "tool_use"]
    assert [(b.name, b.input) for b in tool_uses] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert [b.id for b in tool_uses] == ["call_o1", "call_o2"]

    # the tool-use guide's loop: the assistant content as is, then one user message of results
    messages = [{"role": "user", "content": QUESTION},
                {"role": "assistant", "content": response.content},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": b.id,
                     "content": json.dumps(get_weather(**b.input))} for b in tool_uses]}]
    final = anthropic_client.messages.create(model=MODEL, max_tokens=1024,
                                             tools=ANTHROPIC_TOOLS, messages=messages)
    assert final.stop_reason == "end_turn" and "Rome" in final.content[0].text
    assert check_anthropic(server.requests[1]) == []


def test_anthropic_raw_stream_events(server, anthropic_client):
    _, seen = anthropic_first_turn(anthropic_client, "stream=True")
    assert seen[:2] == ["message_start", "content_block_start"]   # the client drops pings
    assert seen[-2:] == ["message_delta", "message_stop"]
    assert seen.count("content_block_start") == 2 == seen.count("content_block_stop")
    sent = server.sent[-1].split(b"\n\n")
    assert [e.split(b"\n")[0] for e in sent[:3]] == [
        b"event: message_start", b"event: content_block_start", b"event: ping"]


def _anthropic_second(server, client, plant):
    import anthropic

    response, _ = anthropic_first_turn(client, "create")
    results = [{"type": "tool_result", "tool_use_id": b.id,
                "content": json.dumps(get_weather(**b.input))}
               for b in response.content if b.type == "tool_use"]
    messages = plant([{"role": "user", "content": QUESTION},
                      {"role": "assistant", "content": response.content}], results)
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.create(model=MODEL, max_tokens=1024,
                               tools=ANTHROPIC_TOOLS, messages=messages)
    assert err.value.status_code == 400
    assert err.value.body["type"] == "error"
    assert err.value.body["error"]["type"] == "invalid_request_error"
    return err.value.body["error"]["message"], server.findings[-1]


def test_anthropic_result_with_no_call(server, anthropic_client):
    text, findings = _anthropic_second(server, anthropic_client, lambda msgs, results: [
        {"role": "user", "content": results}])
    assert [f.rule for f in findings] == ["orphan-tool-message"]
    assert findings[0].path == "messages[0].content[0]"
    assert text == ("messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
                    "call_o1. Each `tool_result` block must have a corresponding `tool_use` block "
                    "in the previous message.")


def test_anthropic_call_with_no_result(server, anthropic_client):
    text, findings = _anthropic_second(server, anthropic_client, lambda msgs, results: [
        *msgs, {"role": "user", "content": results[:1]}])
    assert [f.rule for f in findings] == ["missing-tool-response"]
    assert findings[0].path == "messages[1].content[1]" and findings[0].tool_call_id == "call_o2"
    assert text == ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
                    "after: call_o2. Each `tool_use` block must have a corresponding `tool_result` "
                    "block in the next message.")


def test_anthropic_text_before_tool_results(server, anthropic_client):
    text, findings = _anthropic_second(server, anthropic_client, lambda msgs, results: [
        *msgs, {"role": "user", "content": [{"type": "text", "text": "Here you go:"}, *results]}])
    assert [f.rule for f in findings] == ["tool-result-not-first"]
    assert findings[0].path == "messages[2].content[0]"
    assert text.startswith("messages.1: `tool_use` ids were found without `tool_result` blocks "
                           "immediately after: call_o1, call_o2.")
