"""Where Python's JSON parser stopped ('Expecting ',' delimiter: line 1 column 14 (char 13)') is
said in the chosen language wherever agentdbg shows it: a finding on broken arguments (live and
read back from a recording), step mode's 'edit' and a custom fault; what is recorded and
--json keep the parser's English."""

import io
import json
import re
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from agentdbg import i18n
from agentdbg.checker import check_model_request
from agentdbg.cli import app
from agentdbg.engine.session import RunConfig, Session
from agentdbg.i18n import json_problem, recorded, tr
from agentdbg.options import RunOptions
from agentdbg.providers.offline import OfflineModel
from agentdbg.render.console import PipedConsole
from agentdbg.repl.debugger import Debugger

EXAMPLE = Path(__file__).parent.parent / "examples" / "parallel_missing.json"
ENGLISH = "Expecting ',' delimiter: line 1 column 14 (char 13)"


@pytest.mark.parametrize("text", ['', '{"a" 1}', '{"a": 1 "b"}', '{a: 1}', '"abc', '"a\x01"',
                                  '"\\q"', '"\\u12"', '1 2', '[1,]', '{"a":'])
def test_every_parser_problem_is_said_in_chinese_and_stays_english_as_text(text):
    with pytest.raises(ValueError) as caught:
        json.loads(text)
    said = json_problem(caught.value)
    assert str(said) == str(caught.value)              # what is recorded: the parser's words
    i18n.use("zh")
    try:
        chinese = tr(said)
    finally:
        i18n.use("en")
    assert "line" not in chinese and "Expecting" not in chinese and "行" in chinese, chinese


def test_check_says_where_the_arguments_broke_in_chinese_and_json_keeps_english():
    said = CliRunner().invoke(app, ["check", "--lang", "zh", str(EXAMPLE)]).output
    flat = re.sub(r"\s*\n\s*", "", said)                     # folded at 80 columns
    assert "arguments 不是合法的 JSON（这里应该有分隔符 ','：第 1 行第 14 列（字符 13））" in flat, said
    assert "Expecting" not in said.split("vLLM 的原话")[0]      # the API's own words stay verbatim
    doc = json.loads(CliRunner().invoke(app, ["check", "--lang", "zh", "--json", str(EXAMPLE)]).output)
    messages = [f["message"] for f in doc["findings"] if f["rule"] == "arguments-invalid-json"]
    assert messages and all(ENGLISH in m for m in messages)


def test_a_recorded_finding_reads_back_in_chinese():
    i18n.use("zh")
    try:
        said = recorded(f"tool_calls[1] arguments are not valid JSON ({ENGLISH})", nested=True)
    finally:
        i18n.use("en")
    assert said == "tool_calls[1] 的 arguments 不是合法的 JSON（这里应该有分隔符 ','：第 1 行第 14 列（字符 13））"


def test_step_modes_edit_and_a_custom_fault_say_the_parser_in_chinese(sample_tools, tmp_path, monkeypatch):
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf '{\"role\": \"user\" \"content\": 1}' > \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    session = Session.for_question(OfflineModel(), sample_tools, "北京和上海今天哪个更热?",
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=lambda r: check_model_request(r))
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("edit 0\rn\rinject A {\"city\" 1}\r")
        pipe.close()
        Debugger(session, PipedConsole(file=buf, width=100, no_color=True, highlight=False),
                 input=pipe, output=DummyOutput(), history=False,
                 options=RunOptions(model_desc="offline", model="offline", provider_name="offline",
                                    lang="zh")).loop()
    out = buf.getvalue()
    assert "*** 不是合法的 JSON（这里应该有分隔符 ','：第 1 行第 17 列（字符 16））；消息未做修改" in out, out
    assert "这里应该有分隔符 ':'：第 1 行第 9 列（字符 8）" in out, out
    assert "Expecting" not in out
