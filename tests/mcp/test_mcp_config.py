"""McpServerConfig: the tools.yaml entry, ``--mcp``, ``${VAR}`` secrets. No server is started."""

import sys
from pathlib import Path

import pytest
import yaml

from agentdbg.errors import ConfigError
from agentdbg.mcp.config import parse_mcp_option, parse_server_config, parse_server_configs

SECRET = "sk-live-0123456789abcdef"

PROPOSED_YAML = """
version: 1
tools: []
mcp_servers:
  - name: time
    command: python
    args: [-m, mcp_server_time, --local-timezone, Europe/Paris]
    include: [get_current_time]
    prefix: time_
    unhinted: safe
    init_timeout: 20
    timeout: 5
  - name: github
    url: https://mcp.example.com/mcp?api_key=${GH_KEY}
    headers: {Authorization: "Bearer ${GH_TOKEN}"}
    exclude: [delete_repository]
  - name: files
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", .]
    cwd: data
    env: {API_TOKEN: "${FILES_TOKEN}", LITERAL_SECRET: sk-written-in-the-file}
"""


def servers(text=PROPOSED_YAML, **kw):
    return parse_server_configs(yaml.safe_load(text)["mcp_servers"], **kw)


def test_the_proposed_yaml_shape_parses():
    time_, github, files = servers(base_dir=Path("/proj"))
    assert (time_.transport, time_.command, time_.args) == \
        ("stdio", "python", ("-m", "mcp_server_time", "--local-timezone", "Europe/Paris"))
    assert (time_.include, time_.prefix, time_.unhinted, time_.init_timeout, time_.timeout) == \
        (("get_current_time",), "time_", "safe", 20.0, 5.0)
    assert github.transport == "http" and github.exclude == ("delete_repository",)
    assert github.include is None and files.include is None   # all tools
    assert files.resolved_cwd() == "/proj/data"
    assert time_.resolved_command() == sys.executable           # as command tools do


@pytest.mark.parametrize("entry, expected", [
    ({"name": "x"}, "MCP server 'x': field 'command' must be a non-empty string"),
    ({"name": "x", "command": "srv", "args": "--port 1"}, "MCP server 'x': field 'args' must be a list"),
    ({"name": "x", "command": "srv", "env": {"A": None}}, "field 'env' value of 'A' must be a string"),
    ({"name": "x", "command": "srv", "colour": "red"}, "MCP server 'x': unknown field 'colour'"),
    ({"name": "x", "command": "srv", "timeout": 0}, "field 'timeout' must be a positive number"),
    ({"name": "x", "command": "srv", "init_timeout": True}, "field 'init_timeout' must be a positive"),
    ({"name": "x", "command": "srv", "include": ["a"], "exclude": ["b"]}, "cannot be combined"),
    ({"name": "x", "command": "srv", "include": []}, "field 'include' must be a non-empty list"),
    ({"name": "x", "command": "srv", "prefix": "a b"}, "field 'prefix' must be letters"),
    ({"name": "x", "command": "srv", "unhinted": "yolo"}, "field 'unhinted' must be 'trust' or 'safe'"),
    ({"name": "x", "url": "ftp://host/mcp"}, "field 'url' must be an http:// or https:// URL"),
    ({"name": "x", "url": "https://h/mcp", "command": "srv"}, "'command' does not apply to a http server"),
    ({"name": "x", "command": "srv", "transport": "sse"}, "field 'transport' must be 'stdio' or 'http'"),
    ({"name": "bad name", "command": "srv"}, "field 'name' must match"),
    ({"command": "srv"}, "mcp_servers[0]: field 'name' must match"),
])
def test_errors_name_the_server_and_the_field(entry, expected):
    with pytest.raises(ConfigError) as err:
        parse_server_config(entry)
    assert expected in err.value.message
    assert err.value.message.startswith(("MCP server 'x': ", "mcp_servers[0]: ", "MCP server 'bad name': "))
    assert "\n" not in err.value.message


def test_errors_can_be_located_by_the_caller():
    """The tools.yaml loader passes ``error`` to add file:line from its YAML nodes."""
    seen = []

    def located(keys, message):
        seen.append(keys)
        return ConfigError(f"tools.yaml:7:5: {message}")

    with pytest.raises(ConfigError, match=r"^tools.yaml:7:5: MCP server 'b': field 'timeout'"):
        parse_server_configs([{"name": "a", "command": "x"}, {"name": "b", "command": "x", "timeout": -1}],
                             error=located)
    assert seen == [(1, "timeout")]


def test_duplicate_server_names_are_an_error():
    with pytest.raises(ConfigError, match=r"MCP server 'a': duplicate name \(first defined as mcp_servers\[0\]\)"):
        parse_server_configs([{"name": "a", "command": "x"}, {"name": "a", "url": "http://h/mcp"}])


