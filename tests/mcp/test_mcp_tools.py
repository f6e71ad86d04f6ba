"""MCP tool → OpenAI function definition + policy; include/exclude/prefix. No server is started."""

import pytest

from agentdbg.mcp.errors import McpServerError
from agentdbg.mcp.tools import mcp_tool_to_openai, select_tools, tool_policy

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def wire(name="lookup", **extra):
    return {"name": name, "description": "Look something up.", "inputSchema": SCHEMA, **extra}


@pytest.mark.parametrize("annotations, unhinted, policy", [
    ({"readOnlyHint": True}, "safe", (False, "never")),
    ({"readOnlyHint": True, "destructiveHint": True}, "trust", (False, "never")),  # read-only wins
    ({"destructiveHint": True}, "trust", (True, "always")),
    ({"readOnlyHint": False}, "trust", (True, "always")),        # the spec's default: destructive
    ({"readOnlyHint": False, "destructiveHint": False}, "safe", (True, "never")),  # additive
    ({}, "trust", (False, "never")),
    ({}, "safe", (True, "always")),
    ({"destructiveHint": False}, "safe", (True, "always")),      # still no read-only hint
    ({"title": "Lookup", "openWorldHint": True}, "trust", (False, "never")),
])
def test_policy_from_annotations(annotations, unhinted, policy):
    assert tool_policy(annotations, unhinted)[:2] == policy


def test_conversion_gives_the_openai_definition():
    tool = mcp_tool_to_openai(wire(annotations={"readOnlyHint": True}, outputSchema={"type": "object"}),
                              "geo_", server="maps")
    assert tool.openai_tool() == {"type": "function", "function": {
        "name": "geo_lookup", "description": "Look something up.", "parameters": SCHEMA}}
    assert (tool.server, tool.remote_name, tool.side_effects, tool.approval, tool.problems) == \
        ("maps", "lookup", False, "never", ())
    assert tool.output_schema == {"type": "object"}
    tool.parameters["properties"]["city"]["type"] = "integer"   # a copy: the server's list is untouched
    assert SCHEMA["properties"]["city"]["type"] == "string"


@pytest.mark.parametrize("name, prefix, problem", [
    ("read file", "", "its name does not match ^[a-zA-Z0-9_-]{1,64}$; the API rejects it"),
    ("fs.read", "", "its name does not match"),
    ("x" * 60, "server_", "(67 characters, 64 at most)"),
])
def test_names_the_api_rejects_are_reported_not_rewritten(name, prefix, problem):
    tool = mcp_tool_to_openai(wire(name), prefix, server="s")
    assert tool.name == prefix + name and tool.remote_name == name
    assert any(problem in p for p in tool.problems)


def test_a_schema_without_type_object_is_reported():
    tool = mcp_tool_to_openai(wire(inputSchema={"type": "string"}), server="s")
    assert tool.problems == ("its inputSchema does not have type: object",)


def test_a_missing_description_falls_back_to_the_title():
    tool = mcp_tool_to_openai({"name": "t", "inputSchema": SCHEMA, "annotations": {"title": "Get time"}})
    assert tool.description == "Get time"


def test_include_exclude_and_prefix_keep_the_servers_order():
    listed = [wire("a"), wire("b"), wire("c")]
    assert [t.name for t in select_tools(listed, server="s", include=("c", "a"), prefix="p_")] == ["p_a", "p_c"]
    assert [t.name for t in select_tools(listed, server="s", exclude=("b",))] == ["a", "c"]
    assert [t.name for t in select_tools(listed, server="s")] == ["a", "b", "c"]


def test_an_include_name_the_server_does_not_have_is_an_error():
    with pytest.raises(McpServerError) as err:
        select_tools([wire("a"), wire("b")], server="files", include=("a", "raed"))
    assert err.value.message == ("MCP server 'files': include names 'raed', which the server does not "
                                 "list (it has: a, b)")


def test_a_name_listed_twice_is_an_invalid_tool_list():
    with pytest.raises(McpServerError, match="MCP server 's': invalid tool list: the name 'a' is listed twice"):
        select_tools([wire("a"), wire("b"), wire("a")], server="s")
