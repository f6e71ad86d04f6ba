"""DSPy's `ReAct`, as its docs write an agent: `dspy.LM("openai/…")` configured with
`dspy.configure`, plain Python functions with docstrings as tools, `dspy.ReAct("question ->
answer", tools=[...])`. Each step is a fresh prompt holding the trajectory so far as text (the
calls and their observations are fields of the prompt, not tool calls).

The endpoint is OPENAI_BASE_URL with OPENAI_API_KEY, given to `dspy.LM` as `api_base` /
`api_key` (DSPy's way to point at an OpenAI-compatible server); no cache, so every step is sent.

    --forget-steps  misuse: a ReAct subclass whose prompts show only the latest step of the
                    trajectory, so the model no longer sees the order it already looked up
"""

import argparse
import json
import os

import dspy
from shop import QUESTION
from shop import query_logistics as lookup_logistics
from shop import query_order as lookup_order


def query_order(order_id: str) -> str:
    """查询订单状态和物流单号。当用户询问某个订单时使用。"""
    return json.dumps(lookup_order(order_id), ensure_ascii=False)


def query_logistics(tracking_no: str) -> str:
    """用物流单号查询运输进度（当前位置）。已知物流单号时使用。"""
    return json.dumps(lookup_logistics(tracking_no), ensure_ascii=False)


class ForgetfulReAct(dspy.ReAct):
    """The misuse: each step's prompt shows only the latest step of the trajectory."""

    def _format_trajectory(self, trajectory):
        last = max((int(k.rsplit("_", 1)[1]) for k in trajectory), default=None)
        kept = {k: v for k, v in trajectory.items() if k.endswith(f"_{last}")}
        return super()._format_trajectory(kept)


def main(args) -> None:
    lm = dspy.LM("openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"],
                 api_key=os.environ["OPENAI_API_KEY"], cache=False)
    dspy.configure(lm=lm)
    agent = (ForgetfulReAct if args.forget_steps else dspy.ReAct)(
        "question -> answer", tools=[query_order, query_logistics])
    prediction = agent(question=QUESTION)
    print(prediction.answer)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--forget-steps", action="store_true")
    main(parser.parse_args())
