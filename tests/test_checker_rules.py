"""Every rule id: a defect case (rule, severity, index, id) and a tricky-but-valid case."""

import json

import pytest

from agentdbg.checker import RULES, check

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}


def call(cid, name="get_weather", args='{"city": "北京"}'):
    c = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        c["id"] = cid
    return c


def asst(*calls, content=None, **extra):
    return {"role": "assistant", "content": content, "tool_calls": list(calls), **extra}


def tool(cid, content='{"temperature": 24}'):
    return {"role": "tool", "tool_call_id": cid, "content": content}


U = {"role": "user", "content": "北京和上海今天哪个更热?"}


def found(messages, profile="openai", **body):
    body = {"messages": messages, **body}
    return [(f.rule, f.severity, f.index, f.tool_call_id) for f in check(body, profile)]


# (rule, messages, extra body, profile, expected findings)
DEFECTS = [
    ("orphan-tool-message", [U, tool("call_1")], {}, "openai",
     [("orphan-tool-message", "error", 1, "call_1")]),
    ("missing-tool-response", [U, asst(call("a"), call("b")), tool("a"), {"role": "user", "content": "?"}],
     {}, "openai", [("missing-tool-response", "error", 1, "b")]),
    ("interleaved-message", [U, asst(call("a"), call("b")), tool("a"),
                             {"role": "system", "content": "reminder"}, tool("b")], {}, "openai",
     [("interleaved-message", "error", 3, "b")]),
    ("tool-call-id-mismatch", [U, asst(call("a")), tool("zzz")], {}, "openai",
     [("tool-call-id-mismatch", "error", 2, "zzz")]),
    ("tool-message-missing-id", [U, asst(call("a")), {"role": "tool", "content": "{}"}], {}, "openai",
     [("tool-message-missing-id", "error", 2, None)]),
    ("duplicate-tool-response", [U, asst(call("a")), tool("a"), tool("a")], {}, "openai",
     [("duplicate-tool-response", "error", 3, "a")]),
    # PROTOCOL precedence 6: the first result answers the duplicated id; a second one is a
    # duplicate response (OpenAI/Azure: "Duplicate value for 'tool_call_id'")
    ("duplicate-tool-call-id", [U, asst(call("a"), call("a", args='{"city": "上海"}')), tool("a"), tool("a")],
     {}, "openai", [("duplicate-tool-call-id", "error", 1, "a"), ("duplicate-tool-response", "error", 3, "a")]),
    ("duplicate-tool-call-id", [U, asst(call("a"), call("a", args='{"city": "上海"}')), tool("a")],
     {}, "openai", [("duplicate-tool-call-id", "error", 1, "a")]),
    # PROTOCOL.md rule 7: the first position whose result does not answer the call at it
    ("results-out-of-order", [U, asst(call("a"), call("b")), tool("b"), tool("a")], {}, "positional",
     [("results-out-of-order", "error", 2, "b")]),
    ("results-out-of-order", [U, asst(call("a"), call("b"), call("c")), tool("a"), tool("c"), tool("b")],
     {}, "positional", [("results-out-of-order", "error", 3, "c")]),
    # PROTOCOL.md rule 8: Moonshot rejects an empty reasoning_content
    ("reasoning-content-missing", [U, asst(call("a"), reasoning_content=""), tool("a")], {},
     "kimi-thinking", [("reasoning-content-missing", "error", 1, None)]),
    ("tool-call-missing-id", [U, asst(call(None)), tool("")], {}, "openai",
     [("tool-call-missing-id", "error", 1, None)]),
    ("tool-call-malformed", [U, asst({"id": "a", "function": {"name": "get_weather", "arguments": "{}"}}),
                             tool("a")], {}, "openai", [("tool-call-malformed", "error", 1, "a")]),
    ("empty-tool-calls", [U, asst(content="hi")], {}, "openai", [("empty-tool-calls", "error", 1, None)]),
    ("arguments-not-string", [U, asst(call("a", args={"city": "北京"})), tool("a")], {}, "openai",
     [("arguments-not-string", "error", 1, "a")]),
    # OpenAI accepts a history with broken arguments (a warning); vLLM and Qwen reject it
    ("arguments-invalid-json", [U, asst(call("a", args='{"city": "北京"')), tool("a")], {}, "openai",
     [("arguments-invalid-json", "warning", 1, "a")]),
    ("arguments-invalid-json", [U, asst(call("a", args='{"city": "北京"')), tool("a")], {}, "vllm",
     [("arguments-invalid-json", "error", 1, "a")]),
    ("arguments-not-object", [U, asst(call("a", args='"北京"')), tool("a")], {}, "openai",
     [("arguments-not-object", "warning", 1, "a")]),
    ("arguments-not-object", [U, asst(call("a", args='"北京"')), tool("a")], {}, "qwen",
     [("arguments-not-object", "error", 1, "a")]),
    # judged on the calls the app is about to execute (no result yet); answered calls are history
    ("unknown-tool", [U, asst(call("a", name="get_wether"))], {"tools": [WEATHER]}, "openai",
     [("missing-tool-response", "error", 1, "a"), ("unknown-tool", "warning", 1, "a")]),
    ("arguments-schema-mismatch", [U, asst(call("a", args='{"town": "北京"}'))],
     {"tools": [WEATHER]}, "openai", [("missing-tool-response", "error", 1, "a"),
                                      ("arguments-schema-mismatch", "warning", 1, "a")]),
    ("invalid-tool-name", [U, asst(call("a", name="weather.get")), tool("a")], {}, "openai",
     [("invalid-tool-name", "error", 1, "a")]),
    ("arguments-duplicate-key", [U, asst(call("a", args='{"city": "北京", "city": "上海"}')), tool("a")],
     {}, "openai", [("arguments-duplicate-key", "warning", 1, "a")]),
    ("null-content", [{"role": "user", "content": None}], {}, "openai",
     [("null-content", "error", 0, None)]),
    ("content-wrong-type", [U, asst(call("a")), tool("a", content={"temperature": 24})], {}, "openai",
     [("content-wrong-type", "error", 2, None)]),
    ("function-message-missing-name", [U, {"role": "assistant", "content": None,
                                           "function_call": {"name": "f", "arguments": "{}"}},
                                       {"role": "function", "content": "{}"}], {}, "openai",
     [("function-message-missing-name", "error", 2, None)]),
    ("empty-content", [U, {"role": "assistant", "content": ""}], {}, "anthropic-proxy",
     [("empty-content", "error", 1, None)]),
    ("consecutive-same-role", [U, {"role": "user", "content": "还有吗"}], {}, "deepseek-reasoner-legacy",
     [("consecutive-same-role", "error", 1, None)]),
    ("reasoning-content-missing", [U, asst(call("a")), tool("a")], {}, "deepseek-thinking",
     [("reasoning-content-missing", "error", 1, None)]),
    ("tool-call-id-format", [U, asst(call("functions.get_weather:0")), tool("functions.get_weather:0")],
     {}, "anthropic-proxy", [("tool-call-id-format", "error", 1, "functions.get_weather:0")]),
    ("empty-messages", [], {}, "openai", [("empty-messages", "error", None, None)]),
    ("too-many-tools", [U], {"tools": [{"type": "function", "function": {"name": f"t{i}"}}
                                       for i in range(129)]}, "openai",
     [("too-many-tools", "error", None, None)]),
    ("tool-params-without-tools", [U], {"tool_choice": "none"}, "openai",
     [("tool-params-without-tools", "error", None, None)]),
    ("bad-tool-choice", [U], {"tools": [WEATHER], "tool_choice": "get_weather"}, "openai",
     [("bad-tool-choice", "error", None, None)]),
    ("strict-schema-invalid", [U], {"tools": [{"type": "function", "function": {
        "name": "f", "strict": True, "parameters": {"type": "object", "properties": {
            "a": {"type": "string"}}, "required": ["a"]}}}]}, "openai",
     [("strict-schema-invalid", "error", None, None)]),
]

