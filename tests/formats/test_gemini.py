"""Gemini as the fourth wire format: the same forgotten result judged alike in all four formats,
Gemini's own rules in the API's words, and the official google-genai client's tool loop
(plain and streaming) through `agentdbg proxy` in front of `agentdbg serve --offline`."""

import json

import pytest
from fmt_stack import QUESTION, RESPONSES_TOOLS, Served, run_tool

from agentdbg.checker import check
from agentdbg.checker.formats import check_anthropic, check_document, check_responses
from agentdbg.checker.formats.gemini import check_gemini

NOTE = "还有别的吗？"


def forgotten_in_every_format():
    """One loop, four formats: two parallel calls, only the first answered, then a user turn."""
    args = [{"city": "北京"}, {"city": "上海"}]
    chat = [{"role": "user", "content": QUESTION},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{k}", "type": "function",
                 "function": {"name": "get_weather", "arguments": json.dumps(a)}}
                for k, a in enumerate(args)]},
            {"role": "tool", "tool_call_id": "call_0", "content": "24"},
            {"role": "user", "content": NOTE}]
    responses = [{"role": "user", "content": QUESTION},
                 *[{"type": "function_call", "call_id": f"call_{k}", "name": "get_weather",
                    "arguments": json.dumps(a)} for k, a in enumerate(args)],
                 {"type": "function_call_output", "call_id": "call_0", "output": "24"},
                 {"role": "user", "content": NOTE}]
    anthropic = [{"role": "user", "content": QUESTION},
                 {"role": "assistant", "content": [
                     {"type": "tool_use", "id": f"toolu_{k}", "name": "get_weather", "input": a}
                     for k, a in enumerate(args)]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0",
                                               "content": "24"}, {"type": "text", "text": NOTE}]}]
    gemini = [{"role": "user", "parts": [{"text": QUESTION}]},
              {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": a}}
                                          for a in args]},
              {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                               "response": {"result": "24"}}}]},
              {"role": "user", "parts": [{"text": NOTE}]}]
    return {"chat": chat, "responses": responses, "anthropic": anthropic, "gemini": gemini}


