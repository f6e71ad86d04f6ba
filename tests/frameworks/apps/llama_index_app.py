"""A function-calling agent with LlamaIndex, as its docs write one: Python functions as
`FunctionTool`s (a pydantic `fn_schema` carries the parameter patterns), an `OpenAILike` LLM
(api_base from OPENAI_BASE_URL, api_key from OPENAI_API_KEY) and a `FunctionAgent` workflow,
awaited with the user's message.

    (default)   FunctionAgent(streaming=False)
    --stream    the FunctionAgent default (streaming=True), events read from handler.stream_events()
    --trim      misuse: a follow-up question sent with chat_history=the last 4 messages of the
                first run's memory, which cuts the first tool result from its call
"""

import argparse
import asyncio
import json
import os

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike
from pydantic import BaseModel, Field
from shop import ORDER_ID_DOC, ORDER_ID_PATTERN, QUESTION, TRACKING_NO_DOC, TRACKING_NO_PATTERN
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order

FOLLOW_UP = "订单 ORD-2026-001 现在到哪里了?"


class OrderQuery(BaseModel):
    order_id: str = Field(pattern=ORDER_ID_PATTERN, description=ORDER_ID_DOC)


class LogisticsQuery(BaseModel):
    tracking_no: str = Field(pattern=TRACKING_NO_PATTERN, description=TRACKING_NO_DOC)


def query_order(order_id: str) -> str:
    """查询订单状态和物流单号。当用户询问某个订单时使用。"""
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


def query_logistics(tracking_no: str) -> str:
    """用物流单号查询运输进度（当前位置）。已知物流单号时使用。"""
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


tools = [FunctionTool.from_defaults(query_order, fn_schema=OrderQuery),
         FunctionTool.from_defaults(query_logistics, fn_schema=LogisticsQuery)]


async def main(args) -> None:
    llm = OpenAILike(model="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"],
                     api_key=os.environ["OPENAI_API_KEY"], is_chat_model=True,
                     is_function_calling_model=True, context_window=128000)
    agent = FunctionAgent(tools=tools, llm=llm, streaming=args.stream,
                          system_prompt="你是订单客服，用工具查询订单和物流。")
    memory = ChatMemoryBuffer.from_defaults()
    handler = agent.run(user_msg=QUESTION, memory=memory)
    if args.stream:
        async for _event in handler.stream_events():
            pass
    response = await handler
    if args.trim:
        recent = (await memory.aget_all())[-4:]
        response = await agent.run(user_msg=FOLLOW_UP, chat_history=recent)
    print(str(response))

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--trim"):
        parser.add_argument(flag, action="store_true")
    asyncio.run(main(parser.parse_args()))
