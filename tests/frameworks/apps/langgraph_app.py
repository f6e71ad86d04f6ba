"""A ReAct agent with LangChain + LangGraph, as their docs write one: `@tool` functions, a
`ChatOpenAI` model (OPENAI_BASE_URL / OPENAI_API_KEY from the environment) and `create_agent`
(a LangGraph graph), invoked with the user's message.

    --stream   ChatOpenAI(streaming=True) and agent.stream(..., stream_mode="values")
    --trim     misuse: a @before_model middleware that trims the history with
               trim_messages(strategy="last") and forgets start_on="human", so a tool
               message can lose the AI message that called it
"""

import argparse
import json
from typing import Annotated

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain.messages import RemoveMessage
from langchain_core.messages import trim_messages
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph.message import REMOVE_ALL_MESSAGES
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


@tool(description=QUERY_ORDER_DOC)
def query_order(order_id: Annotated[str, Field(pattern=ORDER_ID_PATTERN, description=ORDER_ID_DOC)]) -> str:
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


@tool(description=QUERY_LOGISTICS_DOC)
def query_logistics(
        tracking_no: Annotated[str, Field(pattern=TRACKING_NO_PATTERN, description=TRACKING_NO_DOC)]) -> str:
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


@before_model
def trim_history(state: AgentState, runtime) -> dict | None:
    """Keep the last 3 messages to fit the context window."""
    kept = trim_messages(state["messages"], max_tokens=3, token_counter=len, strategy="last")
    if len(kept) == len(state["messages"]):
        return None
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--trim"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    model = ChatOpenAI(model="gpt-4o-mini", streaming=args.stream)
    agent = create_agent(model, tools=[query_order, query_logistics],
                         middleware=[trim_history] if args.trim else [])
    inputs = {"messages": [{"role": "user", "content": QUESTION}]}
    if args.stream:
        *_, state = agent.stream(inputs, stream_mode="values")  # the model streams its tokens
    else:
        state = agent.invoke(inputs)
    print(state["messages"][-1].content)

if __name__ == "__main__":
    main()
