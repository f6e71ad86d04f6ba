"""Every line step mode folds in Chinese is folded as Chinese is typeset (``render/linebreak``),
not at spaces as Rich folds English: at 80 and 100 columns, through the lessons a class sees
(a blocked request and the API's 400, an approval, a fault, a rewind, the model's notes, the
stopped line, help, glossary, usage).

Each session is rendered twice: at the width under test, and so wide that nothing folds. The
wide screen says which narrow lines are one paragraph folded (their text, spaces aside, is one
wide line), so a line's end can be judged against what came next in the same paragraph:

* no line ends short when the Chinese character starting the next line would have fitted;
* no line ends with a number whose measure word starts the next ("根据 0⏎个");
* no line starts with closing punctuation (），。；：」…) nor ends with opening punctuation;
* no line starts with a JSON string's closing quote (``2级⏎"}``) nor ends on its opening one
  (``"wind": "⏎北风``).
"""

import io
import itertools
import sys
import unicodedata

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.cells import cell_len
from rich.console import Console
from rich.protocol import rich_cast
from rich.text import Text
from test_teach_repl import FakeClock, options, session_for

from agentdbg.render.linebreak import atoms
from agentdbg.render.wrap import CJKText
from agentdbg.repl.debugger import Debugger
from agentdbg.toolspec import bundled_tools_path, load_tools

ORDER_Q = "订单 ORD-2026-001 到哪里了?"
EMAIL_Q = "给 a@b.com 发邮件，主题是“发货通知”，正文是“已发货”"
WEATHER_Q = "北京和上海今天哪个更热?"
NO_SUBJECT_Q = "给 a@b.com 发邮件"     # the model's note says why it calls nothing: 3 notes
LETTER_Q = ("给 a@b.com 发邮件，主题是“发货通知”，正文是“您好，您在本店购买的商品已经由顺丰速运发出，"
            "运单号请在订单详情页查看，预计三个工作日内送达，请注意查收，如有问题请随时联系客服。”")

LESSONS = {
    "order": (ORDER_Q, ("n", "n", "drop 1", "n", "send", "rewind 0", "n", "n", "n",
                        "inject call_o2 timeout", "n", "n", "n", "n", "n", "usage", "glossary")),
    "email": (EMAIL_Q, ("n", "n", "approve", "n", "n", "messages", "help")),
    "letter": (LETTER_Q, ("n", "n", "approve", "n", "n", "messages", "show 1", "show 2")),
    "notes": (NO_SUBJECT_Q, ("n", "n")),
    "weather": (WEATHER_Q, ("n", "inject call_o1 invalid_json", "n", "n", "rewind 0", "n", "n",
                            "drop 1", "n", "send", "back", "focus 1", "help next")),
    "oversized": (WEATHER_Q, ("n", "inject call_o1 oversized", "n", "n", "n")),
}

CLOSING = set("，。、；：？！）」』》】〉’”%％")
OPENING = set("（「『《【〈‘“")
QUOTES = set('"')


