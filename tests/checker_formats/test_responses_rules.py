"""Every Responses API rule: a defect it must catch (with the real API's words) and tricky valid
requests it must accept, as the real API does."""

import pytest

from agentdbg.checker.findings import RULES
from agentdbg.checker.formats import RESPONSES_RULES, analyze_responses, check_responses

U = {"role": "user", "content": "weather in Paris?"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "name": "get_weather", "parameters": SCHEMA}]


def fc(cid, fid=None, name="get_weather", args='{"city": "Paris"}'):
    item = {"type": "function_call", "call_id": cid, "name": name, "arguments": args}
    return {"id": fid, **item} if fid else item


def out(cid, output="18C", kind="function_call_output"):
    return {"type": kind, "call_id": cid, "output": output}


def rs(rid="rs_1", **extra):
    return {"id": rid, "type": "reasoning", "summary": [], **extra}


# (name, body, profile, [(rule, index, path)], api_error of the first finding)
DEFECTS = [
    ("call with no output", [U, fc("call_a")], "openai",
     [("missing-tool-response", 1, "input[1]")], "No tool output found for function call call_a."),
    ("custom call with no output", [U, {"type": "custom_tool_call", "call_id": "call_c",
                                       "name": "lint", "input": "x"}], "openai",
     [("missing-tool-response", 1, "input[1]")], "No tool output found for custom tool call call_c."),
    ("output with no call", [U, out("call_z")], "openai",
     [("orphan-tool-message", 1, "input[1]")],
     "No tool call found for function call output with call_id call_z."),
    ("a run of orphans, once", [U, out("call_y"), out("call_z")], "openai",
     [("orphan-tool-message", 1, "input[1]")],
     "No tool call found for function call output with call_id call_y."),
    ("continued, proxy saw the stored output: call not there",
     {"previous_response_id": "resp_1", "input": [out("call_z")], "_prior": [fc("call_a", "fc_1")]},
     "openai", [("orphan-tool-message", 0, "input[0]")],
     "No tool call found for function call output with call_id call_z."),
    ("function output for a custom call",
     [U, {"type": "custom_tool_call", "call_id": "call_c", "name": "lint", "input": "x"}, out("call_c")],
     "openai", [("tool-call-id-mismatch", 2, "input[2]")],
     "No tool call found for function call output with call_id call_c."),
    ("two outputs for one call", [U, fc("call_a"), out("call_a"), out("call_a")], "openai",
     [("duplicate-tool-response", 3, "input[3]")], None),
    ("two calls share a call_id", [U, fc("call_a", "fc_1"), fc("call_a", "fc_2"), out("call_a"),
                                   out("call_a")], "openai",
     [("duplicate-tool-call-id", 2, "input[2]")], None),
    ("empty call_id on call and output: once", [U, fc(""), out("")], "openai",
     [("tool-call-missing-id", 1, "input[1]")],
     "Invalid 'input[1].call_id': empty string. Expected a string with minimum length 1, but got "
     "an empty string instead."),
    ("output without call_id", [U, fc("call_a"), {"type": "function_call_output", "output": "x"}],
     "openai", [("tool-message-missing-id", 2, "input[2]")],
     "Missing required parameter: 'input[2].call_id'."),
    ("arguments as an object", [U, fc("call_a", args={"city": "Paris"}), out("call_a")], "openai",
     [("arguments-not-string", 1, "input[1]")],
     "Invalid type for 'input[1].arguments': expected a string, but got object instead."),
    ("truncated arguments", [U, fc("call_a", args='{"city": "Par'), out("call_a")], "openai",
     [("arguments-invalid-json", 1, "input[1]")],
     "Unterminated string starting at: line 1 column 10 (char 9)"),
    ("arguments not an object", [U, fc("call_a", args='"Paris"'), out("call_a")], "openai",
     [("arguments-not-object", 1, "input[1]")], "'str' object has no attribute 'items'"),
    ("empty name", [U, fc("call_a", name=""), out("call_a")], "openai",
     [("tool-call-malformed", 1, "input[1]")],
     "Invalid 'input[1].name': empty string. Expected a string with minimum length 1, but got an "
     "empty string instead."),
    # judged on a call not answered yet (an answered one is history: issue 22)
    ("unknown tool", {"tools": TOOLS, "input": [U, fc("call_a", name="get_wether")]}, "openai",
     [("unknown-tool", 1, "input[1]"), ("missing-tool-response", 1, "input[1]")], None),
    ("arguments fail the schema", {"tools": TOOLS, "input": [U, fc("call_a", args='{"town": 1}')]},
     "openai", [("arguments-schema-mismatch", 1, "input[1]"), ("missing-tool-response", 1, "input[1]")],
     None),
    ("output is an object", [U, fc("call_a"), out("call_a", {"temp": 18})], "openai",
     [("content-wrong-type", 2, "input[2]")],
     "Invalid type for 'input[2].output': expected one of a string or array of input content "
     "items, but got object instead."),
    ("output array with output_text", [U, fc("call_a"),
                                       out("call_a", [{"type": "output_text", "text": "18"}])],
     "openai", [("content-wrong-type", 2, "input[2]")],
     "Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', "
     "'input_file', and 'scoped_content'."),
    ("lost reasoning item (reasoning model)",
     {"reasoning": {"effort": "medium"}, "input": [U, fc("call_a", "fc_1"), out("call_a")]},
     "openai", [("reasoning-item-missing", 1, "input[1]")],
     "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_…'."),
    ("lost reasoning item (an earlier turn kept its reasoning)",
     [U, rs("rs_0"), fc("call_0", "fc_0"), out("call_0"), fc("call_a", "fc_1"), out("call_a")],
     "openai", [("reasoning-item-missing", 4, "input[4]")],
     "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_…'."),
    ("lost reasoning item, named from what the proxy saw",
     {"input": [U, fc("call_a", "fc_1"), out("call_a")], "_prior": [rs("rs_77"), fc("call_a", "fc_1")]},
     "openai", [("reasoning-item-missing", 1, "input[1]")],
     "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_77'."),
    ("reasoning whose call was dropped", [U, rs(), out("call_a")], "openai",
     [("reasoning-without-following-item", 1, "input[1]"), ("orphan-tool-message", 2, "input[2]")],
     "Item 'rs_1' of type 'reasoning' was provided without its required following item."),
    ("reasoning at the end", [U, rs()], "openai",
     [("reasoning-without-following-item", 1, "input[1]")],
     "Item 'rs_1' of type 'reasoning' was provided without its required following item."),
    ("an item sent twice", [U, fc("call_a", "fc_1"), out("call_a"), fc("call_a", "fc_1")], "openai",
     [("duplicate-item-id", 3, "input[3]")],
     "Duplicate item found with id fc_1. Remove duplicate items from your input and try again."),
    ("continuation resends a stored item",
     {"previous_response_id": "resp_1", "input": [fc("call_a", "fc_1"), out("call_a")],
      "_prior": [fc("call_a", "fc_1")]}, "openai",
     [("duplicate-item-id", 0, "input[0]")],
     "Duplicate item found with id fc_1. Remove duplicate items from your input and try again."),
    ("foreign item id", [U, fc("call_a", "item_c27"), out("call_a")], "openai",
     [("item-id-prefix", 1, "input[1]")],
     "Invalid 'input[1].id': 'item_c27'. Expected an ID that begins with 'fc'."),
    ("user message with a uuid id", [{"id": "0190f3a1-uuid", "type": "message", "role": "user",
                                      "content": "hi"}], "openai",
     [("item-id-prefix", 0, "input[0]")],
     "Invalid 'input[0].id': '0190f3a1-uuid'. Expected an ID that begins with 'msg'."),
    ("store false, reasoning by id only", {"store": False, "input": [U, rs(), fc("call_a"), out("call_a")]},
     "openai", [("item-not-persisted", 1, "input[1]")],
     "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. Try "
     "again with `store` set to true, or remove this item from your input."),
    ("reasoning without summary", [U, {"id": "rs_1", "type": "reasoning"}, fc("call_a"), out("call_a")],
     "openai", [("reasoning-item-malformed", 1, "input[1]")],
     "Missing required parameter: 'input[1].summary'."),
    ("chat-style tool", {"tools": [{"type": "function", "function": {"name": "get_weather"}}],
                         "input": [U]}, "openai",
     [("tool-definition-nested", None, "tools[0]")], "Missing required parameter: 'tools[0].name'."),
    ("tool name with a dot", {"tools": [{"type": "function", "name": "fs.read"}], "input": [U]},
     "openai", [("invalid-tool-name", None, "tools[0]")],
     "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the "
     "pattern '^[a-zA-Z0-9_-]+$'."),
    ("strict schema without additionalProperties",
     {"tools": [{**TOOLS[0], "strict": True}], "input": [U]}, "openai",
     [("strict-schema-invalid", None, "tools[0]")],
     "Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required "
     "to be supplied and to be false."),
    ("chat-style tool_choice", {"tools": TOOLS, "tool_choice": {"type": "function", "function":
                                                                 {"name": "get_weather"}},
                                "input": [U]}, "openai",
     [("bad-tool-choice", None, "tool_choice")], "Missing required parameter: 'tool_choice.name'."),
    ("tool_choice names a missing tool", {"tools": TOOLS, "tool_choice": {"type": "function",
                                                                          "name": "search"},
                                          "input": [U]}, "openai",
     [("bad-tool-choice", None, "tool_choice")], "Tool choice 'search' not found in 'tools' parameter."),
    ("tool_choice forces a hosted tool not sent", {"tools": TOOLS, "tool_choice": {"type": "image_generation"},
                                                   "input": [U]}, "openai",
     [("bad-tool-choice", None, "tool_choice")],
     "Tool choice 'image_generation' not found in 'tools' parameter."),
    ("DeepSeek: a message between a call and its output", [U, fc("call_a"), U, out("call_a")],
     "deepseek", [("interleaved-message", 2, "input[2]")], "No tool output found for tool call call_a"),
]


