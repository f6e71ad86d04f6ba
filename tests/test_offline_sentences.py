"""The offline model's answers read as replies, in the question's language (issue 28): a
sentence per result with fields named from the tool schemas, the winner of a comparison
stated, an action said to be done. Nothing here is specific to the sample tools: the last
tests ask the same of tools the model has never seen."""

import json

from agentdbg.engine.session import RunConfig, Session
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.offline import OfflineModel


def run(tools, question, **config):
    s = Session.for_question(OfflineModel(), tools, question, RunConfig(**config))
    list(s.run())
    return s


def test_a_chinese_comparison_says_which_is_hotter(sample_tools):
    assert run(sample_tools, "北京和上海今天哪个更热?").answer().splitlines() == [
        "上海更热：29°C，北京 24°C。",
        "北京的 temperature 是 24°C，condition 是晴，wind 是北风 3级。",
        "上海的 temperature 是 29°C，condition 是多云，wind 是东南风 2级。"]
    assert run(sample_tools, "北京、上海和广州哪个最冷?").answer().splitlines()[0] == \
        "北京最冷：24°C，其次是上海 29°C，广州 31°C。"


def test_an_english_comparison_says_which_is_warmer(sample_tools):
    lines = run(sample_tools, "Which is warmer, Paris or London?").answer().splitlines()
    assert lines == ["Paris is warmer: 17°C, London 14°C.",
                     "For Paris, the temperature is 17°C, the condition is cloudy and the wind is W 2.",
                     "For London, the temperature is 14°C, the condition is drizzle and the wind is SW 3."]


def test_the_order_answer_names_fields_from_the_parameter_descriptions(sample_tools):
    zh = run(sample_tools, "订单 ORD-2026-001 到哪里了?").answer().splitlines()
    # order_id "订单号" names the order; status "订单状态" (search_orders, a tool about orders)
    # and tracking_no "物流单号" (query_logistics) name its fields; search_orders' status says
    # shipped in words ("shipped 已发货")
    assert zh[1] == "订单 ORD-2026-001 的状态是已发货，物流单号是 SF123456。"
    # an order's status is not the shipment's: no order tool names query_logistics's status
    assert zh[2].startswith("物流单 SF123456 的 status 是 in_transit，latest_event 是杭州转运中心已发出")
    en = run(sample_tools, "Where is order ORD-2026-001?").answer().splitlines()
    assert en[1] == "For order ORD-2026-001, the status is shipped and the tracking number is SF123456."


def test_a_sent_email_is_said_to_be_sent(sample_tools):
    s = run(sample_tools, "把订单 ORD-2026-001 的物流情况发邮件给 a@b.com，主题是“发货通知”", approve="all")
    assert s.answer().splitlines()[0].startswith("已发送一封邮件（收件人邮箱 a@b.com，邮件标题“发货通知”）：status 是 sent，")
    s = run(sample_tools, 'Email the status of order ORD-2026-001 to a@b.com with subject "Shipping update"',
            approve="all")
    assert 'Done: send an e-mail (to a@b.com, subject "Shipping update"); the status is sent, the ' \
           'message ID is msg-' in s.answer()


def test_a_greeting_asks_for_a_question(sample_tools):
    assert run(sample_tools, "你好").answer().endswith("请提一个它们能回答的问题。")


# -- tools the model has never seen ----------------------------------------------------

def fn(name, description, props, required):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": props, "required": required}}}


ROOM = fn("room_climate", "某个房间的温湿度。Climate of a room.",
          {"room": {"type": "string", "description": "房间名", "enum": ["客厅", "卧室"]}}, ["room"])
TICKETS = [fn("get_ticket", "查询工单。", {"ticket_no": {"type": "string", "description": "工单号，例如 T-1001",
                                                      "pattern": "^T-\\d{4}$"}}, ["ticket_no"]),
           fn("list_tickets", "按处理人列出工单。", {"assignee_id": {"type": "string", "description": "处理人工号"},
                                               "state": {"type": "string", "description": "工单状态"}},
              ["assignee_id"]),
           fn("close_ticket", "关闭一个工单。Close a ticket.", {"ticket_no": {"type": "string",
                                                                      "description": "工单号"}}, ["ticket_no"])]


def answer(tools, question, calls, results, **request):
    messages = [{"role": "user", "content": question},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{i}", "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                    for i, (name, args) in enumerate(calls)]}]
    messages += [{"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(r, ensure_ascii=False)}
                 for i, r in enumerate(results)]
    reply = OfflineModel().complete(ModelRequest(messages, tools, **request))
    return reply.message["content"]


def test_an_unseen_comparison_picks_the_field_the_comparative_is_about():
    text = answer([ROOM], "客厅和卧室哪个更暖和?",
                  [("room_climate", {"room": "客厅"}), ("room_climate", {"room": "卧室"})],
                  [{"humidity": 60, "temp_c": 21}, {"humidity": 40, "temp_c": 23}])
    assert text.splitlines()[0] == "卧室更暖：23，客厅 21。"   # temp_c, not humidity
    text = answer([ROOM], "Which room is more humid?",
                  [("room_climate", {"room": "客厅"}), ("room_climate", {"room": "卧室"})],
                  [{"humidity": 60, "temp_c": 21}, {"humidity": 40, "temp_c": 23}])
    assert text.splitlines()[0] == "客厅 is more humid: 60, 卧室 40."


def test_unseen_tools_name_their_fields_and_actions_from_their_descriptions():
    text = answer(TICKETS, "工单 T-1001 怎么样了?", [("get_ticket", {"ticket_no": "T-1001"})],
                  [{"state": "open", "assignee_id": "E042"}], tool_choice="none")
    assert text.splitlines()[1] == "工单 T-1001 的状态是 open，处理人工号是 E042。"
    text = answer(TICKETS, "关闭工单 T-1001", [("close_ticket", {"ticket_no": "T-1001"})],
                  [{"closed": True}], side_effect_tools=frozenset({"close_ticket"}), tool_choice="none")
    assert text.splitlines() == ["已关闭一个工单（工单号 T-1001）：closed 是 true。"]   # done, not "found"
