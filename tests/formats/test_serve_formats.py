"""`agentdbg serve` answers Chat Completions, the Responses API and the Anthropic Messages API,
plain and streaming, as a strict local API: the official clients run their tool loops against
it; a request breaking a rule gets the real API's status and error body; a body that cannot be
read gets a JSON 400; `--replay` names the first difference and keeps its place."""

import json
import subprocess
import sys

import anthropic
import httpx
import openai
import pytest
from fmt_stack import (
    QUESTION,
    RESPONSES_TOOLS,
    RESULTS,
    Served,
    anthropic_loop,
    responses_loop,
    run_tool,
)

from agentdbg.providers.scripted import ScriptedModel


@pytest.fixture(scope="module")
def strict():
    s = Served()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def lenient():
    s = Served(lenient=True)
    yield s
    s.stop()


def oai(served):
    return openai.OpenAI(base_url=served.url, api_key="sk-test", max_retries=0)


def claude(served):
    return anthropic.Anthropic(base_url=served.root, api_key="sk-ant-test", max_retries=0)


def post(url, path, body, **headers) -> httpx.Response:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    return httpx.post(url + path, content=data, timeout=30,
                      headers={"content-type": "application/json", **headers})


# -- the official clients' loops ----------------------------------------------------------------

@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream=True"])
def test_responses_tool_loop(strict, stream):
    text, items = responses_loop(oai(strict), stream=stream)
    assert "杭州转运中心" in text
    kinds = [getattr(i, "type", None) or i.get("type") for i in items]
    assert kinds.count("function_call") == 2 and kinds.count("function_call_output") == 2


@pytest.mark.parametrize("stream", [False, True], ids=["messages.create", "messages.stream"])
def test_anthropic_tool_loop(strict, stream):
    text, messages = anthropic_loop(claude(strict), stream=stream)
    assert "杭州转运中心" in text and len(messages) == 6


def test_chat_completions_still_served_plain_and_streaming(strict):
    client = oai(strict)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}],
                                           tools=[{"type": "function", "function": {
                                               "name": t["name"], "parameters": t["parameters"]}}
                                               for t in RESPONSES_TOOLS])
    assert reply.choices[0].message.tool_calls[0].function.name == "query_order"
    chunks = list(client.chat.completions.create(model="m", stream=True,
                                                 messages=[{"role": "user", "content": "hi"}]))
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_the_same_request_gets_the_same_bytes(strict):
    body = {"model": "m", "input": QUESTION, "tools": RESPONSES_TOOLS}
    assert post(strict.url, "/responses", body).content == post(strict.url, "/responses", body).content


def test_previous_response_id_continues_a_stored_response(strict):
    client = oai(strict)
    first = client.responses.create(model="m", tools=RESPONSES_TOOLS, input=QUESTION)
    call = next(i for i in first.output if i.type == "function_call")
    second = client.responses.create(model="m", tools=RESPONSES_TOOLS, previous_response_id=first.id,
                                     input=[{"type": "function_call_output", "call_id": call.call_id,
                                             "output": '{"status": "shipped", "tracking_no": "SF123456"}'}])
    assert next(i for i in second.output if i.type == "function_call").name == "query_logistics"
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model="m", input="hi", previous_response_id="resp_unknown")
    assert caught.value.body == {"message": "Previous response with id 'resp_unknown' not found.",
                                 "type": "invalid_request_error", "param": "previous_response_id",
                                 "code": "previous_response_not_found"}


