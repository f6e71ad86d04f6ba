"""The JSON-RPC log's bounds and routing, and what importing the MCP package costs."""

import subprocess
import sys

from agentdbg.mcp import exchange
from agentdbg.mcp.exchange import Exchange, MessageLog, current_exchange


def test_the_server_ring_and_a_calls_exchange_are_bounded():
    log = MessageLog(clock=lambda: 0.0)
    call = Exchange()
    token = current_exchange.set(call)
    try:
        log.record("send", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}})
        for i in range(exchange.CALL_MESSAGES + 5):
            log.record("recv", {"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": 7, "progress": i}})
    finally:
        current_exchange.reset(token)
    for i in range(exchange.SERVER_RING):
        log.record("recv", {"jsonrpc": "2.0", "id": 1000 + i, "result": {}})
    assert len(call.messages) == exchange.CALL_MESSAGES and call.dropped == 6
    assert len(log.recent()) == exchange.SERVER_RING
    assert log.recent()[0]["message"]["id"] == 1000     # the oldest fell out


def test_answers_go_to_the_call_that_asked_and_huge_messages_are_cut():
    log = MessageLog(clock=lambda: 0.0)
    first, second = Exchange(), Exchange()
    for call, rid in ((first, 1), (second, 2)):
        token = current_exchange.set(call)
        log.record("send", {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {}})
        current_exchange.reset(token)
    log.record("recv", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text",
                                                                            "text": "x" * 50_000}]}})
    log.record("recv", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}})
    assert [m["message"].get("error", {}).get("code") for m in first.messages] == [None, -32602]
    big = second.messages[1]["message"]
    assert big["chars"] > 50_000 and len(big["truncated"]) == exchange.MESSAGE_CHARS


def test_importing_the_mcp_package_does_not_import_the_sdk():
    code = ("import sys, agentdbg.mcp, agentdbg.mcp.config, agentdbg.mcp.client, agentdbg.mcp.tools; "
            "print(sorted(m for m in ('mcp', 'anyio', 'httpx2', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
