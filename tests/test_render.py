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


def batch_run(question, width=80, full=False, model=None, tools=None):
    """``agentdbg run``'s view of a whole run, as an 80-column terminal shows it."""
    from agentdbg.drivers.batch import run_batch
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.options import RunOptions
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import load_tools

    session = Session.for_question(model or OfflineModel(), tools or load_tools(
        Path(__file__).parent.parent / "tools.yaml"), question, RunConfig())
    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=True, highlight=False)
    run_batch(session, console, RunOptions(model_desc="offline", model="offline",
                                           provider_name="offline", offline=True, full=full))
    return normalise(buf.getvalue())


def test_golden_batch_view_at_80_columns():
    """Each turn shows the whole array: messages shown before as one line each (role, label,
    pairing status, preview), new ones in full."""
    out = batch_run("订单 ORD-2026-001 到哪里了?")
    golden("batch_view_80", out)
    turn3 = out.split("turn 3 ─")[1]
    assert "  [1] assistant → A query_order   ✓ answered at [2]" in turn3
    assert turn3.count('{"order_id": "ORD-2026-001"}') == 0  # not redrawn in full
    assert all(len(line) <= 80 for line in out.splitlines() if not line.startswith("usage:"))


def test_full_keeps_every_message_in_full_every_turn():
    out = batch_run("订单 ORD-2026-001 到哪里了?", full=True)
    assert out.count('{"order_id": "ORD-2026-001"}') == 3  # turns 1, 2 and 3
    assert len(out.splitlines()) > len(batch_run("订单 ORD-2026-001 到哪里了?").splitlines()) + 15


def test_seen_lines_stay_one_line_and_keep_their_findings_in_one_line():
    from support import scripted

    model = scripted({"tool_calls": [{"name": "get_weather", "id": "w1",
                                      "arguments": '{"city": "北京"'}]},
                     {"tool_calls": [{"name": "get_weather", "id": "w2",
                                      "arguments": {"city": "上海"}}]}, {"content": "好"})
    out = batch_run("北京和上海?", model=model)
    lines = out.split("turn 3 ─")[1].splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  [1] assistant"))
    assert "→ A get_weather   ✓ answered at [2]" in lines[at]
    assert lines[at + 1].strip().startswith("! warning arguments-invalid-json:")
    assert lines[at + 2].startswith("  [2] tool") and lines[at + 2].endswith("…")


LONG_ARGS = {"to": "customer@example.com", "subject": "您的订单 ORD-2026-001 已发货",
             "body": "您好，您的订单已由顺丰发出，物流单号 SF123456，预计两天内送达。如有问题请回复本邮件。",
             "idempotency_key": "order-ORD-2026-001-shipped"}


def test_golden_long_arguments_are_aligned_at_80_columns():
    msgs = [U, asst(call("call_1", name="send_email", args=json.dumps(LONG_ARGS, ensure_ascii=False)))]
    out = normalise(render(render_messages(msgs, in_progress=True), width=80))
    golden("long_arguments_80", out)
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith("{"))
    block = lines[start:next(i for i in range(start, len(lines)) if lines[i].strip() == "}") + 1]
    indents = {len(line) - len(line.lstrip()) for line in block if not line.lstrip().startswith('"')}
    assert indents == {20}, block  # "{", "}" and wrapped lines share the arguments' column
    assert {len(line) - len(line.lstrip()) for line in block if line.lstrip().startswith('"')} == {22}


@pytest.mark.parametrize("color", [False, True])
def test_a_console_told_a_secret_never_writes_it_even_wrapped_in_a_box(color):
    from rich.panel import Panel
    from rich.text import Text

    from agentdbg.render.console import ScrubbingConsole

    secret = "tok-3f9a8b7c6d5e4f3a2b1c"
    buf = io.StringIO()
    console = ScrubbingConsole(file=buf, width=30, force_terminal=color, color_system="standard"
                               if color else None, highlight=False)
    console.hide([secret, "x"])              # too short to be a secret: left alone
    console.print(Panel(Text("the token is " + secret + " ok", style="green")))   # wraps inside
    console.print(Text(f"x marks {secret}"), soft_wrap=True)
    out = buf.getvalue()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert secret not in re.sub(r"[\s│╭╮╰╯─]", "", plain)      # not whole, not in pieces
    assert plain.count("[REDACTED]") == 2 and "x marks" in plain
