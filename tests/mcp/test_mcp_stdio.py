"""McpClient against the demo server over real stdio: discovery, every result kind,
timeouts with cancellation, concurrency, a crash, a hang, bad starts, secrets."""

import json
import sys
import threading

import pytest
from mcp_helpers import demo_config, gone, group_members, read_events, running, wait_until

from agentdbg.errors import ConfigError
from agentdbg.mcp.client import McpClient
from agentdbg.mcp.config import parse_server_config
from agentdbg.mcp.errors import McpServerError

SECRET = "tok-9f8e7d6c5b4a"


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    return tmp_path_factory.mktemp("mcp") / "events.jsonl"


@pytest.fixture(scope="module")
def demo(events):
    """One server for the read-only checks: 4 tools per page, 6 extra tools, a secret in env."""
    cfg = demo_config(events=events, prefix="demo_", exclude=["extra_05"], env={
        "AGENTDBG_MCP_TEST_PAGE_SIZE": "4", "AGENTDBG_MCP_TEST_EXTRA_TOOLS": "6",
        "AGENTDBG_MCP_TEST_SECRET": SECRET, "DEMO_TOKEN": "${DEMO_SECRET}"})
    client = McpClient(cfg, environ={"DEMO_SECRET": SECRET}).start()
    yield client
    client.close()


def test_discovery_walks_every_page_and_keeps_the_server_identity(demo, events):
    listed = demo.list_tools()
    assert len(listed) == 11 + 6
    assert [e["start"] for e in read_events(events) if e["event"] == "list_page"][:5] == [0, 4, 8, 12, 16]
    assert demo.server_info == {"name": "agentdbg-demo", "version": "1.2.3"}
    assert demo.identity()["server_info"]["version"] == "1.2.3"
    assert demo.protocol_version


def test_tools_apply_prefix_exclude_and_policy(demo):
    tools = {t.remote_name: t for t in demo.tools()}
    assert "extra_05" not in tools and "extra_04" in tools
    assert all(t.name == "demo_" + t.remote_name for t in tools.values())
    assert (tools["lookup_city"].side_effects, tools["lookup_city"].approval) == (False, "never")
    assert (tools["delete_note"].side_effects, tools["delete_note"].approval) == (True, "always")
    assert (tools["append_note"].side_effects, tools["append_note"].approval) == (True, "never")
    assert (tools["untagged"].side_effects, tools["untagged"].approval) == (False, "never")
    assert tools["lookup_city"].openai_tool()["function"]["parameters"]["properties"]["city"] == \
        {"description": "City name, e.g. Paris", "title": "City", "type": "string"}


def test_text_content(demo):
    result = demo.call_tool("lookup_city", {"city": "Paris"})
    assert (result.ok, result.value, result.structured) == (True, "Paris is in France", None)


def test_structured_content_is_preferred(demo):
    result = demo.call_tool("city_weather", {"city": "Lima"})
    assert result.ok and result.value == {"city": "Lima", "celsius": 21.5, "sky": "clear"}
    assert json.loads(result.text) == result.value    # the server's text twin is kept, not sent


def test_is_error_becomes_a_tool_error_with_the_servers_message(demo):
    result = demo.call_tool("fail", {"message": "disk is full"})
    assert (result.ok, result.error_type, result.retryable) == (False, "tool_error", False)
    assert result.message == "Error executing tool fail"     # MCPServer hides an unexpected exception
    assert '"isError": true' in result.detail


def test_json_rpc_error_keeps_its_data_out_of_the_message(demo):
    result = demo.call_tool("reject", {"reason": "city must be capitalised"})
    assert (result.ok, result.error_type, result.code) == (False, "invalid_arguments", -32602)
    assert result.message == "city must be capitalised (JSON-RPC error -32602)"
    assert "see the docs" in result.detail and "see the docs" not in result.message


def test_mixed_and_empty_content(demo):
    mixed = demo.call_tool("mixed")
    assert mixed.value == "first part\n[image image/png, about 9 bytes, not shown]\nsecond part"
    empty = demo.call_tool("empty")
    assert (empty.ok, empty.value) == (True, "")   # the executor turns "" into empty_result


def test_the_exchange_of_a_call_is_kept(demo):
    result = demo.call_tool("lookup_city", {"city": "Tokyo"})
    sent, received = result.exchange
    assert (sent["dir"], sent["message"]["method"], sent["message"]["params"]["arguments"]) == \
        ("send", "tools/call", {"city": "Tokyo"})
    assert received["dir"] == "recv" and received["message"]["id"] == sent["message"]["id"]
    assert received["message"]["result"]["content"][0]["text"] == "Tokyo is in Japan"
    assert demo.message_log()[-1] == received


def test_timeout_cancels_the_call_on_the_server(demo, events):
    result = demo.call_tool("slow", {"seconds": 30}, timeout=0.5)
    assert (result.ok, result.error_type, result.retryable) == (False, "timeout", True)
    assert result.message == "the tool 'slow' did not answer within 0.5s"
    request, cancel = result.exchange
    assert cancel["message"]["method"] == "notifications/cancelled"
    assert cancel["message"]["params"]["requestId"] == request["message"]["id"]
    seen = wait_until(lambda: [e["event"] for e in read_events(events)
                               if e["event"] in ("cancel_notification", "slow_cancelled")])
    assert sorted(seen) == ["cancel_notification", "slow_cancelled"]
    assert demo.call_tool("lookup_city", {"city": "Lima"}).ok   # the session goes on