VALID = [
    ("orphan-tool-message", [U, asst(call("a")), tool("a"), {"role": "assistant", "content": "ok"}], {}, "openai"),
    ("missing-tool-response", [U, asst(call("a"), call("b"), call("c")), tool("c"), tool("a"), tool("b")],
     {}, "openai"),  # parallel results out of order: OpenAI binds by id
    ("interleaved-message", [U, asst(call("a")), tool("a"), {"role": "user", "content": "再查上海"},
                             asst(call("b", args='{"city": "上海"}')), tool("b")], {}, "openai"),
    ("tool-call-id-mismatch", [U, asst(call("call_8469015594668440441")),
                               tool("call_8469015594668440441")], {}, "openai"),  # GLM numeric ids
    ("tool-message-missing-id", [U, asst(call("a")), tool("a")], {}, "openai"),
    ("duplicate-tool-response", [U, asst(call("a")), tool("a"), asst(call("b")), tool("b")], {}, "openai"),
    ("duplicate-tool-call-id", [U, asst(call("a"), call("b")), tool("a"), tool("b")], {}, "openai"),
    ("results-out-of-order", [U, asst(call("a"), call("b")), tool("a"), tool("b")], {}, "positional"),
    ("tool-call-missing-id", [U, asst(call("call_x")), tool("call_x")], {}, "openai"),
    ("tool-call-malformed", [U, asst({**call("a"), "index": 0}), tool("a")], {}, "anthropic-proxy"),
    ("empty-tool-calls", [U, {"role": "assistant", "content": "no tools needed"}], {}, "openai"),
    ("arguments-not-string", [U, asst(call("a", args="{}")), tool("a")], {}, "openai"),
    ("arguments-invalid-json", [U, asst(call("a", args='{"city": "北京\\n上海", "note": "\\u4f60"}')),
                                tool("a")], {}, "openai"),
    ("arguments-not-object", [U, asst(call("a", args="  {}  ")), tool("a")], {}, "openai"),
    ("unknown-tool", [U, asst(call("a", name="not_declared")), tool("a")], {}, "openai"),  # no tools sent
    # after a handoff the tools changed: an answered call to a tool no longer offered is history
    ("unknown-tool", [U, asst(call("a", name="transfer_to_billing")), tool("a"), U], {"tools": [WEATHER]},
     "openai"),
    ("unknown-tool", [U, asst({"id": "c1", "type": "custom", "custom": {"name": "code_exec", "input": "1+1"}}),
                      tool("c1")], {"tools": [{"type": "custom", "custom": {"name": "code_exec"}}]}, "openai"),
    ("arguments-schema-mismatch", [U, asst(call("a", args='{"town": "北京"}')),
                                   tool("a", '{"ok": false, "error": {"type": "invalid_arguments"}}')],
     {"tools": [WEATHER]}, "openai"),  # the app refused it: correct, and history
    ("arguments-schema-mismatch", [U, asst(call("a", args='{"city": "北京"}')), tool("a")],
     {"tools": [WEATHER]}, "openai"),
    ("invalid-tool-name", [U, asst(call("a", name="get-weather_2")), tool("a")], {}, "openai"),
    ("arguments-duplicate-key", [U, asst(call("a", args='{"city": "北京", "q": {"city": "上海"}}')),
                                 tool("a")], {}, "openai"),   # the same key in two objects
    ("null-content", [U, asst(call("a")), tool("a")], {}, "openai"),  # content null with tool_calls
    ("content-wrong-type", [U, asst(call("a")), tool("a", content=[{"type": "text", "text": "24"}])],
     {}, "openai"),
    ("function-message-missing-name", [U, {"role": "function", "name": "f", "content": "{}"}], {}, "openai"),
    ("empty-content", [U, {"role": "assistant", "content": ""}], {}, "openai"),
    ("consecutive-same-role", [U, asst(call("a")), tool("a"), {"role": "assistant", "content": "好"},
                               {"role": "user", "content": "谢谢"}], {}, "deepseek-reasoner-legacy"),
    ("reasoning-content-missing", [U, asst(call("a"), reasoning_content="先查天气"), tool("a")], {},
     "kimi-thinking"),
    # PROTOCOL.md rule 8: DeepSeek V4 accepts an empty reasoning_content as present
    ("reasoning-content-missing", [U, asst(call("a"), reasoning_content=""), tool("a")], {},
     "deepseek-thinking"),
    ("tool-call-id-format", [U, asst(call("abc123XYZ")), tool("abc123XYZ")], {}, "mistral"),
    ("empty-messages", [{"role": "user", "content": "?"}], {}, "openai"),
    ("too-many-tools", [U], {"tools": [{"type": "function", "function": {"name": f"t{i}"}}
                                       for i in range(128)]}, "openai"),
    ("tool-params-without-tools", [U], {"tools": [WEATHER], "tool_choice": "none",
                                        "parallel_tool_calls": False}, "openai"),
    ("bad-tool-choice", [U], {"tools": [WEATHER], "tool_choice": {
        "type": "function", "function": {"name": "get_weather"}}}, "openai"),
    ("strict-schema-invalid", [U], {"tools": [{"type": "function", "function": {
        "name": "f", "strict": True, "parameters": {
            "type": "object", "additionalProperties": False, "required": ["a", "b"],
            "properties": {"a": {"type": ["string", "null"]}, "b": {
                "type": "object", "additionalProperties": False, "required": ["c"],
                "properties": {"c": {"type": "integer"}}}}}}}]}, "openai"),
]