@pytest.mark.parametrize("name,body,profile,expected,api", DEFECTS, ids=[d[0] for d in DEFECTS])
def test_defect(name, body, profile, expected, api):
    prior = body.pop("_prior", None) if isinstance(body, dict) else None
    found = check_responses(body, profile, prior=prior)
    if isinstance(body, dict) and prior is not None:
        body["_prior"] = prior
    assert [(f.rule, f.index, f.path) for f in found] == expected
    assert found[0].api_error == api
    warnings = {"duplicate-tool-response", "duplicate-tool-call-id", "unknown-tool",
                "arguments-schema-mismatch", "arguments-invalid-json", "arguments-not-object"}
    assert found[0].severity == ("warning" if found[0].rule in warnings else "error")


def computer(cid):
    return [{"type": "computer_call", "id": "cu_1", "call_id": cid, "status": "completed",
             "action": {"type": "screenshot"}, "pending_safety_checks": []},
            {"type": "computer_call_output", "call_id": cid,
             "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA"}}]


VALID = [
    ("a user message between a call and its output (OpenAI pairs by call_id)",
     [U, fc("call_a"), {"role": "user", "content": "hurry"}, out("call_a")], "openai"),
    ("all calls, then all outputs, outputs in another order",
     [U, fc("call_a"), fc("call_b"), out("call_b"), out("call_a")], "openai"),
    ("previous_response_id with only the outputs",
     {"previous_response_id": "resp_1", "input": [out("call_a"), out("call_b")]}, "openai"),
    ("conversation continuation with only the outputs",
     {"conversation": {"id": "conv_1"}, "input": [out("call_a")]}, "openai"),
    ("an item_reference stands for the call", [U, {"type": "item_reference", "id": "fc_1"},
                                               out("call_a")], "openai"),
    ("compaction item first", [{"type": "compaction", "encrypted_content": "gAAA"}, U, fc("call_a"),
                               out("call_a")], "openai"),
    ("custom tool call pair", [U, {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c",
                                   "name": "lint", "input": "ruff ."},
                               out("call_c", "ok", "custom_tool_call_output")], "openai"),
    ("computer call pair with an object output", [U, *computer("call_cu")], "openai"),
    ("local shell and shell and apply_patch pairs",
     [U, {"type": "local_shell_call", "id": "lsh_1", "call_id": "c1", "status": "completed",
          "action": {"type": "exec", "command": ["ls"], "env": {}}},
      {"type": "local_shell_call_output", "id": "lsho_1", "call_id": "c1", "output": "a"},
      {"type": "shell_call", "call_id": "c2", "action": {"commands": ["ls"]}},
      {"type": "shell_call_output", "call_id": "c2", "output": []},
      {"type": "apply_patch_call", "call_id": "c3", "status": "completed",
       "operation": {"type": "delete_file", "path": "a"}},
      {"type": "apply_patch_call_output", "call_id": "c3", "status": "completed"}], "openai"),
    ("reasoning model: calls without server ids need no reasoning item",
     {"reasoning": {"effort": "high"}, "input": [U, fc("call_a"), out("call_a")]}, "openai"),
    ("non-reasoning model: fc ids and no reasoning item", [U, fc("call_a", "fc_1"), out("call_a")],
     "openai"),
    ("one reasoning item covers the run of calls after it",
     {"reasoning": {"effort": "low"}, "input": [U, rs(), fc("call_a", "fc_1"), fc("call_b", "fc_2"),
                                                out("call_a"), out("call_b")]}, "openai"),
    ("reasoning followed by an assistant message", [U, rs(), {"id": "msg_1", "type": "message",
                                                              "role": "assistant", "status": "completed",
                                                              "content": [{"type": "output_text",
                                                                           "text": "hi", "annotations": []}]}],
     "openai"),
    ("store false with encrypted reasoning", {"store": False, "input": [
        U, rs(encrypted_content="gAAAA"), fc("call_a", "fc_1"), out("call_a")]}, "openai"),
    ("reasoning with encrypted_content null, stored", [U, rs(encrypted_content=None),
                                                       fc("call_a", "fc_1"), out("call_a")], "openai"),
    ("foreign call ids", [U, fc("toolu_01A"), out("toolu_01A")], "openai"),
    ("hosted tool calls need no output", [U, {"type": "web_search_call", "id": "ws_1",
                                              "status": "completed", "action": {"type": "search"}},
                                          {"type": "mcp_approval_request", "id": "mcpr_1",
                                           "server_label": "x", "name": "y", "arguments": "{}"},
                                          {"type": "mcp_approval_response",
                                           "approval_request_id": "mcpr_1", "approve": True}], "openai"),
    ("tool choices the API accepts", {"tools": [*TOOLS, {"type": "web_search"}],
                                      "tool_choice": {"type": "web_search"}, "input": "hi"}, "openai"),
    ("allowed_tools choice", {"tools": TOOLS, "tool_choice": {"type": "allowed_tools", "mode": "auto",
                                                              "tools": [{"type": "function",
                                                                         "name": "get_weather"}]},
                              "input": [U]}, "openai"),
    ("a string input", {"model": "gpt-5", "input": "hello"}, "openai"),
    ("output as an array of input parts", [U, fc("call_a"), out("call_a", [
        {"type": "input_text", "text": "18"}, {"type": "input_image", "image_url": "https://x"}])],
     "openai"),
    ("DeepSeek: calls then outputs, adjacent", [U, fc("call_a"), fc("call_b"), out("call_a"),
                                                out("call_b")], "deepseek"),
]


