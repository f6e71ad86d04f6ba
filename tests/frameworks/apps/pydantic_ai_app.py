"""An agent with pydantic-ai, as its docs write one: an `Agent` on a model with a provider,
tools registered with `@agent.tool_plain`, `agent.run_sync`.

    (default)      OpenAIChatModel on OpenAIProvider(base_url=OPENAI_BASE_URL)
    --anthropic    AnthropicModel on AnthropicProvider(base_url=ANTHROPIC_BASE_URL)
    --structured   output_type=Shipment: the run ends on the model's `final_result` tool call
    --stream       agent.run_stream(...) instead of run_sync
    --trim         misuse: a history processor that keeps the last 3 messages (pydantic-ai then
                   drops the tool return whose call was cut, and the question is gone)
"""

import argparse
import asyncio
import os
from typing import Annotated

import shop
from pydantic import BaseModel, Field
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage
from shop import ORDER_ID_PATTERN, QUESTION, TRACKING_NO_PATTERN


class Shipment(BaseModel):
    """Where the order is."""
    tracking_no: str
    location: str


def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    return messages[-3:]


def make_model(anthropic: bool):
    if anthropic:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel("claude-sonnet-4-5",
                              provider=AnthropicProvider(base_url=os.environ["ANTHROPIC_BASE_URL"]))
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))


def make_agent(args) -> Agent:
    agent = Agent(make_model(args.anthropic), instructions="你是订单客服，用工具查询订单和物流。",
                  output_type=Shipment if args.structured else str,
                  capabilities=[ProcessHistory(keep_recent_messages)] if args.trim else None)

    @agent.tool_plain
    def query_order(order_id: Annotated[str, Field(pattern=ORDER_ID_PATTERN)]) -> dict:
        """查询订单状态和物流单号。当用户询问某个订单时使用。

        Args:
            order_id: 订单号，例如 ORD-2026-001
        """
        return shop.query_order(order_id)

    @agent.tool_plain
    def query_logistics(tracking_no: Annotated[str, Field(pattern=TRACKING_NO_PATTERN)]) -> dict:
        """用物流单号查询运输进度（当前位置）。已知物流单号时使用。

        Args:
            tracking_no: 物流单号，例如 SF123456
        """
        return shop.query_logistics(tracking_no)

    return agent


async def run_streamed(agent: Agent):
    async with agent.run_stream(QUESTION) as result:
        return await result.get_output()


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--anthropic", "--structured", "--stream", "--trim"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    agent = make_agent(args)
    if args.stream:
        print(asyncio.run(run_streamed(agent)))
    else:
        print(agent.run_sync(QUESTION).output)


if __name__ == "__main__":
    main()
