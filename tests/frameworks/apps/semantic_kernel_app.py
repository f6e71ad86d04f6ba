"""Semantic Kernel, as its agent docs write one: a `ChatCompletionAgent` on an
`OpenAIChatCompletion` service with a plugin of `@kernel_function`s, asked a question and a
follow-up on the same thread (`agent.get_response(messages=..., thread=thread)`). The service's
`AsyncOpenAI()` client reads OPENAI_BASE_URL / OPENAI_API_KEY from the environment.

On the follow-up the agent sends its stored replies back with its own `"name"` on them: the
history was edited (a name added), not rewritten.
"""

import asyncio
import json
from typing import Annotated

from openai import AsyncOpenAI
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function
from shop import QUESTION
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order


class OrderPlugin:
    @kernel_function(description="查询订单状态和物流单号。当用户询问某个订单时使用。")
    def query_order(self, order_id: Annotated[str, "订单号，例如 ORD-2026-001"]) -> str:
        return json.dumps(lookup_order(order_id), ensure_ascii=False)

    @kernel_function(description="用物流单号查询运输进度（当前位置）。已知物流单号时使用。")
    def query_logistics(self, tracking_no: Annotated[str, "物流单号，例如 SF123456"]) -> str:
        return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


async def main() -> None:
    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=AsyncOpenAI()),
        name="OrderAgent", instructions="You are OrderAgent, who looks orders and parcels up with its tools.",
        plugins=[OrderPlugin()])
    thread = None
    for user_input in (QUESTION, "现在到哪里了？再说一遍。"):
        response = await agent.get_response(messages=user_input, thread=thread)
        print(f"{response.name}: {response}")
        thread = response.thread


if __name__ == "__main__":
    asyncio.run(main())
