"""The HTML report as a file: self-contained, escaped, redacted; the commands' one-line errors."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re

import pytest
from rich.console import Console

from agentdbg.errors import AgentdbgError, ExitStatus, InputError
from agentdbg.report.commands import run_report
from agentdbg.report.html import CSS, render_report
from agentdbg.report.timeline import read_run

from .report_fixtures import SECRET

KINDS = ["run", "parallel", "limit", "fork", "replay", "step", "proxy", "proxy_forget", "evil"]


def console():
    return Console(width=100, no_color=True, record=True, highlight=False, file=io.StringIO())


@pytest.mark.parametrize("kind", KINDS)
def test_the_page_is_self_contained(made, kind):
    page = render_report(made[kind])
    assert "<script" not in page.lower()           # the evil run's <script> is escaped too
    assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:|//|javascript:)""", page, re.I)
    assert "@import" not in page and "url(" not in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "script-src 'none'" in csp and "connect-src 'none'" in csp
    digest = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in csp and f"<style>{CSS}</style>" in page
    assert SECRET not in page


def test_the_page_shows_what_each_kind_of_run_did(made):
    step = render_report(made["step"])
    assert "you dropped message [1]" in step and "you rewound to message [0]" in step
    assert "turn 1 (request 2): the request was blocked by the pre-send check (not sent)" in step
    assert "[edited by you]" in step and "[injected by you]" in step
    assert "injected fault" in step and "error: timeout (retryable)" in step
    assert "you made the next call of query_logistics fail with timeout" in step
    fork = render_report(made["fork"])
    assert "fork of" in fork and "at message 2" in fork
    proxy = render_report(made["proxy"])
    assert "run by the app" in proxy and "proxy conversation" in proxy
    limit = render_report(made["limit"])
    assert "stopped: max_turns" in limit and "✓ answered at [2]" in limit


def test_recorded_text_is_escaped_and_made_visible(made, tmp_path):
    text = made["run"].read_text(encoding="utf-8")
    hostile = text.replace("SF123456", "SF123456 \\u001b[2J\\u202e<b>bold</b> sk-abcdefghijklmnopqrstuvwxyz01")
    path = tmp_path / "hostile.jsonl"
    path.write_text(hostile, encoding="utf-8")
    page = render_report(path)
    assert "\x1b" not in page and "\u202e" not in page
    assert "\\x1b[2J" in page and "\\u202e" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    assert "sk-abcdefghijklmnopqrstuvwxyz01" not in page and "[REDACTED]" in page


def test_a_cut_transcript_still_reports_with_its_warning(made, tmp_path):
    lines = made["run"].read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(lines[:5]) + lines[5][:40], encoding="utf-8")
    page = render_report(path)
    assert "last line is truncated" in page and "no stop event" in page


def test_run_report_writes_the_file_and_says_so(made, tmp_path):
    c = console()
    out = tmp_path / "out" / "order.html"
    assert run_report(made["run"], out, c) is ExitStatus.OK
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    said = c.export_text()
    assert f"report: {out}" in said.replace("\n", "") and "3 turn(s), 2 tool call(s), 0 finding(s), stop completed" in said


def test_run_report_defaults_to_the_current_folder(made, tmp_path):
    run_report(made["run"], None, console())
    assert (tmp_path / "order.html").exists()   # tests run in tmp_path


@pytest.mark.parametrize("content, error", [
    (None, "no such transcript"),
    (b"", "empty transcript"),
    (b"\xff\xfe garbage\n", "not UTF-8"),
    (b'{"type": "header", "format": "something-else"}\n', "not an agentdbg transcript"),
    (b'[1, 2]\n', "must be a JSON object"),
    (b'{"type": "header", "format": "agentdbg-transcript", "version": 99}\n', "unsupported transcript version"),
    (b'{"type": "header", "format": "agentdbg-transcript", "version": 1}\n{oops\n{"type": "stop"}\n', ":2:"),
])
def test_unreadable_input_is_one_line(tmp_path, content, error):
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError) as info:
        run_report(path, tmp_path / "x.html", console())
    assert error in info.value.message and "\n" not in info.value.message
    assert not (tmp_path / "x.html").exists()