def test_the_vocabulary_has_all_30_rules():
    assert len([r for r in RULES.values() if r.scope == "chat"]) == 30
    assert {r for r, *_ in DEFECTS} == {r.id for r in RULES.values() if r.scope == "chat"}
    assert {r for r, *_ in VALID} == {r.id for r in RULES.values() if r.scope == "chat"}


@pytest.mark.parametrize("rule,messages,body,profile,expected", DEFECTS,
                         ids=[f"{d[0]}-{d[3]}" for d in DEFECTS])
def test_defect(rule, messages, body, profile, expected):
    assert found(messages, profile, **body) == expected


@pytest.mark.parametrize("rule,messages,body,profile", VALID, ids=[v[0] for v in VALID])
def test_tricky_but_valid(rule, messages, body, profile):
    assert found(messages, profile, **body) == []


def test_every_finding_carries_a_fix_and_the_api_text():
    for rule, messages, body, profile, _ in DEFECTS:
        for f in check({"messages": messages, **body}, profile):
            assert f.message and len(f.message.splitlines()) == 1
            if f.severity == "error":
                assert f.api_error, rule


def test_api_texts_are_the_real_ones():
    f = check([U, tool("call_1")])[0]
    assert f.api_error.startswith("Invalid parameter: messages with role 'tool' must be a response "
                                  "to a preceeding message with 'tool_calls'.")
    assert "messages.[1].role" in f.api_error
    f = check([U, asst(call("a"), call("b")), tool("a"), U])[0]
    assert f.api_error.startswith("An assistant message with 'tool_calls' must be followed by tool "
                                  "messages responding to each 'tool_call_id'. The following "
                                  "tool_call_ids did not have response messages: b")
    f = check([U, asst(call("a")), tool("a"), tool("a")])[0]
    assert f.api_error == ("Invalid parameter: Duplicate value for 'tool_call_id' of 'a', in "
                           "messages[2] and messages[3].")
    f = check([U, asst(call("a", args='{"city": "x", "n": 1 "m": 2}')), tool("a")])[0]
    assert f.api_error == "Expecting ',' delimiter: line 1 column 22 (char 21)"  # as vLLM says


