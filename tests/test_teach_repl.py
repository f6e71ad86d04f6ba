"""Step mode for a class: Chinese screens, narration of every phase, the presenter view, focus,
back, lessons prepared once (-c, source, lesson files), replays through recorded rewinds."""

import io
import json
import os
import re
import subprocess
import sys

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from agentdbg.checker import check_model_request
from agentdbg.cli import app
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.options import RunOptions
from agentdbg.providers.factory import make_provider
from agentdbg.render.console import PipedConsole
from agentdbg.repl.debugger import Debugger

ORDER_Q = "订单 ORD-2026-001 到哪里了?"
WEATHER_Q = "北京和上海今天哪个更热?"


class FakeClock:
    """A clock that moves 1 ms each time it is read: the same session, the same times."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        self.now += 0.001
        return self.now


def session_for(tools, question=ORDER_Q, clock=None, **config):
    provider = make_provider(None).provider
    return Session.for_question(provider, tools, question,
                                RunConfig(approve="ask", stop_on_invalid=False, **config),
                                precheck=lambda r: check_model_request(r),
                                **({"clock": clock} if clock else {}))


def drive(session, *lines, width=100, console=None, **kw):
    buf = io.StringIO()
    console = console or PipedConsole(file=buf, width=width, no_color=True, highlight=False)
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()
        dbg = Debugger(session, console, input=pipe, output=DummyOutput(), history=False, **kw)
        dbg.loop()
    return buf.getvalue(), dbg


def options(**kw):
    return RunOptions(model_desc="offline", model="offline", provider_name="offline", **kw)


# -- Chinese screens and narration ----------------------------------------------------------

def test_step_mode_in_chinese_says_every_line_in_chinese(sample_tools):
    out, _ = drive(session_for(sample_tools), "n", "n", "break tool query_logistics", "fail get_weather timeout",
                   "drop 9", "frobnicate", "n", "help", options=options(lang="zh", explain=True))
    for said in ("▶ 下一步：带着 1 条消息询问模型（第 1 轮）", "… 等待执行", "模型说明：",
                 "（消息 0–1 未变；'messages' 显示全部）", "▶ 下一步：执行 1 个调用：",
                 "断点 1：在调用 query_logistics 之前", "get_weather 的下一次调用会返回故障 timeout",
                 "*** 没有第 9 条消息；消息编号为 0..2", "*** 未知命令 'frobnicate'", "命令（'help 命令'",
                 "✓ 回答 [1]"):
        assert said in out, said
    for english in ("▶ next", "pending execution", "model note", "unchanged", "breakpoint 1",
                    "no message 9", "unknown command"):
        assert english not in out, english


def narration(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("应用", "模型", "未发送", "你", "API",
                                                                  "回到", "最后", "有一个", "循环"))]


def test_after_a_blocked_request_the_narration_never_says_it_was_sent(sample_tools):
    out, _ = drive(session_for(sample_tools), "n", "n", "drop 1", "n", options=options(lang="zh", explain=True))
    after_block = out.split("未发送：请求违反协议")[1]
    said = narration(after_block)[0]
    assert said.startswith("未发送：检查器发现历史违反了 API 强制执行的规则") and "模型什么也没看到" in said
    assert "再发给模型" not in said and "发给模型" not in said


def test_narration_for_faults_tool_errors_and_history_changes(sample_tools):
    out, _ = drive(session_for(sample_tools), "n", "inject call_o1 not_found", "n", "rewind 0",
                   "n", "retry", options=options(lang="zh", explain=True))
    assert "你注入的故障代替了 query_order 自己的结果" in out
    assert "query_order (not_found) 失败了：应用用一条错误结果回答这个调用" in out
    assert "你截断了第 0 条消息之后的历史" in out
    assert "最后一条 assistant 消息及其结果已被移除" in out
    assert "逐个" not in out   # the calls run once, not "one by one, then in parallel"


# -- turns and usage follow the history -----------------------------------------------------

def test_after_a_rewind_the_next_request_is_not_turn_4(sample_tools):
    out, dbg = drive(session_for(sample_tools), "c", "rewind 1", "usage")
    s = dbg.session
    assert "▶ next: execute 1 call(s)" in out.split("rewound to message 1")[1]
    assert [t.turn for t in s.turns] == [1] and len(s.cut_turns) == 2
    assert "total: " in out and " tokens over 1 request(s)" in out.split("rewound to message 1")[1]
    assert "and 2 request(s) whose replies were cut from the history" in out
    out, dbg = drive(session_for(sample_tools), "c", "rewind 2", "n")
    assert "turn 2 ─" in out.split("rewound to message 2")[1] and "turn 4" not in out


# -- the presenter view, focus, NO_COLOR --------------------------------------------------------

def colour_console(buf, **kw):
    from agentdbg.render.console import ScrubbingConsole

    console = ScrubbingConsole(file=buf, width=100, force_terminal=True, color_system="truecolor",
                               highlight=False, **kw)
    return console


def test_the_presenter_view_has_no_dim_or_italic_text_and_a_one_line_header(sample_tools):
    buf = io.StringIO()
    console = colour_console(buf)
    console.plain_styles = True
    drive(session_for(sample_tools), "n", "n", "n", console=console,
          options=options(present=True, explain=True))
    out = buf.getvalue()
    codes = set(re.findall(r"\x1b\[([0-9;]*)m", out))
    attrs = {p for c in codes for p in c.split(";")}
    assert "2" not in attrs and "3" not in attrs, codes      # SGR 2 dim, 3 italic
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert "╭" not in plain and plain.splitlines()[0].startswith("agentdbg run · offline")
    assert "  [0–2] user · assistant →A · tool ←A ✓" in plain   # the rest, in one line
    buf = io.StringIO()
    drive(session_for(sample_tools), "n", console=colour_console(buf), options=options(explain=True))
    codes = {p for c in re.findall(r"\x1b\[([0-9;]*)m", buf.getvalue()) for p in c.split(";")}
    assert "2" in codes and "3" in codes   # the ordinary view does use them: the test can fail


def test_no_color_means_no_colour_codes(sample_tools, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    buf = io.StringIO()
    console = colour_console(buf)
    drive(session_for(sample_tools), "n", console=console, options=options(present=True))
    colours = [c for c in re.findall(r"\x1b\[([0-9;]*)m", buf.getvalue())
               if re.search(r"(^|;)(3[0-7]|38|9[0-7]|4[0-7]|48)(;|$)", c)]
    assert not colours


def test_focus_a_message_or_a_call_and_its_result(sample_tools):
    out, _ = drive(session_for(sample_tools), "c", "focus B", "focus 2", "focus Z")
    focused = [line for line in out.splitlines() if line.startswith("▶ [")]
    assert [line[:6] for line in focused] == ["▶ [3] ", "▶ [4] ", "▶ [2] "]
    assert "*** no message or call 'Z'" in out


# -- back -----------------------------------------------------------------------------------------

class Counting:
    name = "counting"

    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def complete(self, request):
        self.calls += 1
        return self.inner.complete(request)


def test_back_returns_to_the_phase_before_and_runs_nothing(sample_tools):
    s = session_for(sample_tools)
    counting = Counting(s.provider)
    s.provider = counting
    out, _dbg = drive(s, "n", "n", "n", "back", "back")
    assert counting.calls == 2 and len(s.messages) == 2         # back over turn 2, then over the result
    assert [a["action"] for a in s.actions] == ["back", "back"]
    last = out.split("back: messages 0–1")[1]
    assert "▶ next: execute 1 call(s): call_o1 query_order" in last   # the pending call is back
    out, _ = drive(session_for(sample_tools), "back")
    assert "*** nothing to go back to" in out
    out, _ = drive(session_for(sample_tools), "n", "n", "drop 1", "back")
    assert "*** the history was changed since the last step" in out


# -- commands prepared: -c, source, lessons -------------------------------------------------------

def test_dash_c_runs_commands_at_the_start(tmp_path):
    r = CliRunner().invoke(app, ["run", ORDER_Q, "-c", "n", "-c", "break tool query_logistics",
                                 "-c", "continue", "-c", "quit"])
    assert r.exit_code == 130, r.output   # quit before the end: cancelled
    assert "(agentdbg) break tool query_logistics" in r.output
    assert "breakpoint 1 hit: before a call of query_logistics" in r.output


def test_source_runs_a_file_of_commands(sample_tools, tmp_path):
    cmds = tmp_path / "cmds.txt"
    cmds.write_text("# warm up\nn\n\nbreak turn 3\ncontinue\n", encoding="utf-8")
    out, _dbg = drive(session_for(sample_tools), f"source {cmds}")
    assert "(agentdbg) break turn 3" in out and "breakpoint 1 hit: before model turn 3" in out
    out, _ = drive(session_for(sample_tools), f"source {tmp_path / 'none.txt'}")
    assert "none.txt: cannot read it" in out


LESSON = """\
title: 订单在哪里
question: 订单 ORD-2026-001 到哪里了?
options: {lang: zh, explain: true}
breakpoints:
  - tool: query_logistics
    note: 第二个调用用上了第一个结果里的 tracking_no