def test_a_folder_or_an_unwritable_output_is_one_line(made, tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        run_report(tmp_path, None, console())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(AgentdbgError, match="cannot write") as info:
        run_report(made["run"], blocker / "sub" / "r.html", console())
    assert "\n" not in info.value.message


ODD_EVENTS = [   # (an event of the right kind with a field of the wrong type, the field named)
    ({"type": "request", "seq": 1, "turn": "x", "prefix": 0, "append": []}, "'turn'"),
    ({"type": "request", "seq": 1, "turn": 1, "prefix": "y", "append": []}, "'prefix'"),
    ({"type": "request", "seq": 1, "prefix": 0, "append": {"not": "a list"}}, "'append'"),
    ({"type": "request", "seq": 2, "turn": 2, "prefix": 0, "append": [1, None, "text"]}, "'append[0]'"),
    ({"type": "request", "seq": 2, "turn": 2, "prefix": 0, "append": [], "params": ["a"]}, "'params'"),
    ({"type": "response", "seq": 3, "message": "not a dict"}, "'message'"),
    ({"type": "response", "seq": 3, "message": {}, "usage": 7}, "'usage'"),
    ({"type": "response", "seq": 3, "message": {}, "latency_ms": "slow"}, "'latency_ms'"),
    ({"type": "tool", "seq": 4, "tool_call_id": ["x"]}, "'tool_call_id'"),
    ({"type": "tool", "seq": 4, "ok": "maybe"}, "'ok'"),
    ({"type": "action", "seq": 5, "action": "edit", "index": "one"}, "'index'"),
    ({"type": "blocked", "seq": 6, "findings": [1, {"rule": None}]}, "'findings[0]'"),
    ({"type": "stop", "seq": 9, "reason": None}, "'reason'"),
    ({"type": "stop", "seq": 9, "reason": "completed", "messages": {"x": 1}}, "'messages'"),
]


@pytest.mark.parametrize("event,field", ODD_EVENTS)
def test_an_event_with_a_field_of_the_wrong_type_is_one_line_naming_it(made, tmp_path, event, field):
    """The report reads transcripts as replay and check do (one reader): a field of the wrong
    type is one line naming the line and the field, never a crash or a page drawn from junk."""
    from typer.testing import CliRunner

    from agentdbg.cli import app

    header = made["run"].read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "odd.jsonl"
    path.write_text(header + "\n" + json.dumps(event) + "\n", encoding="utf-8")
    with pytest.raises(AgentdbgError) as info:
        render_report(path)
    assert f"{path}:2: {event['type']} event" in info.value.message and field in info.value.message
    r = CliRunner().invoke(app, ["report", str(path), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and field in r.stderr, r.output


def test_events_of_unknown_kinds_and_odd_but_typed_values_render(made, tmp_path):
    """What a newer writer may add (an unknown kind of event) is left alone; messages are data."""
    header = made["run"].read_text(encoding="utf-8").splitlines()[0]
    odd = [
        {"type": "request", "seq": 1, "turn": 1, "prefix": 0, "append": [{"role": 5}, {"content": []}]},
        {"type": "response", "seq": 3, "message": {"role": "assistant", "content": "not a dict"},
         "usage": {"prompt_tokens": None, "cached": [1]}},
        {"type": "tool", "seq": 4, "tool_call_id": "x", "duration_ms": 5},
        {"type": "blocked", "seq": 6, "findings": [{"rule": None}, {"rule": ["x"], "index": "one"}]},
        {"type": "model_error", "seq": 7},
        {"type": "unknown-kind", "seq": 8, "what": [1]},
        {"type": "stop", "seq": 9, "reason": "completed"},
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text(header + "\n" + "".join(json.dumps(e) + "\n" for e in odd), encoding="utf-8")
    page = render_report(path)
    assert "not a dict" in page and "stopped:" in page
    run = read_run(path)
    assert len(run.turns) == 1


def test_recorded_findings_of_the_wrong_shape_never_crash(made, tmp_path):
    """A proxy finding whose fields are lists or objects (found by the generated streams)."""
    header = made["run"].read_text(encoding="utf-8").splitlines()[0]
    odd = {"type": "request", "seq": 1, "turn": 1, "prefix": 0,
           "append": [{"role": "user", "content": "q"}],
           "findings": [{"rule": "odd-rule", "tool_call_id": ["a"], "api_error": {"k": 1},
                         "index": True, "message": ["x"]}]}
    path = tmp_path / "odd-findings.jsonl"
    path.write_text(header + "\n" + json.dumps(odd) + "\n", encoding="utf-8")
    (f,) = read_run(path).findings()
    assert (f.rule, f.tool_call_id, f.api_error, f.index) == ("odd-rule", None, None, None)
    assert "odd-rule" in render_report(path)


def test_reading_is_linear_in_the_transcript(made):
    """One pass: pairing and the checker run once per history, not once per request."""
    run = read_run(made["run"])
    assert len(run.histories) == 1 and len(run.turns) == 3
    step = read_run(made["step"])
    assert [h.start for h in step.histories] == [0, 1]


def _events():
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 8), st.floats(allow_nan=False),
                       st.text(max_size=8))
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(st.sampled_from(
                                                              ["role", "content", "tool_calls", "id",
                                                               "function", "name", "arguments",
                                                               "tool_call_id"]), inner, max_size=4)),
                         max_leaves=12)
    keys = ["turn", "prefix", "append", "params", "message", "usage", "finish_reason", "latency_ms",
            "tool_call_id", "name", "arguments", "content", "ok", "error_type", "duration_ms",
            "started_ms", "injected", "index", "action", "pending", "findings", "reason", "messages",
            "status", "detail", "at_ms", "cut"]
    event = st.builds(lambda kind, fields: {"type": kind, **fields},
                      st.sampled_from(["request", "response", "tool", "action", "blocked",
                                       "model_error", "stop"]),
                      st.dictionaries(st.sampled_from(keys), value, max_size=6))
    return st.lists(event, max_size=8)


