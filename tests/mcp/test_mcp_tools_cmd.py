"""``agentdbg tools`` on MCP servers: listed with their server and annotations, linted like local
tools (descriptions, strict mode, names over 64 characters, more than 128 tools)."""

import json

import pytest
from mcp_helpers import demo_yaml
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
LOCAL = """tools:
  - name: echo
    description: Echo the text back. Use when testing.
    parameters: {type: object, properties: {text: {type: string, description: what}}, required: [text]}
    handler: {fixture: {ok: true}}
"""


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """A local tool and a server listing 142 tools, one with a 70-character name."""
    path = tmp_path_factory.mktemp("mcp-tools") / "tools.yaml"
    return demo_yaml(path, {"env": {"AGENTDBG_MCP_TEST_EXTRA_TOOLS": "130", "AGENTDBG_MCP_TEST_LONG_NAME": "1"}},
                     tools=LOCAL)


def test_tools_lists_and_lints_mcp_tools(crowded):
    r = runner.invoke(app, ["tools", str(crowded), "--connect"], env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output
    rows = {line.split("│")[1].strip(): line for line in r.stdout.splitlines() if line.startswith("│")}
    assert "mcp demo" in rows["lookup_city"] and "read-only, idempotent → parallel" in rows["lookup_city"]
    assert "not read-only, destructive → approval, side effects" in rows["delete_note"]
    assert "no annotations → parallel" in rows["untagged"]
    assert "fixture" in rows["echo"]
    assert "MCP server 'demo': agentdbg-demo 1.2.3 over stdio" in r.stdout
    out = " ".join(r.stdout.split())
    assert f"✗ error too-many-tools: 143 tools: the API accepts at most 128 ({crowded})" in out
    assert (f"✗ error mcp-tool-invalid (tool lookup_{'x' * 63}): MCP server 'demo': its name does not "
            "match ^[a-zA-Z0-9_-]{1,64}$; the API rejects it (70 characters, 64 at most)") in out
    assert ("! warning description-without-when (tool city_weather): the description says what the "
            "tool is, not when to use it") in out
    assert ("! warning mcp-strict-schema-invalid: MCP server 'demo': strict mode would reject the "
            "inputSchema of 142 of its 142 tool(s)") in out
    assert ("! warning mcp-no-read-only-hint (tool untagged): MCP server 'demo': no readOnlyHint "
            "annotation") in out
    assert f"({crowded}:8)" in out                           # MCP findings point at the server's entry
    r = runner.invoke(app, ["tools", str(crowded), "--connect", "--json"])
    doc = json.loads(r.stdout)
    tools = {t["function"]["name"]: t for t in doc["tools"]}
    assert (tools["delete_note"]["server"], tools["delete_note"]["annotations"]["destructiveHint"],
            tools["delete_note"]["approval"]) == ("demo", True, "always")
    assert "server" not in tools["echo"]
    assert doc["mcp_servers"][0]["server_info"]["version"] == "1.2.3" and len(doc["mcp_servers"][0]["tools"]) == 142


def test_run_refuses_a_tool_the_api_would_reject_naming_server_and_tool(crowded):
    r = runner.invoke(app, ["run", "--tools", str(crowded), "q"])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"agentdbg: error: MCP server 'demo': tool 'lookup_{'x' * 63}': its name does not match "
        "^[a-zA-Z0-9_-]{1,64}$; the API rejects it (70 characters, 64 at most) (leave it out with 'exclude')")