injections:
  - fail: query_logistics
    kind: timeout
    note: 超时是可重试的错误
steps:
  - next
  - do: next
    note: 看 tool_call_id 怎样把结果和调用配对
    pause: true
  - continue
  - continue
  - continue
  - rewind 2
  - do: drop 1
    note: 删掉 assistant 消息，结果就成了孤立的
    pause: true
  - next
  - send
exercises:
  - 为什么 drop 1 之后 API 返回 400？
"""


def load_lesson(path):
    from agentdbg.repl.lesson import load_lesson as load

    return load(path)


def run_lesson(tools, path, *lines):
    lesson = load_lesson(path)
    s = session_for(tools, lesson.question, clock=FakeClock())
    return drive(s, *lines, lesson=lesson, options=options(lang="zh", explain=True, question=lesson.question))


def test_a_lesson_runs_its_steps_to_each_pause_with_its_notes(sample_tools, tmp_path):
    path = tmp_path / "lesson.yaml"
    path.write_text(LESSON, encoding="utf-8")
    out, dbg = run_lesson(sample_tools, path, "", "", "", "")
    assert "课程：订单在哪里" in out
    first_pause = out.index("（课程暂停，下一步：next")
    assert "✎ 看 tool_call_id 怎样把结果和调用配对" in out[:first_pause + 200]
    assert "✎ 第二个调用用上了第一个结果里的 tracking_no" in out   # the breakpoint's note
    assert "✎ 超时是可重试的错误" in out                             # the fault's note
    assert "（课程暂停，下一步：drop 1" in out
    assert "API 拒绝了这个请求（HTTP 400）" in out                   # send: the real 400, offline
    assert dbg.session.stop_reason is StopReason.MODEL_ERROR


def test_the_same_lesson_runs_twice_with_identical_screens(sample_tools, tmp_path):
    path = tmp_path / "lesson.yaml"
    path.write_text(LESSON, encoding="utf-8")
    first, _ = run_lesson(sample_tools, path, "", "", "", "")
    second, _ = run_lesson(sample_tools, path, "", "", "", "")
    assert first == second and "毫秒" in first


def test_a_lesson_file_with_a_mistake_is_one_line_naming_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("question: q\nsteps:\n  - next\nbreakpoints:\n  - tool: [1, 2]\n  - sometimes\n",
                    encoding="utf-8")
    r = CliRunner().invoke(app, ["run", "--lesson", str(path)])
    assert r.exit_code == 2
    assert re.search(r"agentdbg: error: .*bad\.yaml:6: breakpoints: 'sometimes'", r.output), r.output
    path.write_text("question: q\ntools: my_tools.yaml\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["run", "--lesson", str(path)])
    assert r.exit_code == 2 and "pass them with --tools (a lesson never loads code by itself)" in r.output


def test_lesson_writes_the_session_as_a_lesson_that_runs(sample_tools, tmp_path):
    target = tmp_path / "saved.yaml"
    out, _ = drive(session_for(sample_tools), "n", "break tool query_logistics", "n", "c",
                   f"lesson {target}")
    assert f"lesson written to {target}" in out
    lesson = load_lesson(target)
    assert lesson.question == ORDER_Q and [s.command for s in lesson.steps] == ["n", "n", "c"]
    assert lesson.breakpoints == [("tool", "query_logistics", "")]
    r = CliRunner().invoke(app, ["run", "--lesson", str(target)], input="\n\n\nquit\n")
    assert "breakpoint 1 hit: before a call of query_logistics" in r.output


def test_piped_commands_are_shown_once(tmp_path):
    env = {**os.environ, "AGENTDBG_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "COLUMNS": "100"}
    r = subprocess.run([sys.executable, "-m", "agentdbg", "run", "--step", ORDER_Q],
                       input="n\nusage\nquit\n", capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=60)
    assert r.stdout.count("(agentdbg) n\n") == 1 and r.stdout.count("(agentdbg) usage") == 1
    assert "not a terminal" not in r.stderr + r.stdout
    assert "(agentdbg) n            (agentdbg) n" not in r.stdout


# -- replay through recorded rewinds, and what changed since it was shown ---------------------------

def recording_with_a_rewind(tmp_path):
    rec = tmp_path / "rec.jsonl"
    r = CliRunner().invoke(app, ["run", ORDER_Q, "--step", "--save", str(rec)],
                           input="c\nrewind 2\nn\ninject call_o2 not_found\nc\nquit\n")
    assert r.exit_code == 0, r.output
    return rec


def step_replay(path, *lines):
    from agentdbg.engine.replaying import Replay, replay_session

    session, model = replay_session(path, precheck=check_model_request)
    session.config.stop_on_invalid = False
    out, _ = drive(session, *lines, width=120, replay=Replay(session, model))
    return session, out


def test_replay_continues_through_a_recorded_rewind(tmp_path):
    rec = recording_with_a_rewind(tmp_path)
    session, out = step_replay(rec, "c")
    assert session.stop_reason is StopReason.COMPLETED
    assert "the recording does this next, as recorded: rewind 2" in out
    assert "inject call_o2 not_found" in out and "not_found" in session.messages[4]["content"]
    assert out.count("■ stopped: completed") == 2    # the first end, then the end after the rewind


def test_what_a_replayed_rewind_replaced_is_never_called_unchanged(tmp_path):
    rec = recording_with_a_rewind(tmp_path)
    _, out = step_replay(rec, "c")
    after = out.split("as recorded: rewind 2")[1]
    assert "(messages 3–5 were cut from the history)" in after
    shown = after.index("[3] assistant")            # the new [3] is shown in full before anything
    assert "(messages 0–3 unchanged" not in after[:shown]   # calls 0–3 unchanged


# -- faults fit their tool ----------------------------------------------------------------------

def test_invalid_json_is_the_tools_own_result_cut_short(sample_tools):
    s = session_for(sample_tools, WEATHER_Q)
    s.step()
    s.inject("call_o1", __import__("agentdbg.engine.faults", fromlist=["Fault"]).Fault("invalid_json"))
    s.step()
    content = s.messages[2]["content"]
    assert content.startswith('{"city": "北京", "temperature": 24') and "tracking_no" not in content
    with pytest.raises(ValueError):
        json.loads(content)
    assert s.outcome_at[2].injected


def test_the_oversized_fault_is_folded_on_screen(sample_tools):
    out, _ = drive(session_for(sample_tools, WEATHER_Q), "n", "inject call_o1 oversized", "n")
    view = out.split("(agentdbg) n")[-1]
    lines = view.splitlines()
    start = next(i for i, line in enumerate(lines) if "← A call_o1" in line)
    end = next(i for i, line in enumerate(lines) if i > start and "more characters hidden" in line)
    assert end - start <= 4, "\n".join(lines[start:end + 1])   # ~3 rows, then "… N more characters"
    assert '"results": [{"city": "北京"' in view


def test_the_report_page_is_readable_by_the_group(tmp_path):
    rec = tmp_path / "runs" / "rec.jsonl"
    rec.parent.mkdir()
    assert CliRunner().invoke(app, ["run", ORDER_Q, "--save", str(rec)]).exit_code == 0
    page = tmp_path / "page.html"
    assert CliRunner().invoke(app, ["report", str(rec), "-o", str(page)]).exit_code == 0
    assert oct(page.stat().st_mode & 0o777) == oct(0o644 & ~current_umask())
    rec.parent.chmod(0o700)    # a private runs folder keeps its page private
    assert CliRunner().invoke(app, ["report", str(rec), "-o", str(page)]).exit_code == 0
    assert oct(page.stat().st_mode & 0o777) == oct(0o600)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_lessons_recording_replays_to_the_same_end_through_its_rewind(tmp_path):
    from agentdbg.transcript import load_transcript
    from agentdbg.transcript.events import Action

    path = tmp_path / "lesson.yaml"
    path.write_text(LESSON, encoding="utf-8")
    rec = tmp_path / "lesson.jsonl"
    r = CliRunner().invoke(app, ["run", "--lesson", str(path), "--save", str(rec)], input="\n\n\n\nquit\n")
    assert r.exit_code == 7, r.output            # the lesson ends on the API's 400: model_error
    recorded = load_transcript(rec)
    assert [e.action for e in recorded.events if isinstance(e, Action)] == [
        "fail", "rewind", "drop", "send"]
    # as live: 'c' stops at the broken history the recorded drop leaves, then at the blocked
    # request (a phase of its own); the third goes on with the recorded send
    session, out = step_replay(rec, "c", "c", "c")
    assert session.stop_reason is StopReason.MODEL_ERROR
    assert session.messages == recorded.final_messages()
    assert "as recorded: rewind 2" in out and "as recorded: drop 1" in out and "HTTP 400" in out


def test_a_recorded_back_replays_and_reports(tmp_path):
    rec = tmp_path / "back.jsonl"
    r = CliRunner().invoke(app, ["run", ORDER_Q, "--step", "--save", str(rec)],
                           input="n\nn\nn\nback\nback\nc\nquit\n")
    assert r.exit_code == 0 and r.output.count("back: messages 0–") == 2, r.output
    replayed = CliRunner().invoke(app, ["replay", str(rec)])
    assert replayed.exit_code == 0, replayed.output     # re-applied as recorded, to the same end
    page = tmp_path / "back.html"
    assert CliRunner().invoke(app, ["report", str(rec), "-o", str(page)]).exit_code == 0
    assert "you went back to message [1], re-running nothing" in page.read_text(encoding="utf-8")


def test_after_a_rewind_and_a_drop_report_and_replay_count_what_was_sent(tmp_path):
    """Three requests (two whose replies a rewind and a drop cut, then the 400): the report
    counts the turn the screen last numbered, not 0; the batch replay's usage counts the tokens
    of every request it replayed, as the report does, not 0 over 1 request."""
    rec = tmp_path / "r.jsonl"
    r = CliRunner().invoke(app, ["run", ORDER_Q, "--step", "--lang", "zh", "--save", str(rec)],
                           input="next\nnext\nnext\nrewind 1\nnext\ndrop 1\nnext\nsend\nquit\n")
    assert "第 1 轮" in r.output.split("(agentdbg) drop 1")[1], r.output
    page = tmp_path / "r.html"
    made = CliRunner().invoke(app, ["report", str(rec), "-o", str(page), "--lang", "zh"])
    assert "（1 轮，共 3 次请求，" in made.output, made.output
    reported = re.search(r"用量：(\d+) 输入 \+ (\d+) 输出 = (\d+) 个 token，共 3 次请求",
                         page.read_text(encoding="utf-8"))
    assert reported and int(reported[3]) > 0, made.output
    replayed = CliRunner().invoke(app, ["replay", str(rec), "--lang", "zh"])
    assert (f"用量：{reported[1]} 输入 + {reported[2]} 输出 = {reported[3]} 个 token，共 3 次请求，"
            "其中 2 次的回复后来已从历史中截去（rewind、retry、drop）；2 次工具调用；") in replayed.output, \
        replayed.output


# -- issue 28: labels for calls, the docs' lesson, lesson mistakes up front -----------------------

def test_inject_and_rpc_take_the_labels_shown_on_screen(sample_tools):
    out, dbg = drive(session_for(sample_tools, WEATHER_Q), "n", "inject A invalid_json", "n",
                     "rpc A", options=options(lang="zh"))
    assert "*** 没有待执行的调用" not in out
    assert "调用 call_o1 会得到故障 invalid_json：工具照常执行" in out   # it runs: its result is cut
    first = dbg.session.messages[2]
    assert first["tool_call_id"] == "call_o1" and first["content"].endswith('"condition": "晴')
    assert "call_o1 get_weather：没有 JSON-RPC 往来" in out      # rpc found call A, not "no call 'A'"


def docs_lesson() -> str:
    """The lesson of docs/teaching.md, as printed there."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text(encoding="utf-8")
    return re.search(r"```yaml\n(# lesson\.yaml\n.*?)```", page, re.S).group(1)


