"""Every Anthropic Messages rule: a defect it must catch (with the real API's words) and tricky
valid requests it must accept, as the real API does."""

import pytest

from agentdbg.checker.findings import RULES
from agentdbg.checker.formats import ANTHROPIC_RULES, FORMAT_PROFILES, analyze_anthropic, check_anthropic
from agentdbg.wire import codec

Q = {"role": "user", "content": "weather in Paris and Rome?"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"name": "get_weather", "description": "Current weather", "input_schema": SCHEMA}]
THINKING = {"type": "enabled", "budget_tokens": 2048}


def use(cid, name="get_weather", **inp):
    return {"type": "tool_use", "id": cid, "name": name, "input": inp or {"city": "Paris"}}


def result(cid, content="18C", **extra):
    return {"type": "tool_result", "tool_use_id": cid, "content": content, **extra}


def A(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def U(*blocks):
    return {"role": "user", "content": list(blocks)}


def text(t):
    return {"type": "text", "text": t}


def body(*messages, **extra):
    return {"model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": list(messages), **extra}


MISSING = ("messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
           "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
           "message.")
UNEXPECTED = ("messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
              "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
              "message.")

DEFECTS = [
    ("a call with no result", body(Q, A(use("toolu_1"), use("toolu_2")), U(result("toolu_1"))),
     "openai", [("missing-tool-response", 1, "messages[1].content[1]")],
     MISSING.format(i=1, ids="toolu_2")),
    ("a trailing call", [Q, A(text("Checking."), use("toolu_1"))], "openai",
     [("missing-tool-response", 1, "messages[1].content[1]")], MISSING.format(i=1, ids="toolu_1")),
    ("results split off by a new user turn", [Q, A(use("toolu_1")), Q, A(text("ok")), U(result("toolu_1"))],
     "openai", [("interleaved-message", 2, "messages[2].content")], MISSING.format(i=1, ids="toolu_1")),
    ("text before the tool_result blocks", [Q, A(use("toolu_1"), use("toolu_2")),
                                            U(text("Here:"), result("toolu_1"), result("toolu_2"))],
     "openai", [("tool-result-not-first", 2, "messages[2].content[0]")],
     MISSING.format(i=1, ids="toolu_1, toolu_2")),
    ("a user message before the results (turns combine)",
     [Q, A(use("toolu_1")), {"role": "user", "content": "wait"}, U(result("toolu_1"))], "openai",
     [("tool-result-not-first", 2, "messages[2].content")], MISSING.format(i=1, ids="toolu_1")),
    ("a result with no call (trimmed history)", [U(result("toolu_1"), result("toolu_2")), Q], "openai",
     [("orphan-tool-message", 0, "messages[0].content[0]")], UNEXPECTED.format(i=0, j=0, id="toolu_1")),
    ("a result naming another id", [Q, A(use("toolu_1")), U(result("toolu_9"))], "openai",
     [("tool-call-id-mismatch", 2, "messages[2].content[0]")], UNEXPECTED.format(i=2, j=0, id="toolu_9")),
    ("two results for one call", [Q, A(use("toolu_1")), U(result("toolu_1"), result("toolu_1"))],
     "openai", [("duplicate-tool-response", 2, "messages[2].content[1]")], None),
    ("one id twice in a message", [Q, A(use("toolu_1"), use("toolu_1")), U(result("toolu_1"))],
     "openai", [("duplicate-tool-call-id", 1, "messages[1].content[1]")],
     "messages.1.content.1: `tool_use` ids must be unique"),
    ("an id reused in a later turn", [Q, A(use("toolu_1")), U(result("toolu_1")), A(use("toolu_1")),
                                      U(result("toolu_1"))], "openai",
     [("duplicate-tool-call-id", 3, "messages[3].content[0]")],
     "messages.3.content.0: `tool_use` ids must be unique"),
    ("tool_use without id", [Q, A({"type": "tool_use", "name": "get_weather", "input": {}})], "openai",
     [("tool-call-missing-id", 1, "messages[1].content[0]")],
     "messages.1.content.0.tool_use.id: Field required"),
    ("tool_result without tool_use_id", [Q, A(use("toolu_1")),
                                         U({"type": "tool_result", "content": "x"})], "openai",
     [("tool-message-missing-id", 2, "messages[2].content[0]")],
     "messages.2.content.0.tool_result.tool_use_id: Field required"),
    ("an id replayed from Kimi", [Q, A(use("functions.get_weather:0")),
                                  U(result("functions.get_weather:0"))], "openai",
     [("tool-use-id-format", 1, "messages[1].content[0]")],
     "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"),
    ("input as a JSON string", [Q, A({"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                      "input": "{\"city\": \"Paris\"}"}), U(result("toolu_1"))],
     "openai", [("tool-use-input-not-object", 1, "messages[1].content[0]")],
     "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
    ("empty tool name", [Q, A({"type": "tool_use", "id": "toolu_1", "name": "", "input": {}}),
                         U(result("toolu_1"))], "openai",
     [("tool-call-malformed", 1, "messages[1].content[0]")],
     "messages.1.content.0.tool_use.name: String should have at least 1 character"),
    # judged on a call not answered yet (an answered one is history: issue 22)
    ("unknown tool", body(Q, A(use("toolu_1", name="get_wether")), tools=TOOLS), "openai",
     [("unknown-tool", 1, "messages[1].content[0]"), ("missing-tool-response", 1, "messages[1].content[0]")],
     None),
    ("input fails the schema", body(Q, A(use("toolu_1", town=1)), tools=TOOLS), "openai",
     [("arguments-schema-mismatch", 1, "messages[1].content[0]"),
      ("missing-tool-response", 1, "messages[1].content[0]")], None),
    ("result content is an object", [Q, A(use("toolu_1")), U(result("toolu_1", {"temp": 18}))],
     "openai", [("content-wrong-type", 2, "messages[2].content[0]")],
     "messages.2.content.0.tool_result.content: Input should be a valid list"),
    ("an empty text block", [Q, A(text(""), use("toolu_1")), U(result("toolu_1"))], "openai",
     [("empty-text-block", 1, "messages[1].content[0]")], "messages: text content blocks must be non-empty"),
    ("an empty user message", [Q, A(text("hi")), {"role": "user", "content": ""}], "openai",
     [("empty-text-block", 2, "messages[2].content")],
     "messages.2: all messages must have non-empty content except for the optional final assistant message"),
    ("an empty assistant message mid-history", [Q, {"role": "assistant", "content": []}, Q], "openai",
     [("empty-text-block", 1, "messages[1].content")],
     "messages.1: all messages must have non-empty content except for the optional final assistant message"),
    ("Vertex: thinking stripped from the tool-use turn",
     body(Q, A(text("Checking."), use("toolu_1")), U(result("toolu_1")), thinking=THINKING),
     "anthropic-vertex", [("thinking-block-missing", 1, "messages[1].content[0]")],
     "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When "
     "`thinking` is enabled, a final `assistant` message must start with a thinking block "
     "(preceeding the lastmost set of `tool_use` and `tool_result` blocks)."),
    ("two tools with one name", body(Q, tools=[*TOOLS, *TOOLS]), "openai",
     [("tool-names-not-unique", None, "tools[1]")], "tools: Tool names must be unique."),
    ("tool name with a dot", body(Q, tools=[{"name": "fs.read", "input_schema": SCHEMA}]), "openai",
     [("invalid-tool-name", None, "tools[0]")],
     "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    ("an OpenAI tool", body(Q, tools=[{"type": "function", "function": {"name": "get_weather",
                                                                       "parameters": SCHEMA}}]),
     "openai", [("tool-definition-nested", None, "tools[0]")], "tools.0.custom.name: Field required"),
    ("no max_tokens", {"model": "claude-sonnet-4-6", "messages": [Q]}, "openai",
     [("max-tokens-missing", None, "max_tokens")], "max_tokens: Field required"),
    ("forced tool with thinking", body(Q, tools=TOOLS, thinking=THINKING,
                                       tool_choice={"type": "tool", "name": "get_weather"}),
     "openai", [("bad-tool-choice", None, "tool_choice")],
     "Thinking may not be enabled when tool_choice forces tool use."),
    ("OpenAI tool_choice string", body(Q, tools=TOOLS, tool_choice="required"), "openai",
     [("bad-tool-choice", None, "tool_choice")],
     "tool_choice: Input should be a valid dictionary or object to extract fields from"),
    ("server result with no server call", [Q, A({"type": "advisor_tool_result", "tool_use_id": "srvtoolu_9",
                                                 "content": []}, text("x")), Q], "openai",
     [("orphan-tool-message", 1, "messages[1].content[0]")],
     "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: "
     "srvtoolu_9. Each `advisor_tool_result` block must have a corresponding `server_tool_use` "
     "block before it."),
    ("server call without its result mid-history",
     [Q, A({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": {}}), Q],
     "openai", [("missing-tool-response", 1, "messages[1].content[0]")],
     "`web_fetch` tool use with id `srvtoolu_1` was found without a corresponding "
     "`web_fetch_tool_result` block"),
    ("no messages at all", {"model": "claude", "max_tokens": 100, "messages": []}, "openai",
     [("empty-messages", None, "messages")], "messages: at least one message is required"),
    ("Bedrock: results out of order", [Q, A(use("toolu_1"), use("toolu_2")),
                                       U(result("toolu_2"), result("toolu_1"))], "positional",
     [("results-out-of-order", 2, "messages[2].content[0]")],
     "Expected toolResult blocks at messages.2.content for the following Ids: toolu_1, toolu_2, "
     "but found: toolu_2, toolu_1"),
]


@pytest.mark.parametrize("name,doc,profile,expected,api", DEFECTS, ids=[d[0] for d in DEFECTS])
def test_defect(name, doc, profile, expected, api):
    found = check_anthropic(doc, profile)
    assert [(f.rule, f.index, f.path) for f in found] == expected
    assert found[0].api_error == api
    warnings = {"duplicate-tool-response", "unknown-tool", "arguments-schema-mismatch"}
    assert found[0].severity == ("warning" if found[0].rule in warnings else "error")


VALID = [
    ("consecutive user turns carry the results (the API combines them)",
     [Q, A(use("toolu_1"), use("toolu_2")), U(result("toolu_1")), U(result("toolu_2"))], "openai"),
    ("an assistant turn split in two messages", [Q, A(text("Let me check.")), A(use("toolu_1")),
                                                 U(result("toolu_1"))], "openai"),
    ("results first, text after", [Q, A(use("toolu_1")), U(result("toolu_1"), text("and Rome?"))],
     "openai"),
    ("a role system message inside messages", [Q, {"role": "system", "content": "be brief"},
                                               A(use("toolu_1")), U(result("toolu_1"))], "openai"),
    ("Vertex: redacted_thinking starts the tool-use turn",
     body(Q, A({"type": "redacted_thinking", "data": "EmwK"}, use("toolu_1")), U(result("toolu_1")),
          thinking=THINKING), "anthropic-vertex"),
    ("Vertex: empty thinking text with a signature (display omitted)",
     body(Q, A({"type": "thinking", "thinking": "", "signature": "EqQB"}, use("toolu_1")),
          U(result("toolu_1")), thinking=THINKING), "anthropic-vertex"),
    ("direct API: thinking stripped from history is accepted",
     body(Q, A(use("toolu_1")), U(result("toolu_1")), thinking=THINKING), "openai"),
    ("Vertex: the loop ended on text, no thinking needed",
     body(Q, A(use("toolu_1")), U(result("toolu_1")), A(text("18C.")), thinking=THINKING),
     "anthropic-vertex"),
    ("foreign ids that match the pattern", [Q, A(use("call_DdmO9pD3xa9X"), use("toolu_vrtx_01KK")),
                                            U(result("call_DdmO9pD3xa9X"), result("toolu_vrtx_01KK"))],
     "openai"),
    ("result content forms", [Q, A(use("toolu_1"), use("toolu_2"), use("toolu_3")), U(
        result("toolu_1", [{"type": "tool_reference", "tool_name": "get_weather"}]),
        {"type": "tool_result", "tool_use_id": "toolu_2"},
        result("toolu_3", [text("boom")], is_error=True))], "openai"),
    ("server tool with its result in the same message",
     [Q, A({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
           {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}, text("Found.")),
      Q], "openai"),
    ("server call unanswered next to a client call answered next",
     [Q, A({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": {}},
           use("toolu_1")), U(result("toolu_1"))], "openai"),
    ("paused turn: the last message ends on a server call",
     [Q, A({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}})], "openai"),
    ("MCP connector blocks", [Q, A({"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "x",
                                    "server_name": "s", "input": {}},
                                   {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": []},
                                   text("done")), Q], "openai"),
    ("prefill: an empty final assistant message", [Q, {"role": "assistant", "content": ""}], "openai"),
    ("tool_choice forms", body(Q, tools=[*TOOLS, {"type": "web_search_20250305", "name": "web_search"}],
                               tool_choice={"type": "tool", "name": "web_search"}), "openai"),
    ("auto tool_choice with thinking", body(Q, tools=TOOLS, thinking=THINKING,
                                            tool_choice={"type": "auto"}), "openai"),
    ("bare messages array without max_tokens", [Q], "openai"),
]


@pytest.mark.parametrize("name,doc,profile", VALID, ids=[v[0] for v in VALID])
def test_valid(name, doc, profile):
    assert check_anthropic(doc, profile) == []


def test_in_progress_trailing_calls_are_pending():
    doc = [Q, A(use("toolu_1"))]
    assert check_anthropic(doc, in_progress=True) == []
    assert [f.rule for f in check_anthropic(doc)] == ["missing-tool-response"]


def test_pairing_is_the_one_the_view_draws():
    doc = [Q, A(text("Checking."), use("toolu_1"), use("toolu_2")),
           U(result("toolu_2"), result("toolu_x")), U(result("toolu_2"))]
    found, p = analyze_anthropic(doc)
    assert p.labels == {"toolu_1": "A", "toolu_2": "B"}
    assert p.answer_of == {(1, 2): (2, 0)} and (1, 1) in p.calls   # answered calls only
    assert p.status == {(2, 0): "ok", (2, 1): "mismatch", (3, 0): "duplicate"}
    assert p.call_of == {(2, 0): (1, 2), (3, 0): (1, 2)}
    assert p.block_of[(2, 1)] == (1,) and codec.get("anthropic").path((2, 1)) == "messages[2].content[1]"
    # precedence: the mismatch explains the unanswered call; no missing-tool-response for it
    assert [f.rule for f in found] == ["tool-call-id-mismatch", "duplicate-tool-response"]


def test_registry_and_profile():
    for rule_id, info in ANTHROPIC_RULES.items():
        assert info.id == rule_id and info.severity in ("error", "warning") and info.summary
        assert RULES[rule_id].scope in ("anthropic", "formats")  # one vocabulary, no chat id reused
    assert "thinking-block-missing" in FORMAT_PROFILES["anthropic-vertex"].extra_rules
    assert ANTHROPIC_RULES["thinking-block-missing"].profiles == ("anthropic-vertex",)
