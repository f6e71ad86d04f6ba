"""A small agent app on the Gemini API, written the way the google-genai docs write manual
function calling.

The same shop as ``agent_app.py`` (an order, its shipment), with the official ``google-genai``
client, which reads GEMINI_API_KEY (or GOOGLE_API_KEY) and GOOGLE_GEMINI_BASE_URL. Each tool
is a ``types.FunctionDeclaration`` in a ``types.Tool``; the app runs each call the model asks
for and sends the model's content back with one ``types.Part.from_function_response`` per
call. Through agentdbg, with no key and no network:

    agentdbg proxy --offline -- python examples/gemini_app.py "订单 ORD-2026-001 到哪里了?"
"""

from __future__ import annotations

import os
import sys

from google import genai
from google.genai import types

ORDERS = {"ORD-2026-001": {"status": "shipped", "tracking_no": "SF123456"}}
SHIPMENTS = {"SF123456": {"status": "in_transit", "latest_event": "杭州转运中心已发出"}}
NOT_FOUND = {"ok": False, "error": {"type": "not_found"}}

query_order = types.FunctionDeclaration(
    name="query_order",
    description="查询订单状态和物流单号。当用户询问订单时使用。",
    parameters_json_schema={
        "type": "object",
        "properties": {"order_id": {"type": "string", "pattern": "^ORD-\\d{4}-\\d{3}$",
                                    "description": "订单号"}},
        "required": ["order_id"],
    },
)
query_logistics = types.FunctionDeclaration(
    name="query_logistics",
    description="用物流单号查询运输进度。已知物流单号时使用。",
    parameters_json_schema={
        "type": "object",
        "properties": {"tracking_no": {"type": "string", "pattern": "^[A-Z]{2}\\d{6}$",
                                       "description": "物流单号"}},
        "required": ["tracking_no"],
    },
)
tools = types.Tool(function_declarations=[query_order, query_logistics])


def run_tool(name: str, args: dict) -> dict:
    if name == "query_order":
        return ORDERS.get(args.get("order_id"), NOT_FOUND)
    if name == "query_logistics":
        return SHIPMENTS.get(args.get("tracking_no"), NOT_FOUND)
    return {"ok": False, "error": {"type": "unknown_tool"}}


def main() -> int:
    question = sys.argv[1] if len(sys.argv) > 1 else "订单 ORD-2026-001 到哪里了?"
    client = genai.Client()
    model = os.environ.get("AGENT_MODEL", "gemini-2.5-flash")
    config = types.GenerateContentConfig(tools=[tools])
    contents = [types.Content(role="user", parts=[types.Part(text=question)])]
    for _ in range(5):
        response = client.models.generate_content(model=model, contents=contents, config=config)
        if not response.function_calls:
            print(response.text)
            return 0
        contents.append(response.candidates[0].content)   # the model's turn, as it came
        parts = [types.Part.from_function_response(name=call.name,
                                                   response=run_tool(call.name, call.args or {}))
                 for call in response.function_calls]
        contents.append(types.Content(role="user", parts=parts))
    print("no answer after 5 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
