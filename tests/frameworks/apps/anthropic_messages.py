"""A tool loop with the official `anthropic` client over the Messages API, as the tool-use
docs write it (ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY from the environment).

    --stream            client.messages.stream(...) and get_final_message()
    --drop-results      misuse: append the assistant turn, never the tool_result blocks
    --forget-assistant  misuse: send the tool_result blocks without the assistant turn
"""

import argparse
import json
import sys

import anthropic
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
    {"name": "query_order", "description": QUERY_ORDER_DOC,
     "input_schema": json_schema("order_id", ORDER_ID_PATTERN, ORDER_ID_DOC)},
    {"name": "query_logistics", "description": QUERY_LOGISTICS_DOC,
     "input_schema": json_schema("tracking_no", TRACKING_NO_PATTERN, TRACKING_NO_DOC)},
]
functions = {"query_order": query_order, "query_logistics": query_logistics}
MODEL = "claude-sonnet-4-5"


def ask_plain(client, messages):
    return client.messages.create(model=MODEL, max_tokens=1024, tools=tools, messages=messages)


def ask_stream(client, messages):
    with client.messages.stream(model=MODEL, max_tokens=1024, tools=tools, messages=messages) as stream:
        for _text in stream.text_stream:
            pass
        return stream.get_final_message()


def main() -> int:
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--drop-results", "--forget-assistant"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    ask = ask_stream if args.stream else ask_plain

    client = anthropic.Anthropic()
    messages = [{"role": "user", "content": QUESTION}]
    for _turn in range(6):
        response = ask(client, messages)
        if not args.forget_assistant:
            messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            print("".join(block.text for block in response.content if block.type == "text"))
            return 0
        tool_results = []
        for block in response.content:
            if block.type == "tool_use":
                result = functions[block.name](**block.input)
                tool_results.append({"type": "tool_result", "tool_use_id": block.id,
                                     "content": json.dumps(result, ensure_ascii=False)})
        if not args.drop_results:
            messages.append({"role": "user", "content": tool_results})
    print("no answer after 6 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
