"""The checker's words: each finding says what is wrong on the message it is on, and an
error text quoted from another provider says whose it is."""

import io

import pytest
from test_checker_rules import U, asst, call, tool
from typer.testing import CliRunner

from agentdbg.checker import RULES, check
from agentdbg.cli import app
from agentdbg.render.view import render_finding


def one(messages, profile="openai", **body):
    findings = check({"messages": messages, **body}, profile)
    assert len(findings) == 1, findings
    return findings[0]


@pytest.mark.parametrize("role,content,says", [
    ("tool", 7, "content is an integer; a tool result must be a string: json.dumps it"),
    ("user", 7, "content is an integer; a user message's content must be a string or an array of "
                "content parts"),
    ("system", {"text": "x"}, "content is an object; a system message's content must be a string"),
    ("assistant", True, "content is a boolean; an assistant message's content must be a string"),
    ("user", 1.5, "content is a decimal; a user message's content"),
])
def test_wrong_content_type_fits_the_role_it_is_on(role, content, says):
    messages = [U, asst(call("a")), tool("a", content=content)] if role == "tool" else \
        [{"role": role, "content": content}]
    f = one(messages)
    assert f.rule == "content-wrong-type" and f.message.startswith(says)
    assert "a int" not in f.message
    assert role == "tool" or "tool result" not in f.message
    assert f.api_error.endswith(f"but got {f.message.split(';')[0].split(' is ')[1]} instead.")


def test_duplicate_ids_say_which_provider_rejects_them():
    messages = [U, asst(call("a"), call("a", args='{"city": "上海"}')), tool("a")]
    f = one(messages)
    assert f.api_source == "Anthropic" and f.api_error == "messages.1.content.1: tool_use ids must be unique"
    assert "OpenAI has no recorded error for it" in f.message
    shown = str(render_finding(f))
    assert "Anthropic says: messages.1.content.1: tool_use ids must be unique" in shown
    assert "API says" not in shown
    behind = one(messages, "anthropic-proxy")
    assert behind.api_source is None and "OpenAI has no recorded error" not in behind.message
    assert "API says: messages.1.content.1" in str(render_finding(behind))


def test_cross_turn_id_reuse_quotes_minimax_as_minimax():
    f = one([U, asst(call("a")), tool("a"), asst(call("a")), tool("a")])
    assert f.severity == "warning" and f.api_source == "MiniMax"
    assert f.api_error == "invalid params, duplicate tool_call id: a"
    assert "MiniMax says: invalid params" in str(render_finding(f))
    behind = one([U, asst(call("a")), tool("a"), asst(call("a")), tool("a")], "anthropic-proxy")
    assert behind.severity == "error" and behind.api_source is None
    assert behind.api_error == "messages.3.content.0: tool_use ids must be unique"


@pytest.mark.parametrize("args,rule,text", [
    ('{"city": "北京"', "arguments-invalid-json", "Expecting ',' delimiter: line 1 column 14 (char 13)"),
    ('"北京"', "arguments-not-object", "'str' object has no attribute 'items'"),
])
def test_broken_arguments_are_warnings_under_openai_and_errors_where_rejected(args, rule, text):
    messages = [U, asst(call("a", args=args)), tool("a", '{"ok": false, "error": {"type": "invalid_json"}}')]
    f = one(messages)
    assert (f.rule, f.severity, f.api_error, f.api_source) == (rule, "warning", text, "vLLM")
    assert "OpenAI accepts the history" in f.message
    assert f"vLLM says: {text}" in str(render_finding(f))  # not presented as OpenAI's words
    for profile in ("vllm", "qwen"):
        f = one(messages, profile)
        assert f.severity == "error" and f"the {profile} server rejects" in f.message
    assert one(messages, "vllm").api_source is None  # vLLM's own text under the vllm profile
    assert one(messages, "qwen").api_source == "vLLM"
    assert RULES[rule].severity == "warning"


def test_results_out_of_order_quote_bedrock():
    f = one([U, asst(call("a"), call("b")), tool("b"), tool("a")], "positional")
    assert f.api_source == "Bedrock" and "Bedrock says: Expected toolResult" in str(render_finding(f))


def test_an_empty_messages_array_is_reported():
    f = one([])
    assert (f.rule, f.severity, f.index) == ("empty-messages", "error", None)
    assert f.api_error == ("Invalid 'messages': empty array. Expected an array with minimum length "
                           "1, but got an empty array instead.")
    assert RULES["empty-messages"].scope == "chat"


def test_check_cli_reports_an_empty_array_and_says_who_says_it(tmp_path):
    p = tmp_path / "empty.json"
    p.write_text("[]")
    r = CliRunner().invoke(app, ["check", str(p)])
    assert r.exit_code == 1 and "✗ error empty-messages" in r.stdout
    assert "no findings" not in r.stdout
    r = CliRunner().invoke(app, ["check", str(p), "--json"])
    assert '"rule": "empty-messages"' in r.stdout
    p.write_text('[{"role": "user", "content": "q"}, {"role": "assistant", "content": null, '
                 '"tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", '
                 '"arguments": "{\\"x\\": 1"}}]}, {"role": "tool", "tool_call_id": "a", '
                 '"content": "{}"}]')
    r = CliRunner().invoke(app, ["check", str(p), "--json"])
    assert r.exit_code == 0 and '"api_source": "vLLM"' in r.stdout  # a warning under openai
    r = CliRunner().invoke(app, ["check", str(p), "--profile", "vllm"])
    assert r.exit_code == 1 and "✗ error arguments-invalid-json" in r.stdout


def test_the_view_and_the_findings_name_json_kinds_in_english():
    from rich.console import Console

    from agentdbg.render.view import render_messages

    messages = [U, {"role": "user", "content": 7}, asst(call("a", args='[1]')), tool("a"),
                {"role": "assistant", "content": None}]
    findings = check({"messages": messages}, "openai")
    console = Console(width=100, no_color=True, record=True, file=io.StringIO())
    console.print(render_messages(messages, findings=findings))
    shown = console.export_text() + "\n".join(f.message for f in findings)
    assert "(content is an integer)" in shown and "arguments parse to an array" in shown
    assert "on an assistant message" in shown
    for python_word in ("a int", "a dict", "a bool", "a list", "a assistant"):
        assert python_word not in shown
