"""tools.yaml loading: the sample loads; every bad file gets file:line:col + tool + field."""

import pytest

from agentdbg.errors import ConfigError
from agentdbg.toolspec import load_tools

GOOD_TOOL = """
version: 1
tools:
  - name: echo
    description: Echo the arguments back. Use when testing.
    parameters:
      type: object
      properties:
        text: {type: string, description: what to echo}
      required: [text]
    handler:
      python: tool_helpers:echo
"""


def test_sample_tools_load_with_policies(sample_tools):
    names = sample_tools.names()
    assert names[:3] == ["query_order", "query_logistics", "get_weather"]
    email = sample_tools.get("send_email")
    assert email.side_effects is True and email.approval == "always"
    inventory = sample_tools.get("check_inventory")
    assert inventory.handler_kind == "command" and inventory.timeout == 1
    assert sample_tools.parallel == 4
    # the request's tools array has the OpenAI shape
    tool = sample_tools.openai_tools()[0]
    assert tool["type"] == "function" and tool["function"]["name"] == "query_order"


def test_defaults_block_applies_and_tool_overrides(tools_from):
    ts = tools_from(GOOD_TOOL.replace("version: 1", "version: 1\ndefaults: {timeout: 2.5, max_result_chars: 300}"))
    assert ts.get("echo").timeout == 2.5 and ts.get("echo").max_result_chars == 300


def error_of(tools_from, text):
    with pytest.raises(ConfigError) as info:
        tools_from(text)
    return info.value.message


def test_invalid_yaml_names_line_and_column(tools_from):
    msg = error_of(tools_from, "version: 1\ntools:\n  - name: ok\n   bad: [unclosed\n")
    assert "tools.yaml:4:" in msg and "invalid YAML" in msg


def test_unsupported_version(tools_from):
    msg = error_of(tools_from, GOOD_TOOL.replace("version: 1", "version: 7"))
    assert "tools.yaml:1:10" in msg and "unsupported version 7" in msg


@pytest.mark.parametrize("old,new,line,needle", [
    ("name: echo", "name: bad.name", 3, "field 'name' must match"),
    ("description: Echo the arguments back. Use when testing.", "description: ''", 4, "field 'description'"),
    ("text: {type: string, description: what to echo}", "text: {type: strin}", 8, "not a valid JSON Schema at properties/text/type"),
    ("python: tool_helpers:echo", "python: not a dotted path", 11, "handler.python must look like"),
    ("python: tool_helpers:echo", "python: no_such_module_xyz:f", 11, "cannot import handler module 'no_such_module_xyz'"),
    ("python: tool_helpers:echo", "python: tool_helpers:missing_fn", 11, "module has no function 'missing_fn'"),
    ("    handler:", "    timeout: -1\n    handler:", 10, "field 'timeout' must be a positive number"),
    ("    handler:", "    approval: sometimes\n    handler:", 10, "field 'approval' must be 'never' or 'always'"),
    ("    handler:", "    colour: red\n    handler:", 10, "unknown field 'colour'"),
])
def test_bad_field_names_file_line_tool_and_field(tools_from, old, new, line, needle):
    text = GOOD_TOOL.replace(old, new)
    assert text != GOOD_TOOL
    msg = error_of(tools_from, text)
    assert f"tools.yaml:{line}:" in msg, msg
    assert needle in msg
    assert "tool '" in msg or "tools[0]" in msg


def test_parameters_must_be_an_object_schema(tools_from):
    msg = error_of(tools_from, GOOD_TOOL.replace("type: object", "type: array"))
    assert "tools.yaml:6:" in msg and "must have type: object" in msg


def test_handler_kinds_are_checked(tools_from):
    msg = error_of(tools_from, GOOD_TOOL.replace("python: tool_helpers:echo", "shell: rm -rf /"))
    assert "field 'handler' must be one of" in msg and "tools.yaml:11:" in msg
    msg = error_of(tools_from, GOOD_TOOL.replace("python: tool_helpers:echo", "command: []"))
    assert "handler.command must be a non-empty list" in msg


def test_duplicate_names_rejected(tools_from):
    body = GOOD_TOOL.split("tools:\n")[1]
    msg = error_of(tools_from, GOOD_TOOL + body)
    assert "duplicate name" in msg and "tools.yaml:12:11:" in msg


def test_missing_file_and_non_utf8(tmp_path):
    with pytest.raises(ConfigError, match="no such tools file"):
        load_tools(tmp_path / "nope.yaml")
    bad = tmp_path / "latin.yaml"
    bad.write_bytes(b"version: 1\n# caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_tools(bad)


def test_fixture_and_command_handlers_load_without_import(tools_from):
    ts = tools_from("""
        version: 1
        tools:
          - name: stub
            description: A stub. Use in tests.
            handler: {fixture: {ok: 1}}
          - name: cmd
            description: A command. Use in tests.
            handler: {command: [python, -c, "print(1)"]}
    """)
    assert [t.handler_kind for t in ts.tools] == ["fixture", "command"]
    assert ts.get("stub").parameters == {"type": "object", "properties": {}}
