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


# -- answers that read as a careful model's ----------------------------------------------

def answer(tools, question, calls, contents):
    tools = tools.openai_tools() if hasattr(tools, "openai_tools") else tools
    messages = [{"role": "user", "content": question},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{i}", "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                    for i, (name, args) in enumerate(calls)]}]
    messages += [{"role": "tool", "tool_call_id": f"c{i}", "content": c} for i, c in enumerate(contents)]
    return OfflineModel().complete(ModelRequest(messages, tools)).message["content"]


def test_a_number_is_said_with_the_unit_its_result_states(sample_tools):
    assert run(sample_tools, "北京和上海今天哪个更热?").answer().splitlines()[:2] == [
        "上海更热：29°C，北京 24°C。", "北京的 temperature 是 24°C，condition 是晴，wind 是北风 3级。"]
    assert run(sample_tools, "Which is warmer, Paris or London?").answer().splitlines()[0] == \
        "Paris is warmer: 17°C, London 14°C."
    # OpenAI's own weather example says "unit": "fahrenheit"; a units object names each field's
    lake = fn("lake_depth", "Depth of a lake.", {"lake": {"type": "string", "examples": ["Baikal"]}}, ["lake"])
    text = answer([lake], "Which is deeper, Baikal or Tahoe? which is colder?",
                  [("lake_depth", {"lake": "Baikal"}), ("lake_depth", {"lake": "Tahoe"})],
                  [json.dumps({"depth": 1642, "temp": 4, "units": {"depth": "m", "temp": "celsius"}}),
                   json.dumps({"depth": 501, "temp": 6, "units": {"depth": "m", "temp": "celsius"}})])
    assert "the depth is 1642 m and the temp is 4°C" in text and "units" not in text


def test_an_action_is_reported_done_not_found(sample_tools):
    s = run(sample_tools, "给 a@b.com 发一封邮件，主题是“发货通知”，内容是“您的订单已发货”", approve="all")
    assert s.answer().startswith("已发送一封邮件（收件人邮箱 a@b.com，邮件标题“发货通知”）："), s.answer()
    assert "我查到" not in s.answer() and "search_orders" not in s.answer()   # the body chose no status
    s = run(sample_tools, "把订单 ORD-2026-001 的物流情况发邮件给 a@b.com，主题是“发货通知”", approve="all")
    lines = s.answer().splitlines()
    assert lines[0].startswith("已发送一封邮件") and lines[1] == "我查到的情况如下："


def test_a_result_that_is_not_its_json_is_reported_cut_off_never_pasted(sample_tools):
    cut = '{"city": "北京", "temperature": 24, "condi'
    whole = json.dumps({"city": "上海", "temperature": 29, "condition": "多云", "unit": "°C"}, ensure_ascii=False)
    calls = [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    text = answer(sample_tools, "北京和上海今天哪个更热?", calls, [cut, whole])
    assert "\"condi" not in text and "{" not in text
    assert "get_weather（北京）的结果被截断了，不是完整的 JSON，我没法完整读取；能读到的部分是：temperature 是 24。" in text
    assert "上海更热" not in text           # one readable result compares nothing
    en = [("get_weather", {"city": "London"}), ("get_weather", {"city": "Paris"})]
    text = answer(sample_tools, "Which is warmer, London or Paris?", en,
                  ['{"city": "London", "temperature": 14, "condi', whole.replace("上海", "Paris")])
    assert "The result of get_weather for London was cut off and is not complete JSON, so I cannot read all " \
           "of it; the part I can read says the temperature is 14." in text and "\"condi" not in text
    text = answer(sample_tools, "What's the weather in London?", en[:1], ['{"city": "London"}} trailing'])
    assert text.endswith("The result of get_weather for London is not valid JSON, so I cannot read it.")
    # a result agentdbg cut at max_result_chars: its complete fields, never its text
    s = run(sample_tools, "有哪些订单已经发货了?")
    assert s.answer() == ("search_orders（已发货）的结果被截断了，不是完整的 JSON，我没法完整读取；"
                          "能读到的部分是：total 是 120。")
    assert run(sample_tools, "List all shipped orders").answer() == (
        "The result of search_orders for status shipped was cut off and is not complete JSON, so I cannot "
        "read all of it; the part I can read says the total is 120.")
    # text that only starts with a bracket is a tool's text, read as it is
    text = answer(sample_tools, "What's the weather in London?", en[:1], ["[warn] London: 14 degrees, drizzle"])
    assert "[warn] London: 14 degrees, drizzle" in text and "JSON" not in text
