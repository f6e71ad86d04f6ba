"""A team with AutoGen AgentChat, as its teams tutorial writes one: two `AssistantAgent`s on
an `OpenAIChatCompletionClient` taking turns in a `RoundRobinGroupChat` that ends when the
critic says APPROVE. The client reads OPENAI_BASE_URL / OPENAI_API_KEY from the environment.

    --stream   team.run_stream() (the messages as they come) instead of team.run()
"""

import argparse
import asyncio
import json

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import TaskResult
from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient
from shop import QUESTION
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order


async def query_order(order_id: str) -> str:
    """查询订单状态和物流单号。当用户询问某个订单时使用。"""
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


async def query_logistics(tracking_no: str) -> str:
    """用物流单号查询运输进度（当前位置）。已知物流单号时使用。"""
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


async def main(args) -> None:
    model_client = OpenAIChatCompletionClient(model="gpt-4o")
    order_agent = AssistantAgent(
        "order_agent", model_client=model_client, tools=[query_order, query_logistics],
        system_message="You are the order agent. Look orders and parcels up with your tools.",
        max_tool_iterations=2, reflect_on_tool_use=True)
    critic = AssistantAgent(
        "critic", model_client=model_client,
        system_message="You are the critic. Check the order agent's answer; respond with 'APPROVE' "
                       "when it answers the question.")
    team = RoundRobinGroupChat([order_agent, critic], termination_condition=TextMentionTermination("APPROVE"))
    if args.stream:
        result = None
        async for message in team.run_stream(task=QUESTION):
            if isinstance(message, TaskResult):
                result = message
    else:
        result = await team.run(task=QUESTION)
    for message in result.messages:
        print(f"{message.source}: {message.to_text()}")
    await model_client.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    asyncio.run(main(parser.parse_args()))
