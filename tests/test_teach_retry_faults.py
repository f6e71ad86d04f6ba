"""Step mode after a model error, fault confirmations, usage lines and stop lines, as a lecturer
meets them: 'retry' resends the request the API refused (and the stop line names what works
from there), each fault kind says whether the tool runs, a lesson's faults are set up (not a
phase) in its replay and handout, usage placeholders are in the chosen language."""

import socket

from test_teach_repl import ORDER_Q, WEATHER_Q, drive, options, session_for
from typer.testing import CliRunner

from agentdbg import i18n
from agentdbg.cli import app
from agentdbg.repl.table import help_text

runner = CliRunner()
TO_400 = ("n", "n", "drop 1", "n", "send")     # the classic 400: an orphan tool result, sent


def stop_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("■")]


# -- retry after a model error ------------------------------------------------------------------

def test_retry_after_the_400_sends_the_same_request_again_and_gets_the_same_400(sample_tools):
    out, dbg = drive(session_for(sample_tools), *TO_400, "retry", "n", width=400,
                     options=options(lang="zh", explain=True))
    assert "没有可以重试" not in out
    assert "没有移除任何消息；下一步会把同一个请求再发一次" in out
    assert "400 会原样再来一次（历史仍然违反规则：400 不可重试）" in out       # the narration says why
    assert [line.count("HTTP 400") for line in stop_lines(out)] == [1, 1]  # sent twice, refused twice
    assert dbg.session.requests_made == 3 and len(dbg.session.messages) == 2   # nothing cut
    assert "先修好历史（'drop N'、'edit N' 或 'rewind N'），再用 'next' 发送" in stop_lines(out)[0]


def test_after_the_400_the_fixes_the_stop_line_names_work(sample_tools):
    for fix in ("drop 1", "rewind 0"):
        out, dbg = drive(session_for(sample_tools), *TO_400, fix, "n", width=400,
                         options=options(lang="en"))
        assert "*** the run has stopped" not in out, fix
        assert dbg.session.messages[-1]["role"] == "assistant", fix    # the model answered


def test_edit_after_the_400_reopens_the_run(sample_tools):
    session = session_for(sample_tools)
    drive(session, *TO_400, width=400, options=options(lang="en"))
    assert session.done
    session.edit(1, {"role": "user", "content": "the order is shipped"})
    assert not session.done    # the API refused this history: fixing it goes on


def test_next_after_the_400_names_what_works_in_english(sample_tools):
    out, _ = drive(session_for(sample_tools), *TO_400, "n", width=400, options=options(lang="en"))
    assert ("*** the run has stopped (model_error). Fix the history ('drop N', 'edit N' or "
            "'rewind N'), then 'next' sends it; 'retry' sends the same request again") in out


def test_retry_after_no_connection_sends_the_request_again(tmp_path):
    with socket.socket() as sock:            # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    r = runner.invoke(app, ["run", "--step", "--lang", "zh", "--model", "m", "--api-key", "k",
                            "--retries", "0", "--base-url", f"http://127.0.0.1:{port}/v1", "q"],
                      input="n\nretry\nn\nquit\n")
    assert "没有可以重试" not in r.output
    assert [line.count("连接不上") for line in stop_lines(r.output)] == [1, 1]
    assert "用 'retry' 把同一个请求再发一次；'rewind N' 从第 N 条消息继续" in stop_lines(r.output)[0]


# -- stop lines: every join -----------------------------------------------------------------

def test_the_max_turns_stop_line_ends_its_sentence_before_the_next(sample_tools):
    for lang, joined in (("zh", "（--max-turns）。用 'rewind N'"), ("en", "(--max-turns). 'rewind N'")):
        out, _ = drive(session_for(sample_tools, max_turns=1), "n", "n", "n", width=400,
                       options=options(lang=lang))
        assert joined in stop_lines(out)[0], stop_lines(out)


# -- usage lines ------------------------------------------------------------------------------

def test_usage_lines_say_their_placeholders_in_chinese_as_help_does(sample_tools):
    out, _ = drive(session_for(sample_tools), "break", "break tool", "focus", "rpc", "fail x",
                   width=400, options=options(lang="zh"))
    errors = [line for line in out.splitlines() if line.startswith("*** 用法")]
    assert errors == ["*** 用法：break tool 名称 | break turn N | break error | break finding",
                      "*** 用法：break tool 名称", "*** 用法：focus N | focus 调用", "*** 用法：rpc 调用",
                      "*** 用法：fail 工具 类型 [--sticky]"]
    i18n.use("zh")
    try:
        for word, shown in (("break", errors[0]), ("focus", errors[2]), ("rpc", errors[3])):
            assert help_text(word).splitlines()[0].startswith(shown.removeprefix("*** 用法："))
    finally:
        i18n.use("en")


# -- what each fault does -----------------------------------------------------------------------