def test_vars_expand_at_connect_time_from_the_environment():
    _, github, files = servers()
    environ = {"GH_KEY": "k1", "GH_TOKEN": SECRET, "FILES_TOKEN": "t2"}
    assert github.resolved_headers(environ) == {"Authorization": f"Bearer {SECRET}"}
    assert github.resolved_url(environ) == "https://mcp.example.com/mcp?api_key=k1"
    assert files.resolved_env(environ) == {"API_TOKEN": "t2", "LITERAL_SECRET": "sk-written-in-the-file"}
    cfg = parse_server_config({"name": "s", "command": "srv", "args": ["--token", "${TOK}", "$HOME"]})
    assert cfg.resolved_args({"TOK": "abc"}) == ["--token", "abc", "$HOME"]   # only ${VAR} expands


def test_a_missing_variable_is_a_one_line_error_naming_server_and_variable():
    _, github, _ = servers()
    with pytest.raises(ConfigError) as err:
        github.resolved_headers({"GH_KEY": "k1"})
    assert err.value.message == ("MCP server 'github': environment variable 'GH_TOKEN' "
                                 "(used in headers.Authorization) is not set")


def test_secret_values_never_appear_in_repr_public_dict_or_errors():
    _, github, files = servers()
    environ = {"GH_KEY": "querykey", "GH_TOKEN": SECRET, "FILES_TOKEN": SECRET}
    github.resolved_headers(environ), files.resolved_env(environ)    # expanding leaves no trace
    shown = " ".join([repr(github), repr(files), str(github.public_dict()), str(files.public_dict()),
                      github.describe(), files.describe()])
    for secret in (SECRET, "sk-written-in-the-file", "querykey", "${GH_TOKEN}", "${FILES_TOKEN}"):
        assert secret not in shown
    assert files.public_dict() == {
        "name": "files", "transport": "stdio", "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "cwd": "data",
        "env_keys": ["API_TOKEN", "LITERAL_SECRET"]}
    assert github.public_dict() == {
        "name": "github", "transport": "http", "url": "https://mcp.example.com/mcp?api_key=***",
        "header_keys": ["Authorization"], "exclude": ["delete_repository"]}
    with pytest.raises(ConfigError) as err:   # a bad env value: the key is named, not the value
        parse_server_config({"name": "x", "command": "s", "env": {"TOKEN": [SECRET]}})
    assert SECRET not in err.value.message and "'TOKEN'" in err.value.message


def test_the_values_to_hide_are_known_before_the_start():
    _, github, files = servers()
    environ = {"GH_KEY": "querykey", "GH_TOKEN": SECRET, "FILES_TOKEN": "filetoken"}
    assert github.secret_values(environ) == {"querykey", SECRET, f"Bearer {SECRET}"}
    assert files.secret_values(environ) == {"filetoken", "sk-written-in-the-file"}
    cfg = parse_mcp_option("https://me:pa55word@h.example/mcp?api_key=v1abc&region=europe")
    assert cfg.secret_values({}) == {"pa55word", "v1abc"}
    plain = parse_server_config({"name": "p", "command": "s", "env": {"MODE": "debug", "DB_PASSWORD": "hunter22"}})
    assert plain.secret_values({}) == {"hunter22"}     # configuration is not masked, a password is


def test_urls_are_recorded_without_credentials():
    cfg = parse_mcp_option("https://user:pa55@mcp.example.com:8443/v1/mcp?token=abc&region=eu")
    assert cfg.public_dict()["url"] == "https://mcp.example.com:8443/v1/mcp?token=***&region=***"
    assert "pa55" not in repr(cfg) and "abc" not in repr(cfg)


@pytest.mark.parametrize("text, name, command, args", [
    ("python -m mcp_server_time --local-timezone UTC", "mcp_server_time", "python",
     ["-m", "mcp_server_time", "--local-timezone", "UTC"]),
    ("uvx mcp-server-time", "mcp-server-time", "uvx", ["mcp-server-time"]),
    ("npx -y @modelcontextprotocol/server-filesystem@1.2 /tmp", "server-filesystem", "npx",
     ["-y", "@modelcontextprotocol/server-filesystem@1.2", "/tmp"]),
    ("./bin/my-server --stdio", "my-server", "./bin/my-server", ["--stdio"]),
    ("python 'my server.py'", "my-server", "python", ["my server.py"]),
])
def test_mcp_option_with_a_command(text, name, command, args):
    cfg = parse_mcp_option(text)
    assert (cfg.name, cfg.transport, cfg.command, list(cfg.args)) == (name, "stdio", command, args)
    assert cfg.source == "--mcp"


def test_mcp_option_with_a_url_and_repeated_names():
    first = parse_mcp_option("http://127.0.0.1:8931/mcp")
    assert (first.name, first.transport, first.url) == ("127.0.0.1-8931", "http", "http://127.0.0.1:8931/mcp")
    again = parse_mcp_option("http://127.0.0.1:8931/other", taken=[first.name])
    third = parse_mcp_option("http://127.0.0.1:8931/x", taken=[first.name, again.name])
    assert (again.name, third.name) == ("127.0.0.1-8931-2", "127.0.0.1-8931-3")


@pytest.mark.parametrize("text, message", [
    ("", "--mcp: expected a URL or a command"),
    ("python 'unclosed", "--mcp: cannot split the command: No closing quotation"),
    ("https:///nohost", "must be an http:// or https:// URL"),
])
def test_mcp_option_errors(text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_mcp_option(text)
