"""Golden renders of the messages view, escaping of hostile text, 80 columns, no colour.

Regenerate the golden files with UPDATE_GOLDEN=1 after an intended change, and read the diff.
"""

import io
import json
import os
import re
from pathlib import Path

import pytest
from rich.console import Console
from test_checker_rules import U, asst, call, tool
from typer.testing import CliRunner

from agentdbg.checker import check
from agentdbg.cli import app
from agentdbg.render.view import render_messages

GOLDEN = Path(__file__).parent / "golden"


def render(renderable, width=100, color=False) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=not color, color_system="truecolor" if color else None,
                      force_terminal=color, highlight=False)
    console.print(renderable)
    return buf.getvalue()


def normalise(text: str) -> str:
    text = re.sub(r"\d+(\.\d+)? ms", "<t> ms", text)
    text = re.sub(r"transcript: .*", "transcript: <path>", text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing; UPDATE_GOLDEN=1 writes it (then read it)"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs; UPDATE_GOLDEN=1 to accept"


def view(messages, profile="openai"):
    return normalise(render(render_messages(messages, findings=check(messages, profile))))


def test_golden_clean_run():
    r = CliRunner().invoke(app, ["run", "订单 ORD-2026-001 到哪里了?"], env={"COLUMNS": "100"})
    assert r.exit_code == 0
    golden("clean_run", normalise(r.stdout))


def test_golden_orphan_tool_message():
    golden("orphan", view([{"role": "system", "content": "你是一个智能助手"}, U,
                           tool("call_abc123", '{"temperature": 26, "condition": "小雨"}')]))


def test_golden_missing_response():
    golden("missing_response", view([U, asst(call("call_1"), call("call_2", args='{"city": "上海"}')),
                                      tool("call_1"), {"role": "user", "content": "然后呢?"}]))


def test_golden_parallel_answered_out_of_order():
    msgs = [U, asst(call("call_1"), call("call_2", args='{"city": "上海"}')),
            tool("call_2", '{"temperature": 29}'), tool("call_1", '{"temperature": 24}'),
            {"role": "assistant", "content": "上海更热。"}]
    text = view(msgs)
    assert "✓ answers [1]" in text and "error" not in text  # OpenAI binds by id
    golden("parallel_out_of_order", text)
    golden("parallel_out_of_order_positional", view(msgs, "positional"))


HOSTILE = ("[bold red]PWNED[/bold red] [link=https://evil.example]click[/link] "
           "\x1b[31mred\x1b[0m \x1b[2J\x1b[H \x1b]0;title\x07 \x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\ "
           "\x1b]52;c;ZWNobyBoaQ==\x07 a\rb c\bd \u202eevil\u202c zero\u200bwidth")


@pytest.mark.parametrize("color", [False, True])
def test_hostile_text_is_shown_literally(color):
    msgs = [U, asst(call("c1", name="x", args=json.dumps({"q": HOSTILE}))), tool("c1", HOSTILE),
            {"role": "assistant", "content": HOSTILE}]
    out = render(render_messages(msgs, findings=check(msgs)), color=color)
    assert "[bold red]PWNED[/bold red]" in out and "[link=https://evil.example]" in out
    for raw in ("\x1b[31mred", "\x1b[2J", "\x1b]0;", "\x1b]8;;https://evil", "\x1b]52", "\r", "\b",
                "\u202e", "\u200b", "\x07"):
        assert raw not in out, repr(raw)
    for shown in ("\\x1b[31m", "\\x1b]52;c;", "\\x0d", "\\x08", "\\u202e", "\\u200b", "\\x07"):
        assert shown in out, shown


def test_hostile_text_in_check_cli_and_errors(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"role": "tool", "tool_call_id": HOSTILE, "content": HOSTILE}]))
    r = CliRunner().invoke(app, ["check", str(p)])
    assert "\x1b" not in r.stdout and "[bold red]PWNED" in r.stdout
    p.write_text(json.dumps([{"role": "\x1b]52;c;x\x07", "content": "x"}]))
    r = CliRunner().invoke(app, ["check", str(p)])
    assert r.exit_code == 2 and "\x1b" not in r.stderr and "\\u001b]52" in r.stderr


def test_fits_80_columns_and_folds_long_content():
    big = "杭州" * 2000
    msgs = [U, asst(call("call_1")), tool("call_1", big)]
    out = render(render_messages(msgs), width=80)
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "more characters hidden (--full shows all)" in out
    full = render(render_messages(msgs, full=True), width=80)
    assert full.count("杭州") > 1900


def test_new_messages_are_marked():
    out = render(render_messages([U, asst(call("a")), tool("a")], new_from=1))
    lines = [ln for ln in out.splitlines() if ln.strip().startswith(("+", "["))]
    assert lines[0].lstrip().startswith("[0]") and lines[1].startswith("+ [1]")
