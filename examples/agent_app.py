"""A small agent app: the seed article's tool loop, written with the official `openai` client.

Each of the seed articles' loop bugs can be switched on, to watch `agentdbg proxy` catch it:

    --forget-assistant  append the tool results but not the assistant message that asked
    --drop-results      append the assistant message but never the tool results
    --mangle-ids        answer with a tool_call_id that is not the one the model sent
    --no-limit          no max-turns cap (with a loop bug, it never stops)
    --stream            stream the response and assemble the tool calls by index

Through agentdbg, with no key and no network (the offline model answers):

    agentdbg proxy --offline -- python examples/agent_app.py "订单 ORD-2026-001 到哪里了?"

or against any OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY; the client
insists on a key, which ``agentdbg serve`` accepts whatever it is):

    export OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=${OPENAI_API_KEY:-unused}
    python examples/agent_app.py "订单 ORD-2026-001 到哪里了?" --forget-assistant
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys

from openai import OpenAI

ORDERS = {"ORD-2026-001": {"status": "shipped", "tracking_no": "SF123456"}}
SHIPMENTS = {"SF123456": {"status": "in_transit", "latest_event": "杭州转运中心已发出",
                          "updated_at": "2026-09-18T09:20:00+08:00"}}
TOOLS = [
    {"type": "function", "function": {
        "name": "query_order", "description": "查询订单状态和物流单号。当用户询问订单时使用。",
        "parameters": {"type": "object", "required": ["order_id"], "properties": {
            "order_id": {"type": "string", "pattern": "^ORD-\\d{4}-\\d{3}$", "description": "订单号"}}}}},
    {"type": "function", "function": {
        "name": "query_logistics", "description": "用物流单号查询运输进度。已知物流单号时使用。",
        "parameters": {"type": "object", "required": ["tracking_no"], "properties": {
            "tracking_no": {"type": "string", "pattern": "^[A-Z]{2}\\d{6}$", "description": "物流单号"}}}}},
]
NOT_FOUND = {"ok": False, "error": {"type": "not_found"}}
HANDLERS = {  # a whitelist: never look a handler up from the model's text
    "query_order": lambda order_id: ORDERS.get(order_id, NOT_FOUND),
    "query_logistics": lambda tracking_no: SHIPMENTS.get(tracking_no, NOT_FOUND),
}


def ask(client, messages, args, dump):
    """One model request. Returns the assistant message as a dict."""
    kwargs = dict(model=os.environ.get("AGENT_MODEL", "demo"), messages=messages, tools=TOOLS)
    if not args.stream:
        raw = client.chat.completions.with_raw_response.create(**kwargs)
        dump(raw.http_response.content)
        return raw.parse().choices[0].message.model_dump(exclude_none=True)
    content, calls = [], {}
    with client.chat.completions.with_streaming_response.create(stream=True, **kwargs) as resp:
        data = b"".join(resp.iter_bytes())
    dump(data)
    for line in data.decode("utf-8").splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"]
        if delta.get("content"):
            content.append(delta["content"])
        for tc in delta.get("tool_calls") or []:  # id and name come once; join the rest by index
            call = calls.setdefault(tc["index"], {"id": None, "type": "function",
                                                  "function": {"name": "", "arguments": ""}})
            call["id"] = call["id"] or tc.get("id")
            fn = tc.get("function") or {}
            call["function"]["name"] += fn.get("name") or ""
            call["function"]["arguments"] += fn.get("arguments") or ""
    message = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question")
    for flag in ("--forget-assistant", "--drop-results", "--mangle-ids", "--no-limit", "--stream"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--dump", help="append each raw response body here (base64 JSON lines)")
    args = parser.parse_args()

    def dump(data: bytes) -> None:
        if args.dump:
            with open(args.dump, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"body": base64.b64encode(data).decode()}) + "\n")

    client = OpenAI(max_retries=0)
    messages = [{"role": "user", "content": args.question}]
    turn = 0
    while args.no_limit or turn < args.max_turns:
        turn += 1
        message = ask(client, messages, args, dump)
        if not args.forget_assistant:
            messages.append(message)          # the step the seeds say is most often forgotten
        calls = message.get("tool_calls") or []
        if not calls:
            print(message.get("content"))
            return 0
        for tc in calls:
            fn = tc["function"]
            handler = HANDLERS.get(fn["name"])
            result = handler(**json.loads(fn["arguments"])) if handler else {
                "ok": False, "error": {"type": "unknown_tool"}}
            if not args.drop_results:
                call_id = tc["id"] + "_x" if args.mangle_ids else tc["id"]
                messages.append({"role": "tool", "tool_call_id": call_id,
                                 "content": json.dumps(result, ensure_ascii=False)})
    print(f"stopped after {turn} turns without an answer", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
