"""Step mode's call labels (A, B …) where a command takes a call: Tab offers them, with the
call's tool name beside each, in English and in Chinese; a usage line is said in the chosen
language, as 'help' says it."""

import io

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agentdbg.checker import check_model_request
from agentdbg.engine.session import RunConfig, Session
from agentdbg.options import RunOptions
from agentdbg.providers.offline import OfflineModel
from agentdbg.render.console import PipedConsole
from agentdbg.repl.completion import DebuggerCompleter
from agentdbg.repl.debugger import Debugger

WEATHER_Q = "北京和上海今天哪个更热?"
EMAIL_Q = "给 a@b.com 发一封邮件，主题是“发货通知”，内容是“您的订单已发货”"


def drive(tools, question, *lines, lang="en"):
    session = Session.for_question(OfflineModel(), tools, question,
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=lambda r: check_model_request(r))
    buf = io.StringIO()
    console = PipedConsole(file=buf, width=100, no_color=True, highlight=False)
    options = RunOptions(model_desc="offline", model="offline", provider_name="offline", lang=lang)
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()
        dbg = Debugger(session, console, input=pipe, output=DummyOutput(), history=False,
                       options=options)
        dbg.loop()
    return buf.getvalue(), dbg


def offered(dbg, text: str) -> list[tuple[str, str]]:
    """What Tab offers after ``text``: (completion, the meta shown beside it)."""
    found = DebuggerCompleter(dbg).get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.display_meta_text) for c in found]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tab_offers_the_labels_of_calls_with_their_tool_names(sample_tools, lang):
    out, dbg = drive(sample_tools, WEATHER_Q, "n", lang=lang)
    assert "→ A call_o1  get_weather" in out and "→ B call_o2  get_weather" in out
    for command in ("inject ", "focus ", "rpc ", "i "):
        got = offered(dbg, command)
        assert got[:2] == [("A", "get_weather"), ("B", "get_weather")], (command, got)
        assert ("call_o1", "") in got                      # ids are still offered
    assert offered(dbg, "inject B") == [("B", "get_weather")]
    assert offered(dbg, "focus A") == [("A", "get_weather")]


def test_tab_offers_only_the_labels_of_calls_waiting_for_approval(sample_tools):
    out, dbg = drive(sample_tools, EMAIL_Q, "n", "n", lang="zh")
    assert "之前需要批准" in out
    assert offered(dbg, "approve ") == [("A", "send_email"), ("call_o1", ""), ("all", "")]
    assert offered(dbg, "deny A") == [("A", "send_email")]


def test_a_label_is_not_offered_where_it_names_no_call(sample_tools):
    _, dbg = drive(sample_tools, WEATHER_Q, lang="zh")          # nothing called yet
    assert offered(dbg, "inject ") == [] and offered(dbg, "approve ") == [("all", "")]


def test_tab_completes_what_clear_takes(sample_tools):
    _, dbg = drive(sample_tools, WEATHER_Q, "break tool get_weather")
    assert [t for t, _ in offered(dbg, "clear ")] == ["screen", "breaks", "1"]


def test_a_usage_line_is_said_in_chinese(sample_tools):
    out, _ = drive(sample_tools, WEATHER_Q, "save", "rpc", "inject A", "fail get_weather",
                   "break tool", "break nowhere", "n", "break", lang="zh")
    for said in ("*** 用法：save 路径", "*** 用法：rpc 调用", "*** 用法：inject 调用 类型",
                 "*** 用法：fail 工具 类型 [--sticky]", "*** 用法：break tool 名称",
                 "*** 用法：break tool 名称 | break turn N | break error | break finding"):
        assert said in out, said
    assert "PATH" not in out and "CALL" not in out and "TOOL" not in out and "NAME" not in out


def test_a_file_source_cannot_read_is_said_in_chinese(sample_tools, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin1.txt").write_bytes(b"n\n\xe9\n")
    (tmp_path / "folder").mkdir()
    out, _ = drive(sample_tools, WEATHER_Q, "source missing.txt", "source latin1.txt",
                   "source folder", lang="zh")
    assert "*** missing.txt：无法读取（文件不存在）" in out, out
    assert "*** latin1.txt：无法读取（不是 UTF-8 文本（第 2 字节））" in out, out
    assert "*** folder：无法读取（这是一个文件夹）" in out, out
    assert "No such file" not in out and "Is a directory" not in out