class RichFolds(Console):
    """A console that notes each Chinese text Rich would fold its own way (at spaces): a plain
    ``Text`` wider than its room, where it should have been a ``CJKText``."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.folded_by_rich: list[str] = []

    def render(self, renderable, options=None):
        text, room = rich_cast(renderable), (options or self.options)
        if isinstance(text, Text) and not isinstance(text, CJKText) and \
                not (text.no_wrap or room.no_wrap) and any(map(_wide, text.plain)) and \
                max(cell_len(line) for line in text.plain.split("\n")) > room.max_width:
            self.folded_by_rich.append(f"{room.max_width}: {text.plain}")
        return super().render(renderable, options)


def screens(question: str, commands: tuple[str, ...], width: int, spy: list | None = None) -> str:
    buf = io.StringIO()
    console = RichFolds(file=buf, width=width, no_color=True, highlight=False, force_terminal=False)
    session = session_for(load_tools(bundled_tools_path()), question, clock=FakeClock())
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in commands))
        pipe.close()
        Debugger(session, console, input=pipe, output=DummyOutput(), history=False,
                 options=options(lang="zh", explain=True)).loop()
    for name, module in list(sys.modules.items()):   # the sample's outbox: the same e-mail
        if name.endswith("shop") and hasattr(module, "_OUTBOX"):   # is sent, not a duplicate
            module._OUTBOX.clear()
    if spy is not None:
        spy.extend(console.folded_by_rich)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines())


def _bare(text: str) -> str:
    return "".join(text.split())


def paragraphs(narrow: list[str], wide: list[str]) -> list[tuple[list[str], str]]:
    """The runs of narrow lines that are one wide line folded, each with that line. A line
    that is no fold of a wide line (a rule, a box's edge, a line cut with "…") stands alone."""
    out, i = [], 0
    for line in wide:
        for start in range(i, min(i + 4, len(narrow))):
            end = _fold_of(_bare(line), narrow, start)
            if end:
                out.extend(([n], n) for n in narrow[i:start])
                out.append((narrow[start:end], line))
                i = end
                break
    return out + [([n], n) for n in narrow[i:]]


def _fold_of(want: str, narrow: list[str], start: int) -> int:
    """Where the narrow lines from ``start`` that spell ``want`` end (0: they do not)."""
    got, j = "", start
    while j < len(narrow) and got != want and want.startswith(got + _bare(narrow[j])):
        got += _bare(narrow[j])
        j += 1
    return j if got == want and want else 0


def _space_after(line: str, count: int) -> bool:
    """Is there a space in ``line`` after its first ``count`` characters that are not one?"""
    seen = 0
    for k, ch in enumerate(line):
        if not ch.isspace():
            seen += 1
            if seen == count:
                return line[k + 1:k + 2] == " "
    return False


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _head(text: str) -> int:
    """The cells of what must start a line with ``text``'s first character: "（3 条）", "型，"."""
    start, end = atoms(text)[0]
    return cell_len(text[start:end].rstrip())


def faults(text: str, wide_text: str, width: int) -> list[str]:
    """The places where a fold breaks the rules of Chinese typesetting."""
    found = []
    for para, whole in paragraphs(text.splitlines(), wide_text.splitlines()):
        for k, (line, after) in enumerate(itertools.pairwise(para)):
            nxt, end = after.lstrip(), line.rstrip()
            if not nxt or not end or (not line[0].isspace() and after[0].isspace()):
                continue     # a layout, not a fold: each call on a line under "▶ 下一步"
            gap = 1 if _space_after(whole, len(_bare("".join(para[:k + 1])))) else 0
            first, last = nxt[0], end[-1]
            if first in CLOSING:
                found.append(f"starts with closing punctuation: {end!r} / {nxt!r}")
            elif last in OPENING:
                found.append(f"ends with opening punctuation: {end!r} / {nxt!r}")
            elif gap == 0 and first in QUOTES:
                found.append(f"starts with a closing quote: {end!r} / {nxt!r}")
            elif gap == 0 and last in QUOTES:
                found.append(f"ends with an opening quote: {end!r} / {nxt!r}")
            elif last.isdigit() and _wide(first):
                found.append(f"a number split from its measure word: {end!r} / {nxt!r}")
            elif cell_len(end) + gap + _head(nxt) <= width:
                found.append(f"over-short ({cell_len(end)} of {width}) before {first!r}: "
                             f"{end!r} / {nxt!r}")
    return found


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_every_chinese_fold_follows_the_rules(lesson, width):
    question, commands = LESSONS[lesson]
    text = screens(question, commands, width)
    wide = screens(question, commands, 4000)
    assert "第 1 轮" in text and "■ 已停止" in text    # the lesson ran
    assert faults(text, wide, width) == []


@pytest.mark.parametrize("width", [60, 80, 100])
@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_no_chinese_text_is_left_to_rich_to_fold(lesson, width):
    """Wherever it is drawn (a paragraph, a grid's cell, under a table), Chinese text too wide
    for its room is a ``CJKText``: a call's result mark, the usage note, a pretty JSON."""
    question, commands = LESSONS[lesson]
    folded: list[str] = []
    screens(question, commands, width, spy=folded)
    assert folded == []


def test_the_scan_sees_the_faults_it_is_for():
    """The scan itself: each kind of bad fold is caught, a good one is not."""
    wide = "应用把完整历史（3 条消息）发给模型，模型说明：根据 0 个工具结果作答"
    assert faults("应用把完整历史（\n3 条消息）发给模型，模型说明：根据 0 个工具结果作答", wide, 40)
    assert faults("应用把完整历史（3 条消息\n）发给模型，模型说明：根据 0 个工具结果作答", wide, 40)
    assert faults("应用把完整历史（3 条消息）发给模型，模型说明：根据 0\n个工具结果作答", wide, 70)
    assert faults("应用把完整历史（3 条消息）发给\n模型，模型说明：根据 0 个工具结果作答", wide, 70)
    assert faults("应用把完整历史（3 条消息）发给模型，模型说明：根据 0 个工具结\n果作答", wide, 60) == []
    json = '{"city": "北京", "condition": "晴", "wind": "北风 3级"}'
    assert faults('{"city": "北京", "condition": "晴", "wind": "\n北风 3级"}', json, 50)
    assert faults('{"city": "北京", "condition": "晴", "wind": "北风 3级\n"}', json, 50)
    assert faults('{"city": "北京", "condition": "晴", "wind":\n"北风 3级"}', json, 44) == []


def test_the_model_notes_are_joined_as_chinese_is_written():
    """Three notes of the offline model in one turn: joined with "；" in Chinese (a template
    of the catalog), with "; " in English."""
    zh = next(line for line in screens(NO_SUBJECT_Q, ("n",), 4000).splitlines() if "模型说明" in line)
    assert zh.count("；") == 2 and "; " not in zh, zh
    en = io.StringIO()
    console = Console(file=en, width=4000, no_color=True, highlight=False)
    with create_pipe_input() as pipe:
        pipe.send_text("n\r")
        pipe.close()
        Debugger(session_for(load_tools(bundled_tools_path()), "email a@b.com"), console,
                 input=pipe, output=DummyOutput(), history=False,
                 options=options(lang="en", explain=True)).loop()
    note = next(line for line in en.getvalue().splitlines() if "model note" in line)
    assert note.count("; ") == 2 and "；" not in note, note


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
@pytest.mark.parametrize("lesson", ["notes", "order", "oversized"])
def test_a_real_terminal_of_100_columns_folds_as_chinese_is_written(tmp_path, lesson):
    """The reviewer's screens, in a real pseudo-terminal at 100x30: the notes of a turn that
    calls nothing ("根据 0 个…"), a blocked request's finding, the stopped line, the oversized
    fault's result folded (its JSON quotes kept with what they quote)."""
    import re

    import pexpect
    from pty_helpers import commander, zh_step_lesson

    question, commands = LESSONS[lesson]
    commands = commands[:5]
    child, log = zh_step_lesson(tmp_path, question)
    try:
        cmd = commander(child, "(agentdbg)")
        for line in commands:
            cmd(line)
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    seen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[>=()][0-9A-Za-z]?|\r", "", log.getvalue())
    seen = "\n".join(line.rstrip() for line in seen.splitlines())
    said = {"notes": "根据 0 个工具结果作答", "order": "请在结果之前追加发起调用的 assistant",
            "oversized": "2000 个结果"}[lesson]
    assert said in seen.replace("\n", "")
    assert faults(seen, screens(question, commands, 4000), 100) == []


@pytest.mark.parametrize("width", [70, 80, 90, 100])
def test_batch_output_keeps_json_quotes_with_what_they_quote(width):
    """The weather run at 80 columns ended a line on a JSON string's opening quote
    (``"wind": "⏎北风 3级"}``): no line of the batch view ends on an opening quote or starts
    with a closing one."""
    from typer.testing import CliRunner

    from agentdbg.cli import app

    r = CliRunner().invoke(app, ["run", "--lang", "zh", WEATHER_Q], env={"COLUMNS": str(width)})
    lines = [line.strip(" │") for line in r.output.splitlines()]
    assert any('"北风 3级"' in line for line in lines), r.output
    bad = [(a, b) for a, b in itertools.pairwise(lines) if a.endswith((': "', ', "'))
           or (b.startswith('"') and a and not a.endswith((" ", ":", ",", "，", "、")))]
    assert bad == [], bad
