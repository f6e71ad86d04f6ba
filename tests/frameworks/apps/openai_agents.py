"""An agent with the OpenAI Agents SDK, as its docs write one: `@function_tool` tools, an
`Agent`, `Runner.run`. The client reads OPENAI_BASE_URL / OPENAI_API_KEY from the environment.

    --chat-completions  the model is OpenAIChatCompletionsModel on an AsyncOpenAI client
                        (the docs' "custom model provider" example); default: the SDK's
                        default model, which speaks the Responses API
    --stream            Runner.run_streamed and stream_events()
    --trim              misuse: a call_model_input_filter that keeps the last 3 input items,
                        cutting a function call from its output
"""

import argparse
import asyncio
import json
from typing import Annotated

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.run import ModelInputData
from openai import AsyncOpenAI
from pydantic import Field
from shop import (
    ORDER_ID_DOC,
    ORDER_ID_PATTERN,
    QUERY_LOGISTICS_DOC,
    QUERY_ORDER_DOC,
    QUESTION,
    TRACKING_NO_DOC,
    TRACKING_NO_PATTERN,
)
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order

set_tracing_disabled(disabled=True)  # no trace export: this endpoint is not OpenAI's


@function_tool(description_override=QUERY_ORDER_DOC)
def query_order(order_id: Annotated[str, Field(pattern=ORDER_ID_PATTERN, description=ORDER_ID_DOC)]) -> str:
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


@function_tool(description_override=QUERY_LOGISTICS_DOC)
def query_logistics(
        tracking_no: Annotated[str, Field(pattern=TRACKING_NO_PATTERN, description=TRACKING_NO_DOC)]) -> str:
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


def keep_last_three(data):
    return ModelInputData(input=data.model_data.input[-3:], instructions=data.model_data.instructions)


async def main(args) -> None:
    if args.chat_completions:
        model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())
    else:
        model = "gpt-4.1-mini"
    agent = Agent(name="Order assistant", instructions="你是订单客服，用工具查询订单和物流。",
                  model=model, tools=[query_order, query_logistics])
    config = RunConfig(call_model_input_filter=keep_last_three if args.trim else None)
    if args.stream:
        result = Runner.run_streamed(agent, QUESTION, run_config=config)
        async for _event in result.stream_events():
            pass
    else:
        result = await Runner.run(agent, QUESTION, run_config=config)
    print(result.final_output)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--chat-completions", "--stream", "--trim"):
        parser.add_argument(flag, action="store_true")
    asyncio.run(main(parser.parse_args()))
