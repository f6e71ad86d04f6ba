"""The offline model in a classroom: it answers a broken request with the API's own 400, it
speaks the question's language in sentences, and it reads what a user (not a client) wrote."""

import json
import re

from test_offline import calls_per_turn, fn_tool, reply_to, run, user
from typer.testing import CliRunner

from agentdbg.checker import check_model_request
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.providers.factory import make_provider

ORDER_Q = "订单 ORD-2026-001 到哪里了?"
ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."


def step_session(tools, question=ORDER_Q, **kw):
    info = make_provider(None, **kw)
    return Session.for_question(info.provider, tools, question,
                                RunConfig(approve="ask", stop_on_invalid=False),
                                precheck=lambda r: check_model_request(r))


def test_send_after_drop_gets_the_apis_400_from_the_offline_model(sample_tools):
    s = step_session(sample_tools)
    s.step(), s.step()                       # turn 1, then its call: [user, assistant, tool]
    s.drop(1)                                # the assistant message: the result is an orphan
    blocked = s.step()
    assert type(blocked).__name__ == "RequestBlocked" and not s.done   # not sent: step mode pauses
    s.send_once()
    s.step()
    assert s.stop_reason is StopReason.MODEL_ERROR
    assert s.model_failure.status == 400 and s.model_failure.body["error"]["message"] == ORPHAN[:-1] + "."
    assert "HTTP 400" in s.stop_detail and ORPHAN in s.stop_detail
    assert len(s.messages) == 2              # nothing appended


def test_the_400_follows_the_profile_and_the_api(sample_tools):
    s = step_session(sample_tools, api="anthropic", profile="openai")
    s.step(), s.step()
    s.drop(1)
    s.send_once()
    s.step()
    assert s.stop_reason is StopReason.MODEL_ERROR and s.model_failure.status == 400
    body = s.model_failure.body
    assert body["type"] == "error" and "tool_use_id" in body["error"]["message"]   # Anthropic's words


def test_the_400_in_each_format_is_its_apis_and_names_that_api(sample_tools):
    """The judgement goes through the codec of the run's format (Gemini too); the stop line
    names whose API answered: an OpenAI format the profile's server, a vendor's own format
    its vendor."""
    said = {"chat": ("messages with role 'tool' must be a response", "the OpenAI Chat Completions API"),
            "responses": ("No tool call found for function call output", "the OpenAI Responses API"),
            "anthropic": ("unexpected `tool_use_id` found in `tool_result`", "the Anthropic Messages API"),
            "gemini": ("function response turn comes immediately after a function call turn",
                       "the Gemini API")}
    for api, (words, name) in said.items():
        s = step_session(sample_tools, api=api, profile="openai")
        s.step(), s.step()
        s.drop(1)
        s.send_once()
        s.step()
        assert s.stop_reason is StopReason.MODEL_ERROR and s.model_failure.status == 400, api
        assert words in s.stop_detail, (api, s.stop_detail)
        assert f"answers as {name} would, --profile openai" in s.stop_detail, (api, s.stop_detail)


def test_narration_of_a_400_explains_it_never_blames_a_limit(sample_tools):
    from agentdbg import i18n
    from agentdbg.repl.explain import narrate

    s = step_session(sample_tools)
    s.step(), s.step()
    s.drop(1)
    s.send_once()
    s.step()
    assert "HTTP 400" in narrate(s) and "limit" not in narrate(s)
    i18n.use("zh")
    said = narrate(s)
    assert "API 拒绝了这个请求（HTTP 400）" in said and "因限制而终止" not in said and "上限" not in said