def test_chinese_arguments_and_multi_round_history_are_clean():
    msgs = [U, asst(call("a"), call("b", args='{"city": "上海"}')), tool("b"), tool("a"),
            {"role": "assistant", "content": "上海更热。"}, {"role": "user", "content": "杭州呢?"},
            asst(call("c", args='{"city": "杭州"}')), tool("c", '{"condition": "小雨"}'),
            {"role": "assistant", "content": "杭州小雨。"}]
    assert check({"messages": msgs, "tools": [WEATHER], "tool_choice": "auto"}) == []


def test_cross_turn_id_reuse_is_a_warning_except_behind_anthropic():
    msgs = [U, asst(call("a")), tool("a"), asst(call("a")), tool("a")]
    assert found(msgs) == [("duplicate-tool-call-id", "warning", 3, "a")]
    assert ("duplicate-tool-call-id", "error", 3, "a") in found(msgs, "anthropic-proxy")


def test_profiles_change_null_content_on_tool_turns():
    msgs = [U, asst(call("a")), tool("a")]
    assert found(msgs, "openai") == []
    for profile, text in [("ollama", "invalid message content type: <nil>"),
                          ("llamacpp", "Expected 'content' to be a string or an array")]:
        fs = check(msgs, profile)
        assert [(f.rule, f.index) for f in fs] == [("null-content", 1)] and fs[0].api_error == text


