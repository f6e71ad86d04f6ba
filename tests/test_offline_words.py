"""The offline model reads what a schema says about its values and its results the way a
careful model does (issue 28, second review): a closed value said in the words its schema
gives it (``已发货`` for ``shipped``), a unit the result states, an action reported as done,
and a result that is not the JSON the tool promises reported as cut off, never pasted."""

import json

from agentdbg.engine.session import RunConfig, Session
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.offline import OfflineModel


def run(tools, question, **config):
    s = Session.for_question(OfflineModel(), tools, question, RunConfig(**config))
    list(s.run())
    return s


def first_calls(tools, question):
    tools = tools.openai_tools() if hasattr(tools, "openai_tools") else tools
    reply = OfflineModel().complete(ModelRequest([{"role": "user", "content": question}], tools))
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in reply.message.get("tool_calls") or []]


def fn(name, description, props, required):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": props, "required": required}}}


# -- a closed value in its words -------------------------------------------------------

def test_a_chinese_question_fills_an_enum_from_the_words_its_description_gives(sample_tools):
    for question in ("列出所有已发货的订单", "有哪些订单已经发货了?", "发货了的订单有哪些"):
        s = run(sample_tools, question)
        assert json.loads(s.messages[1]["tool_calls"][0]["function"]["arguments"]) == {"status": "shipped"}, question
        assert "必填参数" not in s.answer()
    assert first_calls(sample_tools, "列出已取消的订单") == [("search_orders", {"status": "cancelled"})]
    # "not shipped yet" is not "shipped", and "cancel an order" is not "cancelled orders"
    assert first_calls(sample_tools, "哪些订单还没发货?") == []
    assert first_calls(sample_tools, "帮我取消订单") == []


TASKS = fn("list_tasks", "List tasks by state.", {"state": {"type": "string", "description": "Task state", "oneOf": [
    {"const": "todo", "title": "待办"}, {"const": "doing", "title": "进行中 / in progress"},
    {"const": "done", "title": "已完成", "description": "finished"}]}}, ["state"])
TICKETS = fn("list_tickets", "按状态列出工单。", {"state": {
    "type": "string", "enum": ["open", "closed"], "description": "工单状态，打开中（open）或已关闭（closed）"}}, ["state"])


def test_titled_consts_and_bracketed_words_name_values_of_tools_never_seen():
    assert first_calls([TASKS], "有哪些任务已经完成了?") == [("list_tasks", {"state": "done"})]
    assert first_calls([TASKS], "Which tasks are in progress?") == [("list_tasks", {"state": "doing"})]
    assert first_calls([TASKS], "Show the finished tasks") == [("list_tasks", {"state": "done"})]
    assert first_calls([TICKETS], "列出已关闭的工单") == [("list_tickets", {"state": "closed"})]
    # the values a titled-const parameter takes are named when it cannot be filled
    reply = OfflineModel().complete(ModelRequest([{"role": "user", "content": "列出任务"}], [TASKS]))
    assert "todo, doing, done" in reply.message["content"]
