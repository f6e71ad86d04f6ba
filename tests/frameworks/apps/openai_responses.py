"""A tool loop with the official `openai` client over the Responses API, as the
function-calling guide writes it (OPENAI_BASE_URL / OPENAI_API_KEY from the environment).

    --stream            stream=True: the output items are taken from the response.output_item.done events
    --drop-results      misuse: append the model's output items, never the function_call_output items
    --forget-assistant  misuse: append the function_call_output items without the function_call items
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
    {"type": "function", "name": "query_order", "description": QUERY_ORDER_DOC,
     "parameters": json_schema("order_id", ORDER_ID_PATTERN, ORDER_ID_DOC)},
    {"type": "function", "name": "query_logistics", "description": QUERY_LOGISTICS_DOC,
     "parameters": json_schema("tracking_no", TRACKING_NO_PATTERN, TRACKING_NO_DOC)},
]
functions = {"query_order": query_order, "query_logistics": query_logistics}


def ask_plain(client, input_list):
    response = client.responses.create(model="gpt-4.1-mini", tools=tools, input=input_list)
    return response.output, response.output_text


def ask_stream(client, input_list):
    stream = client.responses.create(model="gpt-4.1-mini", tools=tools, input=input_list, stream=True)
    output, text = [], ""
    for event in stream:
        if event.type == "response.output_item.done":
            output.append(event.item)
        elif event.type == "response.output_text.delta":
            text += event.delta
    return output, text


def main() -> int:
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--drop-results", "--forget-assistant"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    ask = ask_stream if args.stream else ask_plain

    client = OpenAI()
    input_list = [{"role": "user", "content": QUESTION}]
    for _turn in range(6):
        output, text = ask(client, input_list)
        if not args.forget_assistant:
            input_list += output
        calls = [item for item in output if item.type == "function_call"]
        if not calls:
            print(text)
            return 0
        for item in calls:
            result = functions[item.name](**json.loads(item.arguments))
            if not args.drop_results:
                input_list.append({"type": "function_call_output", "call_id": item.call_id,
                                   "output": json.dumps(result, ensure_ascii=False)})
    print("no answer after 6 turns", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