def test_kimi_thinking_rejects_required_and_uses_its_own_text():
    fs = check({"messages": [U, asst(call("a")), tool("a")], "tools": [WEATHER],
                "tool_choice": "required"}, "kimi-thinking")
    assert sorted(f.rule for f in fs) == ["bad-tool-choice", "reasoning-content-missing"]
    assert any("at index 1" in f.api_error for f in fs)


def test_mistral_id_format():
    assert found([U, asst(call("call_abc")), tool("call_abc")], "mistral") == [
        ("tool-call-id-format", "error", 1, "call_abc")]


@pytest.mark.parametrize("name", ["qwen", "glm", "vllm", "deepseek"])
def test_accepted_profiles_add_no_rules(name):
    msgs = [U, {"role": "user", "content": "x"}, asst(call("functions.a:0")), tool("functions.a:0")]
    assert found(msgs, name) == found(msgs, "openai") == []


def test_unknown_profile_is_a_clear_error():
    from agentdbg.errors import AgentdbgError
    with pytest.raises(AgentdbgError, match="unknown profile 'bedrock'; choose one of: openai"):
        check([U], "bedrock")     # ("gemini" is a profile now: Gemini behind Chat Completions)


def test_tool_params_without_tools_variants():
    assert found([U], tools=[]) == [("tool-params-without-tools", "error", None, None)]
    assert len(found([U], parallel_tool_calls=True, tool_choice="auto")) == 2
    assert found([U], function_call="auto") == [("tool-params-without-tools", "error", None, None)]


def test_bad_tool_choice_variants():
    assert found([U], tools=[WEATHER], tool_choice=None)[0][0] == "bad-tool-choice"
    fs = check({"messages": [U], "tools": [WEATHER],
                "tool_choice": {"type": "function", "function": {"name": "nope"}}})
    assert "`nope` in `tool_choice`" in fs[0].api_error
    assert found([U], tools=[WEATHER], tool_choice={"type": "allowed_tools", "allowed_tools": {}}) == []


def test_invalid_tool_name_in_tools_and_too_long():
    long = "x" * 81
    fs = check({"messages": [U], "tools": [{"type": "function", "function": {"name": long}},
                                           {"type": "function", "function": {"name": "查询天气"}}]})
    assert [(f.rule, f.index) for f in fs] == [("invalid-tool-name", None)] * 2
    assert "string too long" in fs[0].api_error and "length 81" in fs[0].api_error
    assert "does not match pattern" in fs[1].api_error


def test_strict_nested_object_names_its_context():
    fs = check({"messages": [U], "tools": [{"type": "function", "function": {
        "name": "process_user", "strict": True, "parameters": {
            "type": "object", "additionalProperties": False, "required": ["metadata"],
            "properties": {"metadata": {"type": "object", "additionalProperties": False,
                                        "properties": {"item_names": {"type": "array"}}}}}}}]})
    assert fs[0].api_error == ("Invalid schema for function 'process_user': In context=('properties', "
                               "'metadata'), 'required' is required to be supplied and to be an "
                               "array including every key in properties. Missing 'item_names'.")


def test_schema_validation_names_the_fields():
    fs = check({"messages": [U, asst(call("a", args=json.dumps({"city": 3})))],
                "tools": [WEATHER]}, in_progress=True)  # the call the app is about to execute
    assert "city: 3 is not of type 'string'" in fs[0].message


def test_in_progress_turn_is_not_missing_its_results():
    msgs = [U, asst(call("a"))]
    assert found(msgs) == [("missing-tool-response", "error", 1, "a")]
    assert check(msgs, in_progress=True) == []
