"""A ToolCallingAgent with smolagents, as its docs write one: tools as `Tool` subclasses, an
`OpenAIServerModel` with `api_base` (OPENAI_BASE_URL) and `api_key` (OPENAI_API_KEY), `agent.run`.

smolagents sends the tool calls back to the model as assistant text ("Calling tools: ...")
and the results as user text ("Observation: ..."), not as tool_calls / tool messages.

    --stream        stream_outputs=True
    --lose-result   misuse: a step callback that empties each step's observations, so the
                    tool's result never reaches the model
"""

import argparse
import json
import os

from shop import (
    ORDER_ID_DOC,
    ORDER_ID_PATTERN,
    QUERY_LOGISTICS_DOC,
    QUERY_ORDER_DOC,
    QUESTION,
    TRACKING_NO_DOC,
    TRACKING_NO_PATTERN,
    query_logistics,
    query_order,
)
from smolagents import ActionStep, OpenAIServerModel, Tool, ToolCallingAgent


class QueryOrder(Tool):
    name = "query_order"
    description = QUERY_ORDER_DOC
    inputs = {"order_id": {"type": "string", "description": ORDER_ID_DOC,  # noqa: RUF012 - smolagents' idiom
                           "pattern": ORDER_ID_PATTERN}}
    output_type = "string"

    def forward(self, order_id: str) -> str:
        return json.dumps(query_order(order_id), ensure_ascii=False)


class QueryLogistics(Tool):
    name = "query_logistics"
    description = QUERY_LOGISTICS_DOC
    inputs = {"tracking_no": {"type": "string", "description": TRACKING_NO_DOC,  # noqa: RUF012
                              "pattern": TRACKING_NO_PATTERN}}
    output_type = "string"

    def forward(self, tracking_no: str) -> str:
        return json.dumps(query_logistics(tracking_no), ensure_ascii=False)


def lose_result(memory_step, agent=None) -> None:
    if isinstance(memory_step, ActionStep):
        memory_step.observations = None


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--stream", "--lose-result"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"],
                              api_key=os.environ["OPENAI_API_KEY"])
    agent = ToolCallingAgent(tools=[QueryOrder(), QueryLogistics()], model=model, max_steps=6,
                             stream_outputs=args.stream,
                             step_callbacks=[lose_result] if args.lose_result else None)
    print(agent.run(QUESTION))


if __name__ == "__main__":
    main()
