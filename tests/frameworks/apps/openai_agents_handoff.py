"""A handoff with the OpenAI Agents SDK, as its docs write one: a triage agent whose
`handoffs=[...]` names the specialist, `Runner.run`. The client reads OPENAI_BASE_URL /
OPENAI_API_KEY from the environment.

    --chat-completions  both agents on OpenAIChatCompletionsModel (default: the Responses API)
    --stream            Runner.run_streamed and stream_events()
    --trim              misuse: a call_model_input_filter that keeps the last 3 input items,
                        cutting the handoff's call from its output once the order agent works
"""

import argparse
import asyncio
import json

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.run import ModelInputData
from openai import AsyncOpenAI
from shop import QUERY_LOGISTICS_DOC, QUERY_ORDER_DOC, QUESTION
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order

set_tracing_disabled(disabled=True)  # no trace export: this endpoint is not OpenAI's


@function_tool(description_override=QUERY_ORDER_DOC)
def query_order(order_id: str) -> str:
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


@function_tool(description_override=QUERY_LOGISTICS_DOC)
def query_logistics(tracking_no: str) -> str:
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


def keep_last_three(data):
    return ModelInputData(input=data.model_data.input[-3:], instructions=data.model_data.instructions)


async def main(args) -> None:
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI()) \
        if args.chat_completions else "gpt-4.1-mini"
    order_agent = Agent(name="Order agent", handoff_description="Answers questions about orders and parcels.",
                        instructions="You are the order agent. Look orders and parcels up with your tools.",
                        model=model, tools=[query_order, query_logistics])
    triage_agent = Agent(name="Triage agent", instructions="You are the triage agent. Hand order "
                         "questions to the order agent.", model=model, handoffs=[order_agent])
    config = RunConfig(call_model_input_filter=keep_last_three if args.trim else None)
    if args.stream:
        result = Runner.run_streamed(triage_agent, QUESTION, run_config=config)
        async for _event in result.stream_events():
            pass
    else:
        result = await Runner.run(triage_agent, QUESTION, run_config=config)
    print(result.final_output)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--chat-completions", "--stream", "--trim"):
        parser.add_argument(flag, action="store_true")
    asyncio.run(main(parser.parse_args()))