def test_generated_event_streams_never_crash_any_reader(made, tmp_path_factory):
    """Whatever a transcript's events hold, report, diff, assertions and export only read it,
    or refuse it in one line naming the line (a field of the wrong type: the one reader)."""
    from hypothesis import HealthCheck, given, settings

    from agentdbg.report.diff import diff_runs
    from agentdbg.report.otel import spans_of_run
    from agentdbg.report.trajectory import Trajectory, TrajectoryError

    header = made["run"].read_text(encoding="utf-8").splitlines()[0]
    folder = tmp_path_factory.mktemp("gen")
    base = read_run(made["run"])

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_events())
    def check(events):
        path = folder / "g.jsonl"
        path.write_text(header + "\n" + "".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        try:
            run = read_run(path)
        except InputError as exc:
            assert "\n" not in exc.message and exc.message.startswith(f"{path}:"), exc.message
            return
        assert render_report(run).startswith("<!DOCTYPE html>")
        diff_runs(base, run).to_dict()
        spans_of_run(run, content=True)
        t = Trajectory(run)
        for attempt in (lambda: t.tool_used("query_order"), lambda: t.no_findings(),
                        lambda: t.stop_reason("completed"), lambda: t.max_turns(0)):
            try:
                attempt()
            except TrajectoryError as exc:
                assert str(exc)
    check()


def test_the_page_uses_the_terminal_views_words():
    from agentdbg.render import view
    from agentdbg.report import adapter

    assert adapter.FOLD_AT == view.FOLD_AT


def test_an_empty_final_answer_is_the_same_warning_in_the_report(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    script = tmp_path / "s.yaml"
    script.write_text("- content: ''\n", encoding="utf-8")
    saved = tmp_path / "t.jsonl"
    r = CliRunner().invoke(app, ["run", "q", "--script", str(script), "--save", str(saved)])
    assert r.exit_code == 0 and "empty-final-answer" in r.stdout        # what the run said
    (f,) = read_run(saved).findings()
    assert f.rule == "empty-final-answer" and f.severity == "warning" and f.index == 1
    c = console()
    run_report(saved, tmp_path / "t.html", c)
    assert "1 finding(s), stop completed" in c.export_text()
    assert "empty-final-answer" in (tmp_path / "t.html").read_text(encoding="utf-8")
