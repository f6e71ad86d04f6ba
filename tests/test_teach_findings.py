"""The checker's findings in the chosen language: every Chat Completions rule's text is in
the catalog, protocol words stay English, the API's own words stay verbatim (introduced in
Chinese), and what is recorded or printed as JSON stays English."""

import json
import re
from pathlib import Path

import pytest
from test_checker_rules import DEFECTS
from typer.testing import CliRunner

from agentdbg import i18n
from agentdbg.checker import check
from agentdbg.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "missing_assistant.json"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chinese():
    i18n.use("zh")
    yield
    i18n.use("en")


@pytest.mark.parametrize("rule,messages,body,profile,expected", DEFECTS,
                         ids=[f"{d[0]}-{d[3]}" for d in DEFECTS])
def test_every_chat_rule_says_what_is_wrong_in_chinese(chinese, rule, messages, body, profile, expected):
    for f in check({"messages": messages, **body}, profile):
        said = f.text()
        assert CJK.search(said) and said != f.message, (rule, said)
        said = re.sub(r"Expecting [^）]*", "", said)    # Python's json error: what parsing said
        said = re.sub(r"schema：.*；", "", said)         # the JSON Schema validator's own words
        english = {w for w in re.findall(r"[A-Za-z_]{4,}", said)}
        prose = english - set(re.findall(r"[A-Za-z_]{4,}", json.dumps(messages) + json.dumps(body))) - {
            "tool_calls", "tool", "tool_call_id", "tools", "assistant", "user", "system", "role",
            "content", "null", "arguments", "function", "name", "type", "json", "dumps", "JSON",
            "OpenAI", "Anthropic", "MiniMax", "Qwen", "vLLM", "tool_choice", "auto", "none",
            "required", "functions", "function_call", "schema", "strict", "reasoning_content",
            "extra_content", "google", "thought_signature", "delta", "invalid_json", "custom",
            "profile", "mistral", "Mistral", "anthropic", "proxy", "vllm", "qwen", "deepseek",
            "reasoner", "legacy", "kimi", "thinking", "properties", "additionalProperties", "root",
            "missing", "false", "city", "get_weather", "get_time", "search", "Zhipu", "characters"}
        assert not {w for w in prose if w.islower() and w not in f.message.split("'")}, (rule, said)
        assert f.api_error is None or f.api_error.isascii()   # what the API says: verbatim


def test_check_speaks_chinese_and_quotes_the_api(tmp_path):
    r = CliRunner().invoke(app, ["check", str(EXAMPLE), "--lang", "zh"])
    assert r.exit_code == 1, r.output
    flat = "".join(r.output.split())     # folded between Chinese characters too
    assert "✗错误orphan-tool-message：" in flat and "不是对前面带'tool_calls'的assistant消息的回应" in flat
    assert "API的原话：Invalidparameter:messageswithrole'tool'mustbearesponse" in flat
    assert "✗1个错误，0个警告（profileopenai）" in flat
    assert "isnotaresponsetoapreceding" not in flat


def test_json_and_transcripts_stay_english(tmp_path):
    r = CliRunner().invoke(app, ["check", str(EXAMPLE), "--lang", "zh", "--json"])
    doc = json.loads(r.stdout)
    assert doc["findings"][0]["message"].startswith("tool message is not a response")
    rec = tmp_path / "rec.jsonl"
    CliRunner().invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--step", "--lang", "zh",
                             "--save", str(rec)], input="n\nn\ndrop 1\nn\nquit\n")
    blocked = [json.loads(line) for line in rec.read_text(encoding="utf-8").splitlines()
               if '"type": "blocked"' in line]
    assert blocked and blocked[0]["findings"][0]["message"].startswith("tool message is not")


def test_a_step_mode_block_shows_the_finding_in_chinese():
    r = CliRunner().invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--step", "--lang", "zh"],
                           input="n\nn\ndrop 1\nn\nquit\n")
    flat = "".join(r.output.split())
    assert "✗错误orphan-tool-message：这条tool消息不是对前面带'tool_calls'的assistant消息的回应" in flat
    assert "API的原话：Invalidparameter:messageswithrole'tool'" in flat


def format_defects():
    import sys
    from pathlib import Path as P

    sys.path.insert(0, str(P(__file__).parent / "checker_formats"))
    import test_anthropic_rules as anthropic
    import test_responses_rules as responses

    from agentdbg.checker.formats.anthropic import check_anthropic
    from agentdbg.checker.formats.responses import check_responses

    cases = [(f"anthropic: {d[0]}", lambda d=d: check_anthropic(d[1], d[2])) for d in anthropic.DEFECTS]
    cases += [(f"responses: {d[0]}", lambda d=d: check_responses(
        {k: v for k, v in d[1].items() if k != "_prior"} if isinstance(d[1], dict) else d[1], d[2],
        prior=d[1].get("_prior") if isinstance(d[1], dict) else None)) for d in responses.DEFECTS]
    return cases


@pytest.mark.parametrize("name,judge", format_defects(), ids=[c[0] for c in format_defects()])
def test_every_format_rule_says_what_is_wrong_in_chinese(chinese, name, judge):
    """The Responses and Anthropic formats' findings are in the catalog too (Gemini's as well:
    the same kind of template)."""
    for f in judge():
        said = f.text()
        assert CJK.search(said) and said != f.message, (name, said)


def test_a_gemini_finding_is_in_chinese(chinese):
    from agentdbg.checker.formats.gemini import check_gemini

    doc = {"contents": [{"role": "user", "parts": [{"text": "hi"}]},
                        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                                         "response": {}}}]}]}
    found = check_gemini(doc, "openai")
    assert found and all(CJK.search(f.text()) for f in found), [f.text() for f in found]


def test_a_history_edit_is_said_in_chinese(chinese):
    """history-rewritten says what the app's edit removed and what the model loses, in the
    chosen language; the finding's English (JSON, transcripts) is unchanged."""
    from agentdbg.checker.rules.conversation import ConversationRules

    def call(i, name):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}}]}

    def result(i):
        return {"role": "tool", "tool_call_id": i, "content": "{}"}

    question = {"role": "user", "content": "订单 ORD-2026-001 到哪里了?"}
    rules = ConversationRules()
    first = [question, call("a", "query_order"), result("a")]
    rules.check(first)
    rules.saw_response(first, call("b", "query_logistics"))
    (found,) = rules.check([question, {"role": "user", "content": "继续"},
                            call("b", "query_logistics"), result("b")])
    assert found.rule == "history-rewritten"
    assert found.message.startswith("2 messages removed (call A and its result): the model loses")
    assert found.text().startswith("删除了 2 条消息（调用 A 及其结果）：模型丢掉了它还没答完的工作")
