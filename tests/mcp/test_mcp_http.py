"""McpClient against the demo server over real Streamable HTTP on 127.0.0.1."""

import json
import logging

import pytest
from mcp_helpers import HttpServer, read_events, wait_until

from agentdbg.mcp.client import McpClient
from agentdbg.mcp.config import parse_mcp_option, parse_server_config
from agentdbg.mcp.errors import McpServerError

SECRET = "bearer-7c1d5e9a"


@pytest.fixture
def http_server():
    """Start demo servers over Streamable HTTP (``http_server(MODE=…)``); killed afterwards."""
    servers: list[HttpServer] = []

    def start(**env) -> HttpServer:
        server = HttpServer(env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def http_config(url, name="web", **extra):
    return parse_server_config({"name": name, "url": url, **extra})


def test_discovery_results_and_a_header_secret(http_server, tmp_path):
    server = http_server(AGENTDBG_MCP_TEST_PAGE_SIZE="5", AGENTDBG_MCP_TEST_SECRET=SECRET)
    cfg = http_config(server.url + "?session=abc", headers={"Authorization": "Bearer ${WEB_TOKEN}"},
                      include=["lookup_city", "city_weather", "reject", "auth_check"])
    with McpClient(cfg, environ={"WEB_TOKEN": SECRET}) as client:
        assert client.pid is None
        assert client.server_info == {"name": "agentdbg-demo", "version": "1.2.3"}
        assert [t.name for t in client.tools()] == ["lookup_city", "city_weather", "reject", "auth_check"]
        assert len(client.list_tools()) == 11                      # three pages of five
        assert client.call_tool("lookup_city", {"city": "Lima"}).value == "Lima is in Peru"
        assert client.call_tool("city_weather", {"city": "Oslo"}).value["sky"] == "clear"
        assert json.loads(client.call_tool("auth_check").value)["header"] is True
        rejected = client.call_tool("reject", {"reason": "nope"})
        assert (rejected.error_type, rejected.code, rejected.message) == \
            ("invalid_arguments", -32602, "nope (JSON-RPC error -32602)")
        shown = json.dumps([client.identity(), repr(cfg), client.message_log()])
    assert SECRET not in shown and "abc" not in shown
    assert client.identity()["url"] == server.url + "?session=***"


def test_secrets_in_the_url_and_headers_stay_out_of_logs_and_errors(http_server, caplog):
    caplog.set_level(logging.DEBUG)
    server = http_server()
    cfg = http_config(server.url + "?api_key=${WEB_KEY}", headers={"X-Api-Key": "${WEB_KEY}"})
    with McpClient(cfg, environ={"WEB_KEY": SECRET}) as client:
        assert client.call_tool("lookup_city", {"city": "Paris"}).ok
        failed = client.call_tool("reject", {"reason": f"you sent {SECRET}"})   # a server quoting it
    assert "HTTP Request: POST" in caplog.text and "api_key=***" in caplog.text   # httpx2 logs each URL
    assert SECRET not in caplog.text
    assert SECRET not in failed.message + failed.detail and "you sent ***" in failed.message


def test_timeout_aborts_the_request_and_the_server_sees_it(http_server, tmp_path):
    events = tmp_path / "events.jsonl"
    server = http_server(AGENTDBG_MCP_TEST_EVENTS=str(events))
    with McpClient(http_config(server.url)) as client:
        result = client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert (result.error_type, result.retryable) == ("timeout", True)
        # on the 2026-07-28 HTTP wire, closing the request's stream is the cancellation
        assert wait_until(lambda: any(e["event"] == "slow_cancelled" for e in read_events(events)))
        assert client.call_tool("lookup_city", {"city": "Paris"}).ok


def test_a_server_that_dies_mid_call(http_server):
    server = http_server(AGENTDBG_MCP_TEST_MODE="crash")
    with McpClient(http_config(server.url, name="flaky")) as client:
        result = client.call_tool("lookup_city", {"city": "Paris"})
    assert (result.ok, result.error_type) == (False, "internal_error")
    assert result.message.startswith("the tool 'lookup_city' failed: its MCP server 'flaky' has stopped")


def test_a_server_that_never_answers_initialisation(http_server):
    server = http_server(AGENTDBG_MCP_TEST_MODE="hang")
    client = McpClient(http_config(server.url, name="mute", init_timeout=0.5))
    with pytest.raises(McpServerError) as err:
        client.start()
    assert err.value.message == f"MCP server 'mute': did not finish initialising within 0.5s ({server.url})"


def test_nothing_listening():
    import socket

    with socket.socket() as s:        # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = McpClient(parse_mcp_option(f"http://127.0.0.1:{port}/mcp"))
    with pytest.raises(McpServerError) as err:
        client.start()
    assert err.value.message.startswith(
        f"MCP server '127.0.0.1-{port}': cannot connect to http://127.0.0.1:{port}/mcp: ConnectError")