def test_asked_to_reason_the_model_returns_its_reasoning(strict):
    client = oai(strict)
    response = client.responses.create(model="o4-mini", tools=RESPONSES_TOOLS, input=QUESTION,
                                       reasoning={"effort": "low"})
    assert [i.type for i in response.output] == ["reasoning", "function_call"]
    message = claude(strict).messages.create(
        model="claude-sonnet-4-6", max_tokens=2048, tools=[{"name": t["name"], "input_schema":
                                                            t["parameters"]} for t in RESPONSES_TOOLS],
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": QUESTION}])
    assert [b.type for b in message.content] == ["thinking", "tool_use"]
    assert message.content[0].signature


# -- rejected as the real API rejects ---------------------------------------------------------

def test_responses_classic_mistakes_get_the_real_400(strict):
    client = oai(strict)
    with pytest.raises(openai.BadRequestError) as orphan:
        client.responses.create(model="m", input=[
            {"role": "user", "content": QUESTION},
            {"type": "function_call_output", "call_id": "call_x", "output": "{}"}])
    assert orphan.value.body == {"message": "No tool call found for function call output with "
                                            "call_id call_x.", "type": "invalid_request_error",
                                 "param": "input", "code": None}
    with pytest.raises(openai.BadRequestError) as missing:
        client.responses.create(model="m", input=[
            {"role": "user", "content": QUESTION},
            {"type": "function_call", "call_id": "call_y", "name": "query_order", "arguments": "{}"},
            {"role": "user", "content": "还在吗?"}])
    assert missing.value.body["message"] == "No tool output found for function call call_y."
    first = client.responses.create(model="o4-mini", tools=RESPONSES_TOOLS, input=QUESTION,
                                    reasoning={"effort": "low"})
    rs, call = first.output
    with pytest.raises(openai.BadRequestError) as lost:   # the reasoning item was dropped
        client.responses.create(model="o4-mini", tools=RESPONSES_TOOLS, reasoning={"effort": "low"},
                                input=[{"role": "user", "content": QUESTION}, call,
                                       {"type": "function_call_output", "call_id": call.call_id,
                                        "output": "{}"}])
    assert lost.value.body["message"] == (f"Item '{call.id}' of type 'function_call' was provided "
                                          f"without its required 'reasoning' item: '{rs.id}'.")


def test_anthropic_classic_mistakes_get_the_real_400(strict):
    client = claude(strict)
    call = {"type": "tool_use", "id": "toolu_01A", "name": "query_order", "input": {"order_id": "ORD-2026-001"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "{}"}
    cases = {
        "text before the tool_result blocks": [
            {"role": "user", "content": QUESTION}, {"role": "assistant", "content": [call]},
            {"role": "user", "content": [{"type": "text", "text": "here"}, result]}],
        "a call with no result": [
            {"role": "user", "content": QUESTION}, {"role": "assistant", "content": [call]},
            {"role": "user", "content": "还在吗?"}],
    }
    for name, messages in cases.items():
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model="m", max_tokens=100, messages=messages)
        assert caught.value.status_code == 400, name
        assert caught.value.body["error"]["message"] == (
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
            "toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the "
            "next message."), name
    with pytest.raises(anthropic.BadRequestError) as orphan:
        client.messages.create(model="m", max_tokens=100, messages=[
            {"role": "user", "content": QUESTION}, {"role": "assistant", "content": "好的"},
            {"role": "user", "content": [result]}])
    assert orphan.value.body == {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
                   "toolu_01A. Each `tool_result` block must have a corresponding `tool_use` block "
                   "in the previous message."}}


def test_an_anthropic_request_with_no_messages_gets_the_real_400(strict):
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude(strict).messages.create(model="m", max_tokens=100, messages=[])
    assert caught.value.body == {"type": "error", "error": {
        "type": "invalid_request_error", "message": "messages: at least one message is required"}}


def test_chat_rejection_carries_the_param(strict):
    r = post(strict.url, "/chat/completions", {"model": "m", "messages": [
        {"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "x"}]})
    assert r.status_code == 400
    assert r.json()["error"] == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                   "message with 'tool_calls'.", "type": "invalid_request_error",
        "param": "messages.[1].role", "code": None}


def test_lenient_answers_what_strict_rejects(strict, lenient):
    body = {"model": "m", "input": [{"role": "user", "content": QUESTION},
                                    {"type": "function_call_output", "call_id": "call_x", "output": "{}"}]}
    assert post(strict.url, "/responses", body).status_code == 400
    assert post(lenient.url, "/responses", body).status_code == 200


MALFORMED = [
    ("/chat/completions", b"{not json"),
    ("/chat/completions", b'{"model": "m", "messages": ' + b"[" * 3000 + b"]" * 3000 + b"}"),
    ("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                           "tools": [{"type": "function", "function": {
                               "name": "f", "parameters": {"type": "object", "properties": "oops"}}}]}),
    ("/chat/completions", {"model": "m", "messages": "hi"}),
    ("/responses", [1, 2]),
    ("/responses", {"model": "m", "input": [1]}),
    ("/responses", {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f",
                                                             "parameters": {"properties": "oops"}}]}),
    ("/messages", {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [7]}]}),
    ("/messages", {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
                   "tools": [{"name": "f", "input_schema": "oops"}]}),
    ("/messages", b"\xff\xfe"),
    # definitions that are not JSON Schemas: the API validates them
    ("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"a": "oops"}}}}]}),
    ("/responses", {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f",
                                                             "parameters": {"required": "a"}}]}),
    ("/messages", {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
                   "tools": [{"name": "f", "input_schema": {"type": "object", "minProperties": -1}}]}),
]