def test_base_url_with_the_offline_model_is_an_error(tmp_path):
    from agentdbg.cli import app

    r = CliRunner().invoke(app, ["run", "--base-url", "http://127.0.0.1:9/v1", "hi"])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("agentdbg: error: --base-url is for a real endpoint")
    # a URL from the environment is not the user's choice for this run: no error
    r = CliRunner().invoke(app, ["run", "hi"], env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert r.exit_code == 0


def test_the_weather_answer_is_sentences_in_chinese(sample_tools):
    answer = run(sample_tools, "北京和上海今天哪个更热?").answer()
    assert answer.splitlines() == [
        "上海更热：29°C，北京 24°C。",
        "北京的 temperature 是 24°C，condition 是晴，wind 是北风 3级。",
        "上海的 temperature 是 29°C，condition 是多云，wind 是东南风 2级。"]


def prose(text: str) -> str:
    """The model's own words: without the data it quotes (field names, values, tool names)."""
    text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*(?: [为是] [^，。]+)?", "", text)
    return text


def test_a_chinese_question_gets_no_english_sentence(sample_tools):
    for question in (ORDER_Q, "订单 ORD-2026-999 到哪里了?", "SKU-1001 有货吗?", "给我发封邮件"):
        answer = run(sample_tools, question).answer()
        for phrase in ("Here is", "I could", "no value", "From the", "could not"):
            assert phrase not in answer, (question, answer)
    answer = run(sample_tools, "给 ops@example.com 发邮件").answer()   # subject and body missing
    assert "必填参数 subject——问题和工具结果里都没有它的值" in answer and "no value" not in answer


def test_a_subject_named_in_chinese_fills_subject_and_body(sample_tools):
    s = run(sample_tools, "把订单 ORD-2026-001 的物流情况发邮件给 ops@example.com，主题是“发货通知”",
            approve="all")
    sent = [args for turn in calls_per_turn(s) for name, args in turn if name == "send_email"]
    assert len(sent) == 1 and sent[0]["to"] == "ops@example.com" and sent[0]["subject"] == "发货通知"
    assert "SF123456" in sent[0]["body"] and "杭州转运中心已发出" in sent[0]["body"]  # written from the results
    assert s.stop_reason is StopReason.COMPLETED
    assert "没有它的值" not in s.answer() and "status 是 sent" in s.answer()   # it filled body: never "no value"


CLAUDE_TOOLS = [
    fn_tool("ToolSearch", {"query": {"type": "string", "description": "What to search for"}}, ["query"],
            "Search the available tools"),
    fn_tool("Bash", {"command": {"type": "string"}}, ["command"], "Run a shell command"),
    fn_tool("Read", {"file_path": {"type": "string"}}, ["file_path"], "Read a file"),
]


def test_the_question_is_the_users_words_not_a_clients_reminders():
    history = [{"role": "system", "content": "You are Claude Code. Attribution: include a footer."},
               {"role": "user", "content": [
                   {"type": "text", "text": "<system-reminder>\nAs you answer the user's questions, "
                    "you can use the following context: Attribution Settings, \"Project Notes\"\n"
                    "</system-reminder>"},
                   {"type": "text", "text": "say hi"}]}]
    reply = reply_to(CLAUDE_TOOLS, history)
    assert reply.message.get("tool_calls") is None
    assert reply.message["content"].startswith("Hello! I am agentdbg's offline model")
    # a message that only carries a reminder asks nothing: the question stays the user's
    later = history + [{"role": "assistant", "content": "Hello!"},
                       {"role": "user", "content": "<system-reminder>Attribution</system-reminder>"}]
    assert reply_to(CLAUDE_TOOLS, later).message.get("tool_calls") is None


def test_a_greeting_is_answered_in_text_in_its_language(sample_tools):
    for question, start in (("hi", "Hello!"), ("你好", "你好！"), ("Hello there!", "Hello!")):
        s = run(sample_tools, question)
        assert calls_per_turn(s) == [[]] and s.answer().startswith(start), s.answer()
        assert "query_order" in s.answer()   # what it can do


def weather_and_time(tz_description):
    return [fn_tool("get_weather", {"city": {"type": "string", "description": "The city, e.g. Paris"}},
                    ["city"], "Get the current weather for a city."),
            fn_tool("get_time", {"tz": {"type": "string", **tz_description}}, ["tz"],
                    "Get the current local time in a time zone.")]


def test_a_plain_two_tool_app_gets_both_calls_with_the_right_values():
    for tz in ({"description": "IANA time zone name, e.g. Europe/Paris"},
               {"description": "IANA time zone, e.g. America/New_York"}, {}):
        reply = reply_to(weather_and_time(tz), user("What's the weather and time in Paris?"))
        calls = sorted((c["function"]["name"], json.loads(c["function"]["arguments"]))
                       for c in reply.message["tool_calls"])
        assert calls == [("get_time", {"tz": "Europe/Paris"}), ("get_weather", {"city": "Paris"})], tz
