"""A small agent app on the Anthropic Messages API, written the way the tool-use docs write it.

The same shop as ``agent_app.py`` (an order, its shipment), with the official ``anthropic``
client, which reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. Through agentdbg, with no key
and no network:

    agentdbg proxy --offline -- python examples/anthropic_app.py "订单 ORD-2026-001 到哪里了?"
"""

from __future__ import annotations

import json
import os
import sys

import anthropic

ORDERS = {"ORD-2026-001": {"status": "shipped", "tracking_no": "SF123456"}}
SHIPMENTS = {"SF123456": {"status": "in_transit", "latest_event": "杭州转运中心已发出"}}
NOT_FOUND = {"ok": False, "error": {"type": "not_found"}}

tools = [
    {
        "name": "query_order",
        "description": "查询订单状态和物流单号。当用户询问订单时使用。",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "pattern": "^ORD-\\d{4}-\\d{3}$",
                                        "description": "订单号"}},
            "required": ["order_id"],
        },
    },
    {
        "name": "query_logistics",
        "description": "用物流单号查询运输进度。已知物流单号时使用。",
        "input_schema": {
            "type": "object",
            "properties": {"tracking_no": {"type": "string", "pattern": "^[A-Z]{2}\\d{6}$",
                                           "description": "物流单号"}},
            "required": ["tracking_no"],
        },
    },
]


def run_tool(name: str, tool_input: dict) -> dict:
    if name == "query_order":
        return ORDERS.get(tool_input.get("order_id"), NOT_FOUND)
    if name == "query_logistics":
        return SHIPMENTS.get(tool_input.get("tracking_no"), NOT_FOUND)
    return {"ok": False, "error": {"type": "unknown_tool"}}


def main() -> int:
    question = sys.argv[1] if len(sys.argv) > 1 else "订单 ORD-2026-001 到哪里了?"
    client = anthropic.Anthropic(max_retries=0)
    model = os.environ.get("AGENT_MODEL", "claude-sonnet-4-5")
    messages = [{"role": "user", "content": question}]
    for _ in range(5):
        response = client.messages.create(model=model, max_tokens=1024, tools=tools,
                                          messages=messages)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            print("".join(block.text for block in response.content if block.type == "text"))
            return 0
        results = []
        for block in response.content:
            if block.type == "tool_use":
                result = run_tool(block.name, block.input)
                results.append({"type": "tool_result", "tool_use_id": block.id,
                                "content": json.dumps(result, ensure_ascii=False)})
        messages.append({"role": "user", "content": results})
    print("no answer after 5 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
