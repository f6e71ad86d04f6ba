"""`serve --script` with `when`: a script says which requests its turns answer, and a request
that is not the script's (a client's own side request: Gemini CLI's routing classifier, with
no tools) gets the offline model's answer while the turn waits. A script without `when`
answers every request in order, as before."""

import json

import httpx
import openai
import pytest
from fmt_stack import QUESTION, RESPONSES_TOOLS, Served
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.providers.scripted import ScriptedModel

TOOLS = [{"type": "function", "function": {"name": t["name"], "parameters": t["parameters"]}}
         for t in RESPONSES_TOOLS]
CALL = {"name": "query_order", "arguments": {"order_id": "ORD-2026-001"}, "id": "call_1"}


def served_script(tmp_path, doc: dict) -> Served:
    path = tmp_path / "turns.yaml"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return Served(ScriptedModel.from_file(path))


def chat(served, messages, tools=None, **extra) -> httpx.Response:
    body = {"model": "m", "messages": messages, **({"tools": tools} if tools else {}), **extra}
    return httpx.post(served.url + "/chat/completions", json=body, timeout=30)


def genai(served):
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="AIza-test", http_options=types.HttpOptions(
        base_url=served.root, api_version="v1beta"))
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(
        name=t["name"], description=t["description"], parameters_json_schema=t["parameters"])
        for t in RESPONSES_TOOLS])
    return client, types, tool


def test_side_requests_without_tools_get_the_offline_model_and_the_script_waits(tmp_path):
    served = served_script(tmp_path, {"when": {"tools": True}, "turns": [
        {"tool_calls": [CALL]}, {"content": "订单已发货。"}]})
    client, types, tool = genai(served)
    try:
        # a classifier's request first: no tools, a JSON answer of its schema wanted
        schema = {"type": "OBJECT", "properties": {"score": {"type": "INTEGER", "minimum": 1}},
                  "required": ["score"]}
        routed = client.models.generate_content(
            model="gemini-2.5-flash", contents=QUESTION, config=types.GenerateContentConfig(
                response_mime_type="application/json", response_json_schema=schema))
        assert json.loads(routed.text) == {"score": 1}
        # the loop's requests get the script's turns, in order
        config = types.GenerateContentConfig(tools=[tool])
        contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
        first = client.models.generate_content(model="gemini-2.5-flash", contents=contents,
                                               config=config)
        [call] = first.function_calls
        assert (call.name, call.args) == ("query_order", {"order_id": "ORD-2026-001"})
        contents += [first.candidates[0].content, types.Content(role="user", parts=[
            types.Part.from_function_response(name=call.name, response={"status": "shipped"})])]
        # a side request between the two: not the script's, and the script's turn 2 waits
        aside = client.models.generate_content(model="gemini-2.5-flash", contents="Gemini")
        assert aside.text and not aside.function_calls
        second = client.models.generate_content(model="gemini-2.5-flash", contents=contents,
                                                config=config)
        assert second.text == "订单已发货。"
        # played out: a side request still gets the offline model; one of the script's, the error
        assert client.models.generate_content(model="gemini-2.5-flash", contents="hi").text
        late = chat(served, [{"role": "user", "content": QUESTION}], TOOLS)
        assert late.status_code == 400
        assert "has 2 turn(s); the run asked for turn 3" in late.json()["error"]["message"]
    finally:
        served.stop()


def test_a_turn_s_own_when_names_a_tool_or_words(tmp_path):
    served = served_script(tmp_path, {"turns": [
        {"tool_calls": [CALL], "when": {"tool": "query_order", "text": "ord-2026"}},
        {"content": "done", "when": {"tools": False}}]})
    try:
        # a request offering other tools, and one without the words, are not turn 1's
        other = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
        r = chat(served, [{"role": "user", "content": QUESTION}], other)
        assert r.status_code == 200 and r.json()["choices"][0]["message"].get("tool_calls") is None
        r = chat(served, [{"role": "user", "content": "where is my parcel?"}], TOOLS)
        assert "call_1" not in json.dumps(r.json())
        r = chat(served, [{"role": "user", "content": QUESTION}], TOOLS)
        assert r.json()["choices"][0]["message"]["tool_calls"][0]["id"] == "call_1"
        # turn 2 answers only a request without tools
        r = chat(served, [{"role": "user", "content": QUESTION}], TOOLS)
        assert r.json()["choices"][0]["message"]["content"] != "done"
        r = chat(served, [{"role": "user", "content": "summarise"}])
        assert r.json()["choices"][0]["message"]["content"] == "done"
    finally:
        served.stop()