def test_the_docs_lesson_fires_its_fault_and_shows_its_note(tmp_path):
    path = tmp_path / "lesson.yaml"
    path.write_text(docs_lesson(), encoding="utf-8")
    r = CliRunner().invoke(app, ["run", "--lesson", str(path)], input="\n" * 8 + "quit\n")
    out = r.output
    hit = out.index("命中断点 1：在调用 query_logistics 之前")
    fault = out.index("✎ 超时是可重试的错误", hit)
    assert '"type": "timeout"' in out[hit:fault] and "你注入的故障代替了" in out[hit:fault]
    assert out.index("(agentdbg) rewind 2") > fault        # Enter at the breakpoint ran the call
    assert "API 拒绝了这个请求（HTTP 400）" in out and r.exit_code == 7, out


@pytest.mark.parametrize("text, line, said", [
    ("question: q\ninjections:\n  - fail: query_order\n    kind: timeout\n  - fail: nosuch\n"
     "    kind: timeout\n", 5, "injections: no tool 'nosuch'; the tools are check_inventory"),
    ("question: q\nbreakpoints:\n  - error\n  - tool: nosuch\n", 4, "breakpoints: no tool 'nosuch'"),
    ("question: q\nsteps:\n  - next\n  - frobnicate 3\n", 4, "steps: unknown command 'frobnicate'"),
    ("question: q\nsteps:\n  - next\n  - do: next\n    pause: maybe\n", 5,
     "steps: pause: must be true or false, got 'maybe'"),
    ("question: q\ninjections:\n  - fail: query_order\n    kind: timeout\n    sticky: yes please\n", 5,
     "injections: sticky: must be true or false"),
    ("question: q\noptions:\n  tol: x\n", 3, "options: 'tol' is not a lesson option"),
])
def test_lesson_mistakes_are_one_line_naming_the_line_before_the_run(tmp_path, text, line, said):
    path = tmp_path / "bad1.yaml"
    path.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(app, ["run", "--lesson", str(path)], input="quit\n")
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and f"bad1.yaml:{line}: {said}" in r.output, r.output


