"""Step mode driven through prompt_toolkit's pipe input (no terminal needed)."""

import io
import json
import sys

from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.cells import cell_len
from rich.console import Console
from support import scripted

from agentdbg.checker import check_model_request
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.errors import ExitStatus
from agentdbg.providers.offline import OfflineModel
from agentdbg.render.console import PipedConsole
from agentdbg.repl.completion import DebuggerCompleter
from agentdbg.repl.debugger import Debugger

ORDER_Q = "订单 ORD-2026-001 到哪里了?"


def session_for(tools, question=ORDER_Q, model=None, **config):
    return Session.for_question(model or OfflineModel(), tools, question,
                                RunConfig(approve="ask", stop_on_invalid=False, **config),
                                precheck=lambda r: check_model_request(r))


def drive(session, *lines, width=110, **kw):
    """Type ``lines`` at the prompt; end of input answers the quit question. The console
    is the CLI's when piped: a line naming a path stays one line however long the path."""
    buf = io.StringIO()
    console = PipedConsole(file=buf, width=width, no_color=True, highlight=False)
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()  # end of input: the quit question is answered by EOF
        dbg = Debugger(session, console, input=pipe, output=DummyOutput(), history=False, **kw)
        status = dbg.loop()
    return status, buf.getvalue(), dbg


def test_enter_steps_through_the_whole_loop(sample_tools):
    s = session_for(sample_tools)
    status, out, _ = drive(s, "", "", "", "", "")
    assert s.stop_reason is StopReason.COMPLETED and status == ExitStatus.OK
    assert out.count("▶ next: ask the model") == 3 and out.count("▶ next: execute 1 call(s)") == 2
    assert "■ stopped: completed" in out and "杭州转运中心已发出" in out
    assert "… pending execution" in out  # a call about to run is pending, not "unanswered"


def test_help_lists_every_command_and_explains_one(sample_tools):
    from agentdbg.repl.commands import COMMANDS

    _, out, _ = drive(session_for(sample_tools), "help", "help inject", "help w", width=80)
    for cmd in COMMANDS.values():  # one line each: names, aliases and the whole summary
        line = f"  {cmd.names}"
        assert any(ln.startswith(line) and ln.endswith(cmd.summary) for ln in out.splitlines()), line
    assert "next (n, Enter)" in out and "help (h, ?)" in out and "clear (cl)" in out
    assert "inject CALL KIND  (aliases: i)" in out and "unique prefix" in out
    assert "save PATH  (aliases: w)" in out and "JSON Lines" in out
    assert all(len(line) <= 80 for line in out.splitlines() if not line.startswith("╭")), \
        [line for line in out.splitlines() if len(line) > 80]


def test_golden_help_at_80_columns():
    from test_render import golden

    from agentdbg.repl.commands import help_text

    buf = io.StringIO()
    Console(file=buf, width=80, no_color=True, highlight=False).print(help_text(), markup=False)
    text = "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
    golden("step_help_80", text)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert text == help_text() + "\n"  # nothing wrapped: every line is whole at 80 columns


def test_errors_print_one_line_and_stay_at_the_prompt(sample_tools):
    s = session_for(sample_tools)
    _, out, _ = drive(s, "frobnicate", "show 99", "drop x", "inject", "fail nope timeout", "n")
    assert "*** unknown command 'frobnicate'" in out
    assert "*** no message 99; messages are 0..0" in out
    assert "*** expected a message index, got 'x'" in out
    assert "*** usage: inject CALL KIND" in out
    assert "*** no tool 'nope'" in out
    assert len(s.turns) == 1  # still alive: the last 'n' was performed


def test_show_tools_usage(sample_tools):
    _, out, _ = drive(session_for(sample_tools), "n", "show 1", "tools", "usage")
    assert '"name": "query_order"' in out and "message 1:" in out
    assert "order_id*" in out and "send_email" in out
    assert "turn 1:" in out and "total:" in out


def test_fail_makes_the_tool_time_out_and_the_offline_model_retries(sample_tools):
    s = session_for(sample_tools)
    _, out, _ = drive(s, "fail query_logistics timeout --sticky", "c")
    assert "every call of query_logistics will return the timeout fault" in out
    assert "retrying query_logistics once" in out
    assert s.stop_reason is StopReason.COMPLETED
    assert "timeout" in s.answer() and "没能获取物流单 SF123456（query_logistics）" in s.answer()
    injected = [o for o in s.outcomes if o.injected]
    assert len(injected) == 2 and all(o.error_type == "timeout" for o in injected)