def test_two_calls_at_once(demo, events):
    results = {}

    def call(n):
        results[n] = demo.call_tool("slow", {"seconds": n})

    threads = [threading.Thread(target=call, args=(n,)) for n in (0.5, 0.6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [results[n].value for n in (0.5, 0.6)] == ["waited 0.5s", "waited 0.6s"]
    order = [e["event"] for e in read_events(events) if e["event"].startswith("slow_")][-4:]
    assert order == ["slow_started", "slow_started", "slow_finished", "slow_finished"]


def test_secrets_reach_the_server_but_are_never_shown(demo):
    assert json.loads(demo.call_tool("auth_check").value)["env"] is True
    shown = json.dumps([demo.identity(), repr(demo.config), demo.message_log(), demo.stderr_text()])
    assert SECRET not in shown and "DEMO_TOKEN" in shown    # the key is recorded, not the value


def test_a_missing_variable_stops_the_start_before_anything_runs():
    cfg = demo_config("needs-key", env={"DEMO_TOKEN": "${NOT_SET_ANYWHERE}"})
    client = McpClient(cfg, environ={})
    with pytest.raises(ConfigError) as err:
        client.start()
    assert err.value.message == ("MCP server 'needs-key': environment variable 'NOT_SET_ANYWHERE' "
                                 "(used in env.DEMO_TOKEN) is not set")
    assert client.pid is None


def test_crash_mid_call_is_an_error_naming_the_server(tmp_path):
    with McpClient(demo_config("crashy", mode="crash")) as client:
        pid = client.pid
        result = client.call_tool("lookup_city", {"city": "Paris"})
        assert (result.ok, result.error_type) == (False, "internal_error")
        assert result.message == ("the tool 'lookup_city' failed: its MCP server 'crashy' has stopped "
                                  "(its process exited)")
        assert "crashing during lookup_city (on purpose)" in result.detail
        assert not client.call_tool("lookup_city", {"city": "Lima"}).ok
    assert not running(pid) and not group_members(pid)


def test_a_server_that_hangs_on_start_times_out_and_is_killed():
    client = McpClient(demo_config("stuck", mode="hang_before_start", init_timeout=1))
    with pytest.raises(McpServerError) as err:
        client.start()
    assert err.value.message.startswith("MCP server 'stuck': did not finish initialising within 1s (python ")
    assert "stuck before serving (on purpose)" in err.value.stderr    # for --debug
    assert err.value.debug_text().endswith("server stderr (last lines):\ndemo server: stuck before serving "
                                           "(on purpose)")
    assert client.pid is not None and wait_until(lambda: gone([client.pid]), 3)
    assert not group_members(client.pid)


def test_a_server_that_exits_on_start_shows_its_last_stderr_line():
    client = McpClient(demo_config("nodb", mode="exit_on_start"))
    with pytest.raises(McpServerError) as err:
        client.start()
    assert err.value.message == ("MCP server 'nodb': exited before it finished initialising; its stderr "
                                 "ends: demo server: cannot open its database (on purpose)")


def test_a_command_that_does_not_exist():
    cfg = parse_server_config({"name": "ghost", "command": "no-such-mcp-server-anywhere", "args": ["--x"]})
    with pytest.raises(McpServerError) as err:
        McpClient(cfg).start()
    assert err.value.message == ("MCP server 'ghost': cannot start 'no-such-mcp-server-anywhere': "
                                 "No such file or directory")


def test_an_invalid_tool_list_is_a_one_line_error():
    with McpClient(demo_config("badlist", mode="bad_list")) as client, \
            pytest.raises(McpServerError) as err:
        client.tools()
    assert err.value.message == "MCP server 'badlist': invalid tool list: tools[0].inputSchema: Field required"
    assert "ValidationError" in err.value.detail


def test_the_tool_list_changed_between_runs(demo):
    with McpClient(demo_config("demo", mode="v2")) as again:
        before, after = {t["name"]: t for t in demo.list_tools()}, {t["name"]: t for t in again.list_tools()}
        assert again.server_info == {"name": "agentdbg-demo", "version": "2.0.0"}
    assert set(before) - set(after) == {"delete_note"} | {f"extra_{i:02d}" for i in range(6)}
    assert set(after) - set(before) == {"archive_note"}


def test_a_servers_stderr_cannot_hide_or_reorder_text():
    """A bidi override or a zero-width character in a server's stderr is shown as an escape."""
    script = "import sys; sys.stderr.write('db at /srv/\\u202eexe.txt\\u200b gone\\n'); sys.exit(3)"
    cfg = parse_server_config({"name": "rtl", "command": sys.executable, "args": ["-c", script]})
    with pytest.raises(McpServerError) as err:
        McpClient(cfg).start()
    assert err.value.message.endswith("its stderr ends: db at /srv/\\u202eexe.txt\\u200b gone")
    assert "\u202e" not in err.value.debug_text() and "\u200b" not in err.value.debug_text()