@pytest.mark.parametrize("text, said", [
    ("title: t\nquestion: q\nsteps:\n  - frobnicate\noptions: {lang: zh}\n",
     "bad.yaml:4：steps：未知命令 'frobnicate'；'help' 列出所有命令"),
    ("options: {lang: zh, foo: 1}\nquestion: q\n", "bad.yaml:1：options：'foo' 不是课程选项"),
    ("options: {lang: zh}\nquestion: q\ninjections:\n  - fail: nosuch\n    kind: timeout\n",
     "bad.yaml:4：injections：没有名为 'nosuch' 的工具"),
    ("options: {lang: zh}\nquestion: q\nsteps:\n  - do: next\n    pause: 3\n",
     "bad.yaml:5：steps：pause：只能是 true 或 false"),
    ("options:\n  lang: zh\nquestion: [q\nsteps: x\n", "bad.yaml:4:6：YAML 无效："),
])
def test_a_lessons_mistakes_are_said_in_the_language_its_options_name(tmp_path, text, said):
    """The documented way to run a Chinese lesson is ``options: {lang: zh}`` alone: the lesson
    file's own mistakes are said in Chinese too, also when its YAML is broken elsewhere."""
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(app, ["run", "--lesson", str(path)], input="quit\n")
    assert r.exit_code == 2 and said in r.output and r.output.count("\n") == 1, r.output
    typed = CliRunner().invoke(app, ["run", "--lesson", str(path), "--lang", "en"], input="quit\n")
    assert typed.exit_code == 2 and "：" not in typed.output, typed.output   # the command line wins