def test_each_fault_kind_says_whether_the_tool_runs_in_both_languages(sample_tools):
    said = {
        "zh": ("调用 call_o1 会得到故障 invalid_json：工具照常执行，但模型读到的是被截断的真实结果",
               "调用 call_o2 会得到故障 timeout：工具不会执行，模型读到的整个结果就是这个故障",
               "send_email 的下一次调用会返回故障 oversized：工具不会执行（它有副作用）",
               "你注入的故障破坏了 get_weather 的结果"),
        "en": ("call call_o1 will get the invalid_json fault: the tool runs, and the model reads its "
               "real result cut short",
               "call call_o2 will get the timeout fault: the tool does not run; the fault is the whole "
               "result",
               "the next call of send_email will return the oversized fault: the tool does not run "
               "(it has side effects)",
               "The fault you injected spoiled the result of get_weather"),
    }
    for lang, texts in said.items():
        out, dbg = drive(session_for(sample_tools, WEATHER_Q), "n", "inject A invalid_json",
                         "inject B timeout", "fail send_email oversized", "n", width=400,
                         options=options(lang=lang, explain=True))
        for text in texts:
            assert text in out, (lang, text)
        assert "不会执行，而是得到故障 invalid_json" not in out
        cut = dbg.session.messages[2]["content"]
        assert cut.startswith('{"city": "北京"')          # the tool's own result, cut short
        assert dbg.session.outcome_at[2].spoiled and not dbg.session.outcome_at[3].spoiled


# -- a lesson's faults in its replay and handout ---------------------------------------------------

LESSON = """\
title: 订单在哪里
question: 订单 ORD-2026-001 到哪里了?
options: {lang: zh, explain: true}
injections:
  - fail: query_logistics
    kind: timeout
steps:
  - next
  - next
  - next
  - next
"""
FAULT_SET = "query_logistics 的下一次调用会返回故障 timeout：工具不会执行"


def lesson_recording(tmp_path):
    lesson = tmp_path / "lesson.yaml"
    lesson.write_text(LESSON, encoding="utf-8")
    rec = tmp_path / "lesson.jsonl"
    r = runner.invoke(app, ["run", "--lesson", str(lesson), "--save", str(rec)], input="quit\n")
    return r.output, rec


def before_first_prompt(out: str) -> str:
    return out.split("(agentdbg)", 1)[0]


def test_a_lessons_fault_is_said_at_the_start_live_and_in_its_replay(tmp_path):
    live, rec = lesson_recording(tmp_path)
    assert FAULT_SET in before_first_prompt(live)
    r = runner.invoke(app, ["replay", str(rec), "--step", "--lang", "zh", "--explain"],
                      input="\n\n\n\n\nquit\n")
    assert FAULT_SET in before_first_prompt(r.output)          # set up as live: no phase of its own
    assert "按录制，接下来是：fail" not in r.output
    assert "有一个故障在等待：调用会得到这个故障" not in r.output
    first = r.output.split("(agentdbg)")[1]
    assert "第 1 轮" in first                                    # the first Enter asks the model


def test_a_fail_typed_later_is_narrated_in_replay_naming_its_tool(tmp_path):
    rec = tmp_path / "typed.jsonl"
    runner.invoke(app, ["run", "--step", "--save", str(rec), ORDER_Q],
                  input="n\nn\nfail query_logistics timeout\nn\nn\nquit\n")
    r = runner.invoke(app, ["replay", str(rec), "--step", "--lang", "zh", "--explain"],
                      input="\n\n\n\n\n\nquit\n")
    assert "有一个故障在等待 query_logistics 的下一次调用：工具不会执行" in r.output


def test_the_handout_has_no_phase_for_a_lessons_fault(tmp_path):
    from agentdbg.report.handout import lesson_phases

    _live, rec = lesson_recording(tmp_path)
    i18n.use("zh")
    try:
        phases, _question = lesson_phases(rec)
    finally:
        i18n.use("en")
    titles = [p["title"] for p in phases]
    assert not any("query_logistics" in t for t in titles), titles
    assert titles[1].startswith("模型回答"), titles
    assert phases[0]["narration"].startswith("第一次请求之前：" + FAULT_SET), phases[0]["narration"]


def test_a_spoiled_result_is_narrated_the_same_live_and_in_replay(tmp_path):
    rec = tmp_path / "weather.jsonl"
    live = runner.invoke(app, ["run", "--step", "--explain", "--lang", "zh", "--save", str(rec),
                               WEATHER_Q], input="n\ninject call_o1 invalid_json\nn\nn\nquit\n")
    r = runner.invoke(app, ["replay", str(rec), "--step", "--lang", "zh", "--explain"],
                      input="\n\n\n\n\nquit\n")
    said = "你注入的故障破坏了 get_weather 的结果：模型读到的是被截断或被重复的内容"
    assert said in live.output and said in r.output
    assert "你注入的故障代替了" not in r.output