def test_a_script_without_when_answers_every_request_in_order(tmp_path):
    served = served_script(tmp_path, {"turns": [{"tool_calls": [CALL]}, {"content": "second"}]})
    try:
        client = openai.OpenAI(base_url=served.url, api_key="sk-test", max_retries=0)
        # a call scripted for a request that offers no tools is still played (as before)
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        assert first.choices[0].message.tool_calls[0].id == "call_1"
        second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}],
                                                tools=TOOLS)
        assert second.choices[0].message.content == "second"
        with pytest.raises(openai.BadRequestError, match="has 2 turn"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    finally:
        served.stop()


@pytest.mark.parametrize("when, said", [
    ("[1]", "turns[0].when: expected a mapping with one or more of tools, tool, text"),
    ("{tool: 3}", "turns[0].when.tool: expected a non-empty string"),
    ("{tools: yes please}", "turns[0].when.tools: expected true or false"),
    ("{model: x}", "turns[0].when: unknown key 'model' (known: tools, tool, text)"),
])
def test_a_bad_when_is_one_line_naming_the_turn(tmp_path, monkeypatch, when, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(f"turns:\n  - content: hi\n    when: {when}\n")
    result = CliRunner().invoke(app, ["serve", "--script", "s.yaml", "--port", "0"])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line == f"agentdbg: error: s.yaml: {said}"
    (tmp_path / "s.yaml").write_text("when: {tools: maybe}\nturns: [{content: hi}]\n")
    result = CliRunner().invoke(app, ["serve", "--script", "s.yaml", "--port", "0"])
    assert result.exit_code == 2 and "s.yaml: when.tools: expected true or false" in result.stderr


def test_agents_running_at_the_same_time_each_play_their_own_turns(tmp_path):
    """`agents`: a subagent's requests race with its parent's; each agent's script keeps its
    own place, whichever request comes first."""
    served = served_script(tmp_path, {
        "turns": [{"tool_calls": [CALL]}, {"content": "parent done"}],
        "agents": [{"when": {"text": "Task name: /root/greet"},
                    "turns": [{"content": "child step"}, {"content": "child done"}]}]})
    parent = [{"role": "user", "content": QUESTION}]
    child = [{"role": "user", "content": "Message Type: NEW_TASK\nTask name: /root/greet\n"}]
    try:
        def said(messages):
            r = chat(served, messages, TOOLS)
            message = r.json()["choices"][0]["message"]
            return message.get("content") or message["tool_calls"][0]["id"]
        assert [said(child), said(parent), said(child), said(parent)] == \
            ["child step", "call_1", "child done", "parent done"]
        late = chat(served, child, TOOLS)       # the child's script is played out: its own error
        assert late.status_code == 400 and "agents[0] has 2 turn(s); the run asked for turn 3" in \
            late.json()["error"]["message"]
    finally:
        served.stop()


def test_a_call_of_a_namespaced_function_names_its_namespace_in_the_responses_reply(tmp_path):
    """Codex offers its agent tools as a namespace and runs a call only when the reply names it
    (``"namespace": "collaboration"``); a plain name or ``collaboration.wait_agent`` in the script
    both say it, and a function offered at the top stays plain."""
    served = served_script(tmp_path, {"turns": [{"tool_calls": [
        {"name": "spawn_agent", "arguments": {"task_name": "greet", "message": "Say hello."}, "id": "c1"},
        {"name": "collaboration.wait_agent", "arguments": {}, "id": "c2"},
        {"name": "exec_command", "arguments": {"cmd": "ls"}, "id": "c3"}]}]})
    tools = [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
             {"type": "namespace", "name": "collaboration", "description": "agents", "tools": [
                 {"type": "function", "name": n, "parameters": {"type": "object"}}
                 for n in ("spawn_agent", "wait_agent")]}]
    try:
        r = httpx.post(served.url + "/responses", json={"model": "m", "input": QUESTION, "tools": tools},
                       timeout=30)
        calls = [(i["name"], i.get("namespace")) for i in r.json()["output"] if i["type"] == "function_call"]
        assert calls == [("spawn_agent", "collaboration"), ("wait_agent", "collaboration"),
                         ("exec_command", None)]
    finally:
        served.stop()


@pytest.mark.parametrize("agents, said", [
    ("[1]", "agents[0]: each agent's script needs 'when' and 'turns'"),
    ("{when: {tools: true}}", "agents: expected a list of scripts (each a 'when' and 'turns')"),
    ("[{turns: [{content: hi}]}]", "agents[0]: each agent's script needs 'when' and 'turns'"),
])
def test_a_bad_agents_script_is_one_line(tmp_path, monkeypatch, agents, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(f"turns: [{{content: hi}}]\nagents: {agents}\n")
    result = CliRunner().invoke(app, ["run", "--script", "s.yaml", "hello"])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line == f"agentdbg: error: s.yaml: {said}"