def test_save_to_a_missing_folder_is_one_line_naming_the_path_and_why(tmp_path):
    folder = tmp_path / "nonexist" / "dir"
    r = CliRunner().invoke(app, ["run", "--step", "--lang", "zh", ORDER_Q],
                           input=f"save {folder}/x.jsonl\nlesson {folder}/l.yaml\nquit\n")
    assert f"*** {folder}/x.jsonl：无法写入（文件夹 {folder} 不存在）" in r.output
    assert f"*** {folder}/l.yaml：无法写入（文件夹 {folder} 不存在）" in r.output
    assert "FileNotFoundError" not in r.output and not folder.exists()


def test_faults_on_two_calls_of_one_tool_name_it_once(sample_tools):
    out, _ = drive(session_for(sample_tools, WEATHER_Q), "n", "inject A invalid_json", "inject B timeout",
                   "n", width=400, options=options(lang="zh", explain=True))
    assert "你注入的故障代替了 get_weather 自己的结果" in out and "get_weather, get_weather" not in out


def test_the_stopped_line_quotes_the_apis_text_as_written(sample_tools):
    said = "'tool_calls'. (param: messages.[1].role)"    # a parenthesis ends no sentence
    for lang, after in (("en", ". Fix the history ('drop N'"), ("zh", "。先修好历史（'drop N'")):
        out, _ = drive(session_for(sample_tools), "n", "n", "drop 1", "n", "send", width=400,
                       options=options(lang=lang))
        stopped = next(line for line in out.splitlines() if line.startswith("■"))
        assert said + after in stopped, stopped


def test_the_connection_error_ends_its_question_once(tmp_path):
    import socket

    with socket.socket() as sock:            # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    r = CliRunner().invoke(app, ["run", "--step", "--lang", "zh", "--model", "m", "--api-key", "k",
                                 "--retries", "0", "--base-url", f"http://127.0.0.1:{port}/v1", "q"],
                           input="n\nquit\n")
    stopped = next(line for line in r.output.splitlines() if line.startswith("■"))
    assert "--base-url 对吗？用 'retry' 把同一个请求再发一次" in stopped and "？。" not in stopped, stopped


def test_usage_says_what_it_counted_with_no_stray_space(sample_tools):
    out, _ = drive(session_for(sample_tools), "n", "usage", width=400, options=options(lang="zh"))
    assert "）计得" in out and "） 计得" not in out


def test_a_saved_lesson_keeps_only_the_commands_that_worked(sample_tools, tmp_path):
    target = tmp_path / "saved.yaml"
    drive(session_for(sample_tools, WEATHER_Q), "n", "inject Z invalid_json", "cls", "inject A invalid_json",
          "frobnicate", "n", f"lesson {target}")
    assert [s.command for s in load_lesson(target).steps] == ["n", "inject A invalid_json", "n"]
