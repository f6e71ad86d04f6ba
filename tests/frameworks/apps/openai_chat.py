"""A tool loop with the official `openai` client over Chat Completions, as the
function-calling guide writes it (OPENAI_BASE_URL / OPENAI_API_KEY from the environment).

    --stream            stream=True, tool calls assembled from the deltas by index (the guide's loop)
    --stream-helper     client.chat.completions.stream(...) and get_final_completion()
    --drop-results      misuse: append the assistant message, never the tool results
    --forget-assistant  misuse: append the tool results without the assistant message
"""

import argparse
import json
import sys

from openai import OpenAI
from shop import (
    ORDER_ID_DOC,
    ORDER_ID_PATTERN,
    QUERY_LOGISTICS_DOC,
    QUERY_ORDER_DOC,
    QUESTION,
    TRACKING_NO_DOC,
    TRACKING_NO_PATTERN,
    json_schema,
    query_logistics,
    query_order,
)

tools = [
    {"type": "function", "function": {"name": "query_order", "description": QUERY_ORDER_DOC,
                                      "parameters": json_schema("order_id", ORDER_ID_PATTERN, ORDER_ID_DOC)}},
    {"type": "function", "function": {"name": "query_logistics", "description": QUERY_LOGISTICS_DOC,
                                      "parameters": json_schema("tracking_no", TRACKING_NO_PATTERN,
                                                                TRACKING_NO_DOC)}},
]
functions = {"query_order": query_order, "query_logistics": query_logistics}


def ask_plain(client, messages):
    completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    return completion.choices[0].message


def ask_stream(client, messages):
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools,
                                            stream=True)
    content, final_tool_calls = "", {}
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for tool_call in delta.tool_calls or []:
            index = tool_call.index
            if index not in final_tool_calls:
                final_tool_calls[index] = tool_call
            else:
                final_tool_calls[index].function.arguments += tool_call.function.arguments
    message = {"role": "assistant", "content": content or None}
    if final_tool_calls:
        message["tool_calls"] = [
            {"id": tc.id, "type": "function",
             "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
            for _, tc in sorted(final_tool_calls.items())]
    return message


def ask_stream_helper(client, messages):
    with client.chat.completions.stream(model="gpt-4o-mini", messages=messages, tools=tools) as stream:
        for _event in stream:
            pass
        completion = stream.get_final_completion()
    return completion.choices[0].message


def field(message, name):
    return message.get(name) if isinstance(message, dict) else getattr(message, name)


def main() -> int:
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--stream-helper", "--drop-results", "--forget-assistant"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    ask = ask_stream if args.stream else ask_stream_helper if args.stream_helper else ask_plain

    client = OpenAI()
    messages = [{"role": "user", "content": QUESTION}]
    for _turn in range(6):
        message = ask(client, messages)
        if not args.forget_assistant:
            messages.append(message)
        tool_calls = field(message, "tool_calls") or []
        if not tool_calls:
            print(field(message, "content"))
            return 0
        for tool_call in tool_calls:
            fn = field(tool_call, "function")
            result = functions[field(fn, "name")](**json.loads(field(fn, "arguments")))
            if not args.drop_results:
                messages.append({"role": "tool", "tool_call_id": field(tool_call, "id"),
                                 "content": json.dumps(result, ensure_ascii=False)})
    print("no answer after 6 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
