"""A tool loop with litellm, as its function-calling docs write it: `litellm.completion` with
`tools` and `api_base` (OPENAI_BASE_URL), the response message appended as returned, each
result appended as a tool message carrying the function's `name`.

    --stream     stream=True, the response rebuilt with litellm.stream_chunk_builder
    --anthropic  model "anthropic/claude-sonnet-4-5", api_base ANTHROPIC_BASE_URL (Messages API)
    --trim       misuse: litellm.utils.trim_messages(messages, max_tokens=...) before each call,
                 which can cut an assistant tool call from its result
"""

import argparse
import json
import os
import sys

import litellm
from litellm.utils import trim_messages
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
available_functions = {"query_order": query_order, "query_logistics": query_logistics}


def main() -> int:
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--anthropic", "--trim"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    if args.anthropic:
        model, api_base = "anthropic/claude-sonnet-4-5", os.environ["ANTHROPIC_BASE_URL"]
    else:
        model, api_base = "openai/gpt-4o-mini", os.environ["OPENAI_BASE_URL"]

    messages = [{"role": "user", "content": QUESTION}]
    for _turn in range(6):
        sent = trim_messages(messages, max_tokens=40) if args.trim else messages
        if args.stream:
            chunks = list(litellm.completion(model=model, messages=sent, tools=tools, api_base=api_base,
                                             stream=True))
            response = litellm.stream_chunk_builder(chunks, messages=sent)
        else:
            response = litellm.completion(model=model, messages=sent, tools=tools, api_base=api_base)
        response_message = response.choices[0].message
        tool_calls = response_message.tool_calls
        if not tool_calls:
            print(response_message.content)
            return 0
        messages.append(response_message)
        for tool_call in tool_calls:
            function_name = tool_call.function.name
            function_response = available_functions[function_name](**json.loads(tool_call.function.arguments))
            messages.append({"tool_call_id": tool_call.id, "role": "tool", "name": function_name,
                             "content": json.dumps(function_response, ensure_ascii=False)})
    print("no answer after 6 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
