"""A LangGraph supervisor, as langgraph-supervisor's quickstart writes one: a specialist made
with `create_react_agent(model, tools, name=..., prompt=...)`, a supervisor from
`create_supervisor([...], model=..., prompt=...)` that hands the question to it
(`transfer_to_order_expert`) and gets it back (`transfer_back_to_supervisor`), `compile()`,
`invoke()`. `ChatOpenAI` reads OPENAI_BASE_URL / OPENAI_API_KEY from the environment.
"""

import json

from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from langgraph_supervisor import create_supervisor
from shop import QUESTION
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order


def query_order(order_id: str) -> str:
    """查询订单状态和物流单号。当用户询问某个订单时使用。"""
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


def query_logistics(tracking_no: str) -> str:
    """用物流单号查询运输进度（当前位置）。已知物流单号时使用。"""
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


model = ChatOpenAI(model="gpt-4o")
order_agent = create_react_agent(model=model, tools=[query_order, query_logistics], name="order_expert",
                                 prompt="You are an order expert. Always use one tool at a time.")
workflow = create_supervisor([order_agent], model=model,
                             prompt="You are a team supervisor managing an order expert. "
                                    "For questions about orders and parcels, use order_expert.")
app = workflow.compile()
result = app.invoke({"messages": [{"role": "user", "content": QUESTION}]})
print(result["messages"][-1].content)