@pytest.mark.parametrize("name,body,profile", VALID, ids=[v[0] for v in VALID])
def test_valid(name, body, profile):
    assert check_responses(body, profile) == []


def test_in_progress_trailing_calls_are_pending():
    body = [U, rs(), fc("call_a", "fc_1"), fc("call_b", "fc_2")]
    assert check_responses(body, in_progress=True) == []
    assert [f.rule for f in check_responses(body)] == ["missing-tool-response"] * 2


def test_continuation_says_plainly_what_it_cannot_know():
    found, pairing = analyze_responses({"previous_response_id": "resp_9", "input": [out("call_a")]})
    assert found == [] and pairing.status == {(0,): "external"}
    assert pairing.notes == ["input[0] answers call_a, which this request does not contain: it "
                             "continues the stored response resp_9 (previous_response_id); "
                             "whether that call exists cannot be known here"]
    found, pairing = analyze_responses({"previous_response_id": "resp_9", "input": [out("call_a")]},
                                       prior=[rs("rs_1"), fc("call_a", "fc_1")])
    assert found == [] and "its call is there" in pairing.notes[0]


def test_registry_entries_are_complete():
    for rule_id, info in RESPONSES_RULES.items():
        assert info.id == rule_id and info.severity in ("error", "warning") and info.summary
        assert RULES[rule_id].scope in ("responses", "formats"), "format-only ids must not shadow chat ids"


@pytest.mark.parametrize("profile", ["vllm", "qwen"])
@pytest.mark.parametrize("args,rule", [('{"city": "Par', "arguments-invalid-json"),
                                       ('"Paris"', "arguments-not-object")])
def test_a_profile_whose_server_rejects_broken_arguments_makes_them_errors(profile, args, rule):
    body = [U, fc("call_a", args=args), out("call_a")]
    assert [(f.rule, f.severity) for f in check_responses(body, "openai")] == [(rule, "warning")]
    assert [(f.rule, f.severity) for f in check_responses(body, profile)] == [(rule, "error")]