def test_inject_pending_by_name_and_finished_by_index(sample_tools):
    s = session_for(sample_tools)
    _, out, _ = drive(s, "n", "inject query_order not_found", "n",
                      'inject 2 {"status": "cancelled"}', "messages")
    assert "call call_o1 will get the not_found fault" in out
    assert s.messages[2]["content"] == '{"status": "cancelled"}'
    assert s.marks[2] == {"injected"} and "[injected by you]" in out


def test_inject_unknown_kind_is_a_clear_error(sample_tools):
    _, out, _ = drive(session_for(sample_tools), "n", "inject query_order explode")
    assert "*** unknown fault 'explode'; one of timeout" in out


def test_edit_in_editor(sample_tools, tmp_path, monkeypatch):
    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      "m['content'] = json.dumps({'status': 'lost'})\njson.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    s = session_for(sample_tools)
    _, out, _ = drive(s, "n", "n", "edit 2", "n")
    assert "message 2 edited" in out and json.loads(s.messages[2]["content"]) == {"status": "lost"}
    assert s.marks[2] == {"edited"} and "[edited by you]" in out
    assert "nothing left to call" in out  # the model read the edited result (no tracking_no)
    assert s.actions[0]["action"] == "edit" and s.actions[0]["index"] == 2


def test_inline_editor_rejects_invalid_json(sample_tools, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    s = session_for(sample_tools)
    before = None
    # type extra text after the JSON, then Esc+Enter to accept
    _, out, _ = drive(s, "n", "n", "edit 2" + "\r" + "oops\x1b")
    before = s.messages[2]
    assert "inline editor" in out and "not valid JSON" in out
    assert before["content"] == '{"status": "shipped", "tracking_no": "SF123456"}'


def test_drop_the_assistant_message_flags_the_orphan_at_once(sample_tools):
    s = session_for(sample_tools)
    _, out, _ = drive(s, "n", "n", "drop 1", "n", "send")
    assert "dropped message 1 (assistant)" in out
    assert "✗ error orphan-tool-message" in out
    assert "not sent: the request breaks the protocol" in out  # 'n' was refused
    # 'send' sent it anyway; turn numbers follow the history: turn 1's reply was dropped
    assert len(s.turns) == 1 and s.turns[-1].turn == 1 and len(s.cut_turns) == 1


def test_rewind_and_retry(sample_tools):
    s = session_for(sample_tools)
    _, out, _ = drive(s, "c", "rewind 2", "retry", "c")
    assert "rewound to message 2; 3 message(s) cut" in out
    assert "the next step asks the model again" in out
    assert s.stop_reason is StopReason.COMPLETED and [a["action"] for a in s.actions] == [
        "rewind", "retry"]


def test_breakpoints(sample_tools):
    s = session_for(sample_tools)
    _, out, dbg = drive(s, "break tool query_logistics", "break turn 9", "breaks", "c",
                        "clear 2", "breaks", "c")
    assert "breakpoint 1: before a call of query_logistics" in out
    assert "breakpoint 1 hit" in out
    assert "removed 1 breakpoint(s)" in out and s.stop_reason is StopReason.COMPLETED
    assert dbg.breakpoints.items[0].hits == 1


def test_clear_asks_what_to_clear(sample_tools):
    """A shell habit: 'clear' alone asks (the screen or the breakpoints), never silently
    removes the breakpoints; 'clear breaks', 'clear ID' and 'clear screen' say it."""
    s = session_for(sample_tools)
    _, out, dbg = drive(s, "break tool query_logistics", "break error", "clear", "", "n")
    assert "nothing cleared" in out and len(dbg.breakpoints.items) == 2
    _, out, dbg = drive(session_for(sample_tools), "break error", "clear", "b", "breaks")
    assert "removed 1 breakpoint(s)" in out and "no breakpoints" in out
    _, out, dbg = drive(session_for(sample_tools), "break error", "clear")  # then end of input
    assert "nothing cleared" in out and len(dbg.breakpoints.items) == 1
    _, out, dbg = drive(session_for(sample_tools), "break error", "break turn 2", "clear breaks")
    assert "removed 2 breakpoint(s)" in out and not dbg.breakpoints.items
    _, out, dbg = drive(session_for(sample_tools), "break error", "clear", "s", "breaks")
    assert "1: after a tool result that is an error" in out  # the screen went, not the breakpoint


def test_break_error_and_break_turn(sample_tools):
    s = session_for(sample_tools)
    _, out, _ = drive(s, "break error", "fail query_order internal_error", "c")
    assert "breakpoint 1 hit: after a tool result that is an error" in out
    assert len(s.turns) == 1
    s = session_for(sample_tools)
    _, out, _ = drive(s, "break turn 2", "c")
    assert "breakpoint 1 hit: before model turn 2" in out and len(s.turns) == 1


def test_break_finding(sample_tools):
    s = session_for(sample_tools, model=scripted(
        {"tool_calls": [{"name": "get_wether", "arguments": {"city": "北京"}}]}, {"content": "x"}))
    _, out, _ = drive(s, "break finding", "c")
    assert "breakpoint 1 hit: when the checker has a finding" in out
    assert "! warning unknown-tool" in out


def test_continue_stops_at_an_error_finding(sample_tools):
    s = session_for(sample_tools, model=scripted(
        {"tool_calls": [{"name": "get.weather", "arguments": '{"city": "北京"}'}]}, {"content": "x"}))
    _, out, _ = drive(s, "c")
    assert "continue stopped: the checker has an error-level finding" in out
    assert "✗ error invalid-tool-name" in out
    assert len(s.turns) == 1 and s.outcomes == []  # stopped right after the bad reply


def test_approve_and_deny(sample_tools):
    email = {"tool_calls": [{"name": "send_email", "id": "m1",
                             "arguments": {"to": "a@b.cn", "subject": "s", "body": "b"}}]}
    s = session_for(sample_tools, model=scripted(email, {"content": "done"}))
    _, out, _ = drive(s, "n", "n", "deny", "n", "n")
    assert "approval needed before running send_email (m1)" in out and "denied: m1" in out
    assert json.loads(s.messages[2]["content"])["error"]["type"] == "denied"
    s = session_for(sample_tools, model=scripted(email, {"content": "done"}))
    _, out, _ = drive(s, "n", "approve m1", "n")
    assert "approved: m1" in out and json.loads(s.messages[2]["content"])["status"] in (
        "sent", "duplicate_ignored")


def test_approve_and_deny_take_the_calls_label(sample_tools):
    email = {"tool_calls": [{"name": "send_email", "id": "m1",
                             "arguments": {"to": "a@b.cn", "subject": "s", "body": "b"}}]}
    s = session_for(sample_tools, model=scripted(email, {"content": "done"}))
    _, out, _ = drive(s, "n", "deny A", "n")
    assert "denied: m1" in out and json.loads(s.messages[2]["content"])["error"]["type"] == "denied"


def test_save_writes_the_run_with_edits(sample_tools, tmp_path):
    s = session_for(sample_tools)
    path = tmp_path / "step.json"
    _, out, _ = drive(s, "c", "drop 4", f"save {path}")
    doc = json.loads(path.read_text())
    assert doc["actions"][0]["action"] == "drop" and len(doc["messages"]) == 5
    assert f"saved to {path} (one JSON document" in out


def test_save_says_what_it_writes(sample_tools, tmp_path):
    """'save' writes the transcript: JSON Lines whatever the name, and it says so."""
    from agentdbg.repl.commands import help_text
    from agentdbg.transcript import load_transcript, start_transcript

    s = session_for(sample_tools)
    writer = start_transcript(s, tmp_path / "live.jsonl", model="offline", provider="offline",
                              base_url=None, question=ORDER_Q)
    lines, named = tmp_path / "copy.jsonl", tmp_path / "lesson.json"
    _, out, _ = drive(s, "c", f"save {lines}", f"save {named}", transcript=writer)
    writer.close()
    for path in (lines, named):
        assert f"saved to {path} (a transcript in JSON Lines; 'agentdbg replay' plays it)" in out
        assert load_transcript(path).stop.reason == "completed"
    assert "as JSON." not in help_text("save") and "JSON Lines" in help_text("save")


def test_quit_by_ctrl_c_and_by_eof(sample_tools, tmp_path):
    s = session_for(sample_tools)
    path = tmp_path / "q.json"
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("n\r\x03y\r")
        pipe.close()
        status = Debugger(s, Console(file=buf, width=100, no_color=True), input=pipe,
                          output=DummyOutput(), history=False, save=path).loop()
    assert status == ExitStatus.CANCELLED and s.stop_reason is StopReason.CANCELLED
    assert len(json.loads(path.read_text())["messages"]) == 2  # nothing recorded is lost


def test_ctrl_c_at_prompt_can_be_declined(sample_tools):
    s = session_for(sample_tools)
    with create_pipe_input() as pipe:
        pipe.send_text("\x03n\rn\r")
        pipe.close()
        Debugger(s, Console(file=io.StringIO()), input=pipe, output=DummyOutput(),
                 history=False).loop()
    assert len(s.turns) == 1


class Interrupting:
    name = "interrupting"

    def complete(self, request):
        raise KeyboardInterrupt


def test_ctrl_c_during_a_model_request_returns_to_the_prompt(sample_tools):
    s = session_for(sample_tools, model=Interrupting())
    _, out, _ = drive(s, "n", "messages")
    assert "interrupted: the model request was cancelled; nothing was appended" in out
    after = out.split("nothing was appended")[1]
    assert "[0] user" in after  # back at the prompt: 'messages' ran
    assert len(s.messages) == 1


def test_explain_in_chinese(sample_tools):
    from agentdbg.options import RunOptions

    options = RunOptions(model_desc="offline", model="offline", provider_name="offline",
                         explain=True, lang="zh")
    _, out, _ = drive(session_for(sample_tools), "n", options=options)
    assert "应用把 messages（1 条）和 6 个工具定义发给模型" in out
    assert "模型请求了 1 个调用（query_order）" in out


def completions(dbg, text):
    return [c.text for c in DebuggerCompleter(dbg).get_completions(Document(text), None)]


def test_completion_of_commands_indices_ids_tools_and_kinds(sample_tools):
    s = session_for(sample_tools)
    _, _, dbg = drive(s, "n")
    assert "inject" in completions(dbg, "inj")
    assert completions(dbg, "show ") == ["0", "1"]
    assert "call_o1" in completions(dbg, "inject ") and "query_order" in completions(dbg, "inject ")
    assert completions(dbg, "fail query_l") == ["query_logistics"]
    assert completions(dbg, "fail query_") == ["query_order", "query_logistics"]
    assert "timeout" in completions(dbg, "fail query_order ")
    assert completions(dbg, "fail query_order timeout ") == ["--sticky"]
    assert completions(dbg, "break ") == ["tool", "turn", "error", "finding"]


def test_history_is_kept_across_runs(sample_tools, tmp_path):
    for command in ("usage", "tools"):
        with create_pipe_input() as pipe:
            pipe.send_text(command + "\r")
            pipe.close()
            Debugger(session_for(sample_tools), Console(file=io.StringIO()), input=pipe,
                     output=DummyOutput()).loop()
    history = (tmp_path / "agentdbg-home" / "history").read_text()
    assert "+usage" in history and "+tools" in history


def test_an_empty_final_answer_is_flagged_in_step_mode(sample_tools):
    """A model that ends the run with no text: a warning on the message and the stop line."""
    s = session_for(sample_tools, model=scripted({"content": ""}))
    _, out, _ = drive(s, "c")
    out = " ".join(out.split())
    assert "■ stopped: completed (warning: the answer is empty)" in out
    assert "! warning empty-final-answer" in out


def test_at_80_columns_no_line_parts_a_call_id_from_its_name_or_a_budget_label(sample_tools):
    s = session_for(sample_tools, "北京和上海今天哪个更热?")
    _, out, _ = drive(s, "n", "usage", width=80)
    lines = [ln.rstrip() for ln in out.splitlines()]
    head = lines.index("▶ next: execute 2 call(s):")  # a call a line, under the heading
    assert lines[head + 1:head + 3] == ['    call_o1 get_weather({"city":"北京"})',
                                        '    call_o2 get_weather({"city":"上海"})']
    assert any(ln.startswith("message framing (3 per message + 3)") for ln in lines)
    table = lines[lines.index("context budget of request 2"):]
    assert all(cell_len(ln) <= 80 for ln in table[:6])  # the bar gives way, not the label
    one = drive(session_for(sample_tools), "n", width=80)[1]  # one short call keeps one line
    assert '▶ next: execute 1 call(s): call_o1 query_order({"order_id":"ORD-2026-001"})' in one


def test_on_a_terminal_a_long_pending_call_folds_under_itself(sample_tools):
    long = {"city": "北京", "note": "x" * 120}
    s = session_for(sample_tools, model=scripted(
        {"tool_calls": [{"name": "get_weather", "id": "w1", "arguments": long},
                        {"name": "get_weather", "id": "w2", "arguments": {"city": "上海"}}]},
        {"content": "done"}))
    s.step()  # the model's turn: two calls wait
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None, highlight=False)
    with create_pipe_input() as pipe:
        Debugger(s, console, input=pipe, output=DummyOutput(), history=False).banner()
    lines = buf.getvalue().splitlines()
    assert lines[0] == "▶ next: execute 2 call(s):"
    assert lines[1].startswith('    w1 get_weather({"city": "北京", "note": "xxx')  # one fold
    assert all(ln.startswith("    ") and cell_len(ln) <= 80 for ln in lines[1:])
    assert lines[-1] == '    w2 get_weather({"city": "上海"})'
