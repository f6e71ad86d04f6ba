"""agno, as its docs write a team and an agent with history: the client is `OpenAIChat`, which
reads OPENAI_BASE_URL / OPENAI_API_KEY from the environment.

    (default)   a `Team` whose leader delegates the question to its order agent member
                (`delegate_task_to_member`), `team.run()`
    --history   one `Agent` with `add_history_to_context=True` and
                `max_tool_calls_from_history=1` (its docs' filter-tool-calls-from-history
                example), asked twice in one session: the second run's history keeps only the
                last tool call
"""

import argparse
import json
import tempfile
from pathlib import Path

from agno.agent import Agent
from agno.db.sqlite import SqliteDb
from agno.models.openai import OpenAIChat
from agno.team import Team
from shop import QUESTION
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order


def query_order(order_id: str) -> str:
    """查询订单状态和物流单号。当用户询问某个订单时使用。

    Args:
        order_id (str): 订单号，例如 ORD-2026-001
    """
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


def query_logistics(tracking_no: str) -> str:
    """用物流单号查询运输进度（当前位置）。已知物流单号时使用。

    Args:
        tracking_no (str): 物流单号，例如 SF123456
    """
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


def team_run() -> None:
    order_agent = Agent(id="order-agent", name="Order Agent", role="Look orders and parcels up",
                        model=OpenAIChat(id="gpt-4o"), tools=[query_order, query_logistics])
    team = Team(name="Support Team", members=[order_agent], model=OpenAIChat(id="gpt-4o"),
                instructions="Delegate questions about orders to the order agent.")
    print(team.run(QUESTION).content)


def history_run(folder: Path) -> None:
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[query_order, query_logistics],
                  instructions="You are the order assistant. Look orders and parcels up with your tools.",
                  max_tool_calls_from_history=1, db=SqliteDb(db_file=str(folder / "orders.db")),
                  add_history_to_context=True)
    print(agent.run(QUESTION).content)
    print(agent.run("现在到哪里了？再说一遍。").content)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--history", action="store_true")
    args = parser.parse_args()
    if args.history:
        with tempfile.TemporaryDirectory() as tmp:
            history_run(Path(tmp))
    else:
        team_run()
