"""A third-party server from the package index, used unchanged: ``mcp-server-time``.

It needs no network (its timezone data comes from the ``tzdata`` package)."""

import re

import pytest

from agentdbg.mcp.client import McpClient
from agentdbg.mcp.config import parse_mcp_option


@pytest.fixture(scope="module")
def time_server():
    cfg = parse_mcp_option("python -m mcp_server_time --local-timezone Europe/Paris")
    with McpClient(cfg) as client:
        yield client


def test_identity_and_tools(time_server):
    assert time_server.name == "mcp_server_time"
    assert time_server.server_info["name"] == "mcp-time"
    tools = {t.name: t for t in time_server.tools()}
    assert set(tools) == {"get_current_time", "convert_time"}
    for tool in tools.values():   # annotated read-only: may run in parallel, no approval
        assert (tool.side_effects, tool.approval, tool.problems) == (False, "never", ())
    params = tools["convert_time"].openai_tool()["function"]["parameters"]
    assert params["required"] == ["source_timezone", "time", "target_timezone"]
    assert "Europe/Paris" in params["properties"]["source_timezone"]["description"]


def test_current_time_is_structured(time_server):
    result = time_server.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
    assert result.ok and result.value["timezone"] == "Asia/Tokyo"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00", result.value["datetime"])
    assert result.value["is_dst"] is False


def test_convert_time(time_server):
    result = time_server.call_tool("convert_time", {"source_timezone": "Europe/Paris", "time": "12:00",
                                                    "target_timezone": "Asia/Kolkata"})
    assert result.ok
    assert result.value["time_difference"] in ("+4.5h", "+3.5h")    # Paris in winter / summer
    assert result.value["target"]["datetime"][11:16] in ("16:30", "15:30")


def test_a_bad_timezone_is_a_tool_error_the_model_can_read(time_server):
    result = time_server.call_tool("get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert (result.ok, result.error_type) == (False, "tool_error")
    assert "Invalid timezone" in result.message and "Mars/Olympus_Mons" in result.message


def test_an_unknown_tool_is_a_json_rpc_error(time_server):
    result = time_server.call_tool("get_weather", {"city": "Paris"})
    assert (result.ok, result.error_type, result.code) == (False, "invalid_arguments", -32602)
    assert result.message == "Unknown tool: get_weather (JSON-RPC error -32602)"
