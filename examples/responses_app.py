"""A small agent app on the OpenAI Responses API, written the way the function-calling guide
writes it.

The same shop as ``agent_app.py`` (an order, its shipment), with the official ``openai``
client, which reads OPENAI_BASE_URL and OPENAI_API_KEY. Through agentdbg, with no key and no
network:

    agentdbg proxy --offline -- python examples/responses_app.py "订单 ORD-2026-001 到哪里了?"
"""

from __future__ import annotations

import json
import os
import sys

from openai import OpenAI

ORDERS = {"ORD-2026-001": {"status": "shipped", "tracking_no": "SF123456"}}
SHIPMENTS = {"SF123456": {"status": "in_transit", "latest_event": "杭州转运中心已发出"}}
NOT_FOUND = {"ok": False, "error": {"type": "not_found"}}

tools = [
    {
        "type": "function",
        "name": "query_order",
        "description": "查询订单状态和物流单号。当用户询问订单时使用。",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "pattern": "^ORD-\\d{4}-\\d{3}$",
                                        "description": "订单号"}},
            "required": ["order_id"],
        },
    },
    {
        "type": "function",
        "name": "query_logistics",
        "description": "用物流单号查询运输进度。已知物流单号时使用。",
        "parameters": {
            "type": "object",
            "properties": {"tracking_no": {"type": "string", "pattern": "^[A-Z]{2}\\d{6}$",
                                           "description": "物流单号"}},
            "required": ["tracking_no"],
        },
    },
]


def call_function(name: str, args: dict) -> dict:
    if name == "query_order":
        return ORDERS.get(args.get("order_id"), NOT_FOUND)
    if name == "query_logistics":
        return SHIPMENTS.get(args.get("tracking_no"), NOT_FOUND)
    return {"ok": False, "error": {"type": "unknown_tool"}}


def main() -> int:
    question = sys.argv[1] if len(sys.argv) > 1 else "订单 ORD-2026-001 到哪里了?"
    client = OpenAI(max_retries=0)
    model = os.environ.get("AGENT_MODEL", "gpt-4.1")
    input_list: list = [{"role": "user", "content": question}]
    for _ in range(5):
        response = client.responses.create(model=model, tools=tools, input=input_list)
        input_list += response.output
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            print(response.output_text)
            return 0
        for item in calls:
            result = call_function(item.name, json.loads(item.arguments))
            input_list.append({"type": "function_call_output", "call_id": item.call_id,
                               "output": json.dumps(result, ensure_ascii=False)})
    print("no answer after 5 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