def test_one_forgotten_result_is_the_same_finding_in_all_four_formats():
    docs = forgotten_in_every_format()
    found = {fmt: check_document(doc) for fmt, doc in docs.items()}
    assert {fmt: [f.rule for f in fs] for fmt, fs in found.items()} == {
        fmt: ["missing-tool-response"] for fmt in docs}
    # each points at the forgotten call where its format keeps it, in its API's words
    assert [(f.index, f.path, f.tool_call_id) for f in found["chat"]] == [(1, None, "call_1")]
    assert [(f.index, f.path) for f in found["responses"]] == [(2, "input[2]")]
    assert [(f.index, f.path) for f in found["anthropic"]] == [(1, "messages[1].content[1]")]
    assert [(f.index, f.path) for f in found["gemini"]] == [(1, "contents[1].parts[1]")]
    assert found["gemini"][0].api_error == (
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.")
    assert found["responses"][0].api_error == "No tool output found for function call call_1."
    assert check(docs["chat"]) == found["chat"]
    assert check_responses(docs["responses"]) == found["responses"]
    assert check_anthropic(docs["anthropic"]) == found["anthropic"]


def turn(role, *parts):
    return {"role": role, "parts": list(parts)}


CALL = {"functionCall": {"name": "get_weather", "args": {"city": "北京"}}}
SIGNED = {**CALL, "thoughtSignature": "c2lnbmF0dXJl"}
RESPONSE = {"functionResponse": {"name": "get_weather", "response": {"result": "24"}}}
Q = turn("user", {"text": QUESTION})

DEFECTS = [
    ("a history that opens with a call turn", [turn("model", CALL), turn("user", RESPONSE)],
     None, [("call-turn-misplaced", 0, "contents[0]")],
     "Please ensure that function call turn comes immediately after a user turn or after a "
     "function response turn."),
    ("two model call turns in a row", [Q, turn("model", CALL), turn("model", CALL), turn("user", RESPONSE)],
     None, [("missing-tool-response", 1, "contents[1].parts[0]"), ("call-turn-misplaced", 2, "contents[2]")],
     "Please ensure that the number of function response parts is equal to the number of "
     "function call parts of the function call turn."),
    ("a response turn after a text turn", [Q, turn("model", {"text": "好"}), turn("user", RESPONSE)],
     None, [("orphan-tool-message", 2, "contents[2].parts[0]")],
     "Please ensure that function response turn comes immediately after a function call turn."),
    ("responses split over two user contents", [Q, turn("model", CALL, CALL), turn("user", RESPONSE),
                                                turn("user", RESPONSE)],
     None, [("missing-tool-response", 1, "contents[1].parts[1]"), ("orphan-tool-message", 3, "contents[3].parts[0]")],
     "Please ensure that the number of function response parts is equal to the number of "
     "function call parts of the function call turn."),
    ("a response without its name", [Q, turn("model", CALL),
                                     turn("user", {"functionResponse": {"name": "", "response": {}}})],
     None, [("tool-message-missing-id", 2, "contents[2].parts[0]")],
     "GenerateContentRequest.contents[2].parts[0].function_response.name: Name cannot be empty."),
    ("Gemini 3: a call sent back without its thought signature", [Q, turn("model", CALL), turn("user", RESPONSE)],
     "gemini-3-pro-preview", [("thought-signature-missing", 1, "contents[1].parts[0]")],
     "Function call is missing a thought_signature in functionCall parts. This is required for "
     "tools to work correctly, and missing thought_signature may lead to degraded model performance. "
     "Additional data, function call `default_api:get_weather` , position 1. Please refer to "
     "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."),
]


@pytest.mark.parametrize("name,contents,model,expected,api", DEFECTS, ids=[d[0] for d in DEFECTS])
def test_defect(name, contents, model, expected, api):
    found = check_gemini({"contents": contents}, model=model)
    assert [(f.rule, f.index, f.path) for f in found] == expected
    assert found[0].api_error == api


VALID = [
    ("thought parts replayed, text beside the call", [Q, turn("model", {"text": "想", "thought": True},
                                                            {"text": "查"}, SIGNED), turn("user", RESPONSE)]),
    ("parallel calls: only the first is signed", [Q, turn("model", SIGNED, CALL), turn("user", RESPONSE, RESPONSE)]),
    ("an earlier turn is not validated", [Q, turn("model", CALL), turn("user", RESPONSE),
                                          turn("model", {"text": "24 度"}), turn("user", {"text": NOTE})]),
    ("client-made ids that match no call", [Q, turn("model", SIGNED), turn("user", {"functionResponse": {
        "id": "x-1", "name": "get_weather", "response": {}}})]),
    ("multimodal function response parts", [Q, turn("model", SIGNED), turn("user", {"functionResponse": {
        "name": "get_weather", "response": {}, "parts": [{"inlineData": {"mimeType": "image/png",
                                                                         "data": "iVBO"}}]}})]),
    ("text inside the response turn", [Q, turn("model", SIGNED), turn("user", RESPONSE, {"text": NOTE})]),
    ("a request ending on the model's calls", [Q, turn("model", SIGNED)]),
]


@pytest.mark.parametrize("name,contents", VALID, ids=[v[0] for v in VALID])
def test_valid(name, contents):
    body = {"contents": contents, "systemInstruction": {"role": "user", "parts": [{"text": "s"}]}}
    assert check_gemini(body, model="gemini-3-pro-preview") == []


def test_check_reads_a_gemini_body_and_its_bare_contents(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "g.json"
    path.write_text(json.dumps(forgotten_in_every_format()["gemini"], ensure_ascii=False))
    r = subprocess.run([sys.executable, "-m", "agentdbg", "check", str(path), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert [(f["rule"], f["path"]) for f in json.loads(r.stdout)["findings"]] == [
        ("missing-tool-response", "contents[1].parts[1]")]


def _genai(base_url):
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="AIza-test-key-0123", http_options=types.HttpOptions(
        base_url=base_url, api_version="v1beta"))
    declarations = [types.FunctionDeclaration(name=t["name"], description=t["description"],
                                              parameters_json_schema=t["parameters"])
                    for t in RESPONSES_TOOLS]
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    return client, config, types


def genai_loop(base_url, *, stream: bool):
    """The function-calling docs' loop: send, run each call, send the model's content and one
    function response per call back, until the model answers."""
    client, config, types = _genai(base_url)
    contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    for _ in range(6):
        if stream:
            chunks = list(client.models.generate_content_stream(
                model="gemini-2.5-flash", contents=contents, config=config))
            parts = [p for c in chunks for p in c.candidates[0].content.parts]
            text = "".join(c.text or "" for c in chunks)
        else:
            response = client.models.generate_content(model="gemini-2.5-flash",
                                                      contents=contents, config=config)
            parts, text = response.candidates[0].content.parts, response.text or ""
        calls = [p.function_call for p in parts if p.function_call]
        if not calls:
            return text
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[types.Part.from_function_response(
            name=c.name, response={"result": run_tool(c.name, c.args)}) for c in calls]))
    raise AssertionError("no answer after 6 turns")


@pytest.mark.parametrize("stream", [False, True], ids=["generateContent", "streamGenerateContent"])
def test_google_genai_tool_loop_through_the_proxy_in_front_of_serve(tmp_path, stream):
    from hardening.proxy_helpers import Proxy

    served = Served()
    proxy = Proxy(served.url, tmp_path)
    try:
        text = genai_loop(proxy.url.removesuffix("/v1"), stream=stream)
    finally:
        printed = proxy.stop()
        served.stop()
    assert "杭州转运中心" in text
    assert printed.count("✓ no findings") == 3 and "error" not in printed
    assert "AIza-test-key-0123" not in printed + proxy.saved()    # the key is a secret
    from agentdbg.transcript import load_transcript

    path = next((tmp_path / "saved").glob("*.jsonl"))
    replay = __import__("subprocess").run(
        [__import__("sys").executable, "-m", "agentdbg", "replay", str(path), "--json"],
        capture_output=True, text=True)
    assert replay.returncode == 0, replay.stderr
    assert load_transcript(path).header.api == "gemini"


def test_serve_answers_a_forgotten_response_with_geminis_400():
    import httpx

    served = Served()
    try:
        body = {"contents": forgotten_in_every_format()["gemini"]}
        r = httpx.post(served.root + "/v1beta/models/gemini-2.5-flash:generateContent", json=body)
    finally:
        served.stop()
    assert r.status_code == 400
    assert r.json() == {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": (
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.")}}


def test_the_gemini_profile_wants_the_signature_back_on_chat_tool_calls():
    """Gemini's OpenAI-compatible endpoint: the signature rides on the tool call."""
    call = {"id": "call_0", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}
    signed = {**call, "extra_content": {"google": {"thought_signature": "c2ln"}}}
    history = [{"role": "user", "content": QUESTION},
               {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "call_0", "content": "24"}]
    found = check(history, "gemini")
    assert [(f.rule, f.index) for f in found] == [("thought-signature-missing", 1)]
    assert "function call `default_api:get_weather` , position 1." in found[0].api_error
    assert found[0].api_source is None                      # Gemini's own words
    history[1]["tool_calls"] = [signed]
    assert check(history, "gemini") == []
    history[1]["tool_calls"] = [call]
    assert check(history, "openai") == []                   # only under the profile


def test_the_rules_by_format_table_is_made_from_the_registry():
    from pathlib import Path

    from agentdbg.checker.findings import RULES
    from agentdbg.checker.formats.table import columns, rules_table

    for marks in columns().values():
        assert set(marks) <= set(RULES)            # every rule a format reports is registered
    page = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text("utf-8")
    assert rules_table() in page                   # the rules page holds the table as generated
    assert "| `call-turn-misplaced` | — | — | — | E |" in rules_table()