@pytest.mark.parametrize(("path", "body"), MALFORMED, ids=[f"{p}-{i}" for i, (p, _) in enumerate(MALFORMED)])
def test_a_malformed_body_gets_a_json_400_in_its_formats_shape(strict, lenient, path, body):
    strict.logged.clear(), lenient.logged.clear()
    for served in (strict, lenient):
        r = post(served.url, path, body)
        assert r.status_code == 400 and r.headers["content-type"] == "application/json", r.text
        doc = r.json()
        if path == "/messages":
            assert doc["type"] == "error" and doc["error"]["type"] == "invalid_request_error"
        else:
            assert doc["error"]["type"] == "invalid_request_error" and doc["error"]["message"]
    # nothing failed inside: the console says only what the app was answered
    assert all(" request with 400: " in line for line in strict.logged + lenient.logged)


def test_an_odd_tool_choice_is_rejected_and_lenient_still_answers(strict, lenient):
    lenient.logged.clear()
    r = post(strict.url, "/chat/completions", {
        "model": "m", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"function": "x"}})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    r = post(lenient.url, "/chat/completions", {
        "model": "m", "messages": [{"role": "user", "content": QUESTION}],
        "tools": [{"type": "function", "function": {"name": "query_order", "parameters": RESPONSES_TOOLS[0]["parameters"]}}],
        "tool_choice": {"function": "x"}})
    assert r.status_code == 200 and not lenient.logged
    assert strict.logged[-1].startswith("agentdbg serve: answered a chat request with 400: ")


# -- serve --script and --replay over the other formats -------------------------------------

def test_script_answers_the_responses_and_messages_endpoints():
    served = Served(ScriptedModel([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_s1", "type": "function", "function": {"name": "query_order",
                                                            "arguments": '{"order_id": "ORD-2026-001"}'}}]},
        {"role": "assistant", "content": "已发货"}]))
    try:
        first = oai(served).responses.create(model="m", input=QUESTION, tools=RESPONSES_TOOLS)
        assert first.output[0].call_id == "call_s1"
        msg = claude(served).messages.create(model="m", max_tokens=10, messages=[
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_s1", "name": "query_order",
                                               "input": {"order_id": "ORD-2026-001"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_s1", "content": "{}"}]}])
        assert msg.content[0].text == "已发货" and msg.stop_reason == "end_turn"
    finally:
        served.stop()


def shop_tools(tmp_path):
    """A tools.yaml answering as ``fmt_stack.run_tool`` does (a recording an app can match)."""
    lines = ["version: 1", "tools:"]
    for t in RESPONSES_TOOLS:
        lines += [f"  - name: {t['name']}", f"    description: {t['description']}",
                  f"    parameters: {json.dumps(t['parameters'])}",
                  f"    handler: {{fixture: {json.dumps(RESULTS[t['name']], ensure_ascii=False)}}}"]
    path = tmp_path / "tools.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_replay_of_a_responses_recording_serves_many_clients_and_names_the_first_difference(tmp_path):
    rec = tmp_path / "rec.jsonl"
    live = Served()
    try:
        r = subprocess.run([sys.executable, "-m", "agentdbg", "run", QUESTION, "--api", "responses",
                            "--model", "gpt-4.1-mini", "--base-url", live.url, "--save", str(rec),
                            "--tools", str(shop_tools(tmp_path))], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    finally:
        live.stop()
    from agentdbg.server.serve import serve_provider

    provider, _ = serve_provider(False, rec, None)
    served = Served(provider)
    try:
        client = oai(served)
        text, _ = responses_loop(client)              # the recorded loop, replayed
        assert "杭州转运中心" in text
        text, _ = responses_loop(client)              # a second client: from the beginning
        assert "杭州转运中心" in text
        first = client.responses.create(model="m", input=QUESTION, tools=RESPONSES_TOOLS)
        call = first.output[0]
        wrong = [{"role": "user", "content": QUESTION}, call,
                 {"type": "function_call_output", "call_id": call.call_id, "output": '{"status": "lost"}'}]
        with pytest.raises(openai.BadRequestError) as caught:   # a 400: the client does not retry
            client.responses.create(model="m", input=wrong, tools=RESPONSES_TOOLS)
        assert caught.value.body["code"] == "replay_diverged"
        assert "first difference at input[2].content" in caught.value.body["message"]  # its own path
        right = wrong[:2] + [{"type": "function_call_output", "call_id": call.call_id,
                              "output": run_tool("query_order", {})}]
        again = client.responses.create(model="m", input=right, tools=RESPONSES_TOOLS)
        assert again.output[0].name == "query_logistics"   # it stayed where it was
    finally:
        served.stop()
