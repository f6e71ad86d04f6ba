"""``mcp_servers:`` in tools.yaml and ``--mcp``: parsing and one-line errors. No server starts."""

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.drivers.launch import load_run_tools
from agentdbg.errors import ConfigError
from agentdbg.toolspec import load_tools

runner = CliRunner()

LOCAL_TOOL = """\
tools:
  - name: echo
    description: Echo the text back. Use when testing.
    parameters: {type: object, properties: {text: {type: string, description: what}}, required: [text]}
    handler: {fixture: {ok: true}}
"""


def one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentdbg: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def test_a_file_with_only_servers_has_no_local_tools_and_knows_where_each_server_is(tmp_path):
    path = tmp_path / "tools.yaml"
    path.write_text("version: 1\nmcp_servers:\n  - name: time\n    command: python\n"
                    "    args: [-m, mcp_server_time]\n  - name: web\n    url: http://127.0.0.1:9/mcp\n")
    toolset = load_tools(path)
    assert toolset.tools == [] and toolset.mcp is None        # nothing is started by loading
    assert [(s.name, s.transport, s.source) for s in toolset.servers] == \
        [("time", "stdio", f"{path}:3"), ("web", "http", f"{path}:6")]
    assert toolset.servers[0].base_dir == tmp_path


def test_local_tools_and_servers_side_by_side(tmp_path):
    path = tmp_path / "tools.yaml"
    path.write_text("version: 1\n" + LOCAL_TOOL + "mcp_servers:\n  - {name: t, command: srv}\n")
    toolset = load_tools(path)
    assert toolset.names() == ["echo"] and [s.name for s in toolset.servers] == ["t"]


@pytest.mark.parametrize("text,needles", [
    ("version: 1\ntools: []\n", ["tools.yaml:2:8:", "'tools' must be a non-empty list"]),
    ("version: 1\nservers: []\n", ["tools.yaml:2:10:", "unknown top-level key 'servers'", "mcp_servers"]),
    ("version: 1\nmcp_servers:\n  - name: t\n    command: srv\n    timeout: -1\n",
     ["tools.yaml:5:14:", "MCP server 't': field 'timeout' must be a positive number"]),
    ("version: 1\nmcp_servers:\n  - name: t\n    url: http://127.0.0.1/mcp\n    command: srv\n",
     ["tools.yaml:5:14:", "field 'command' does not apply to a http server"]),
    ("version: 1\nmcp_servers:\n  - {name: t, command: a}\n  - {name: t, command: b}\n",
     ["tools.yaml:4:12:", "MCP server 't': duplicate name"]),
    ("version: 1\nmcp_servers: {name: t}\n", ["tools.yaml:2:14:", "'mcp_servers' must be a list"]),
])
def test_bad_server_entries_are_one_line_with_file_line_and_column(tmp_path, text, needles):
    (tmp_path / "tools.yaml").write_text(text)
    one_line_error(runner.invoke(app, ["run", "q"]), *needles)


def test_mcp_option_without_a_tools_file_brings_only_its_servers(tmp_path):
    toolset = load_run_tools(None, ["python -m mcp_server_time", "python -m mcp_server_time"])
    assert toolset.tools == []                                 # not the bundled sample tools
    assert [s.name for s in toolset.servers] == ["mcp_server_time", "mcp_server_time-2"]
    (tmp_path / "tools.yaml").write_text("version: 1\n" + LOCAL_TOOL)
    assert load_run_tools(None, ["srv"]).names() == ["echo"]    # ./tools.yaml still joins


def test_a_server_named_twice_is_refused_before_anything_starts(tmp_path):
    from agentdbg.mcp.config import parse_mcp_option
    from agentdbg.toolspec import start_servers

    path = tmp_path / "tools.yaml"
    path.write_text("version: 1\nmcp_servers:\n  - {name: srv, command: srv}\n")
    toolset = load_tools(path)
    toolset.servers.append(parse_mcp_option("srv --flag"))     # named 'srv' too
    with pytest.raises(ConfigError, match=r"MCP server 'srv' is named twice \(.*tools.yaml:3 and --mcp\)"):
        start_servers(toolset)


def test_a_missing_variable_names_the_server_and_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    path = tmp_path / "tools.yaml"
    path.write_text("version: 1\nmcp_servers:\n  - name: gh\n    command: no-such-program-x\n"
                    "    env: {TOKEN: '${NOT_SET_TOKEN}'}\n")
    one_line_error(runner.invoke(app, ["run", "--tools", str(path), "q"]),
                   "MCP server 'gh': environment variable 'NOT_SET_TOKEN' (used in env.TOKEN) is not set")


def test_a_program_that_does_not_exist(tmp_path):
    one_line_error(runner.invoke(app, ["run", "--mcp", "no-such-program-x --stdio", "q"]),
                   "MCP server 'no-such-program-x': cannot start 'no-such-program-x'")
