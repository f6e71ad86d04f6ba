"""Trajectory assertions on transcripts made for real; failures show the messages view."""

from __future__ import annotations

import pytest

from agentdbg.report.trajectory import (
    Trajectory,
    TrajectoryError,
    assert_max_tool_calls,
    assert_max_turns,
    assert_no_findings,
    assert_stop_reason,
    assert_tool_args,
    assert_tool_not_used,
    assert_tool_sequence,
    assert_tool_used,
)
from agentdbg.transcript import load_transcript


def test_a_correct_run_passes_every_assertion(made):
    run = made["run"]
    assert [c.id for c in assert_tool_used(run, "query_order", times=1)] == ["call_o1"]
    assert_tool_not_used(run, "send_email")
    assert_tool_sequence(run, ["query_order", "query_logistics"])
    assert_tool_sequence(run, ["query_order", "query_logistics"], others_between=False)
    assert_tool_args(run, "query_order", {"order_id": "ORD-2026-001"}, exact=True, succeeded=True)
    assert_tool_args(run, "query_logistics", schema={
        "type": "object", "required": ["tracking_no"],
        "properties": {"tracking_no": {"type": "string", "pattern": "^SF\\d{6}$"}}})
    assert_max_turns(run, 3)
    assert_max_tool_calls(run, 2)
    assert_no_findings(run)
    assert_stop_reason(run, "completed")


def test_a_loaded_transcript_and_a_trajectory_work_too(made):
    t = Trajectory.load(load_transcript(made["parallel"]))
    assert [c.name for c in t.tool_used("get_weather", times=2)] == ["get_weather"] * 2
    assert_tool_args(t, "get_weather", {"city": "上海"})                 # any call matches
    with pytest.raises(TrajectoryError):
        assert_tool_args(t, "get_weather", {"city": "上海"}, which="all")


def test_a_failure_prints_the_view_of_the_call(made):
    with pytest.raises(TrajectoryError) as info:
        assert_tool_args(made["run"], "query_order", {"order_id": "ORD-2026-002"})
    text = str(info.value)
    assert text.splitlines()[0] == ("order.jsonl: expected a call of query_order to have matching "
                                    'arguments; call_o1: $.order_id is "ORD-2026-001", expected '
                                    '"ORD-2026-002"')
    assert "[1] assistant → A call_o1  query_order   ✓ answered at [2]" in text
    assert '{"order_id": "ORD-2026-001"}' in text
    assert "[2] tool      ← A call_o1  query_order   ✓ answers [1]" in text
    assert "\x1b" not in text                                           # no colour
    assert max(len(line) for line in info.value.view.splitlines()) <= 80
    assert isinstance(info.value, AssertionError)


def test_sequences_with_and_without_others_between(made):
    with pytest.raises(TrajectoryError, match="found query_logistics, then no query_order"):
        assert_tool_sequence(made["run"], ["query_logistics", "query_order"])
    with pytest.raises(TrajectoryError, match="never come one right after another"):
        assert_tool_sequence(made["step"], ["query_order", "query_logistics", "query_order"],
                             others_between=False)


def test_schema_and_value_mismatches_say_where(made):
    with pytest.raises(TrajectoryError, match=r"fail the schema: \$\.order_id: 'ORD-2026-001' is not of type 'integer'"):
        assert_tool_args(made["run"], "query_order",
                         schema={"type": "object", "properties": {"order_id": {"type": "integer"}}})
    with pytest.raises(TrajectoryError, match=r"\$ has unexpected keys \['order_id'\]"):
        assert_tool_args(made["run"], "query_order", {}, exact=True)


def test_a_failed_call_is_not_a_success(made):
    with pytest.raises(TrajectoryError, match=r"call_o2: the call did not succeed \(timeout\)"):
        assert_tool_args(made["step"], "query_logistics", {"tracking_no": "SF123456"},
                         which="first", succeeded=True)
    assert_tool_args(made["step"], "query_logistics", which="last", succeeded=True)


def test_counts_and_limits(made):
    with pytest.raises(TrajectoryError, match=r"expected at most 2 turn\(s\) \(model requests\); the run made 3"):
        assert_max_turns(made["run"], 2)
    with pytest.raises(TrajectoryError) as info:
        assert_max_tool_calls(made["run"], 1)
    assert "query_order → query_logistics" in str(info.value)
    assert "→ B call_o2  query_logistics" in str(info.value)     # the call past the limit
    with pytest.raises(TrajectoryError, match="expected query_logistics not to be called"):
        assert_tool_not_used(made["run"], "query_logistics")
    with pytest.raises(TrajectoryError, match=r"to be called 3 time\(s\), it was called 1"):
        assert_tool_used(made["run"], "query_order", times=3)


def test_findings_by_severity(made):
    with pytest.raises(TrajectoryError) as info:
        assert_no_findings(made["proxy_forget"], above="warning")
    text = str(info.value)
    assert "error orphan-tool-message at [1]" in text
    assert "✗ orphan: no assistant tool_calls before it" in text         # the view of [1]
    assert "API says: Invalid parameter" in text
    with pytest.raises(TrajectoryError, match="warning repeated-call"):
        assert_no_findings(made["proxy_forget"])
    with pytest.raises(ValueError):
        assert_no_findings(made["run"], above="fatal")


def test_the_stop_reason(made):
    with pytest.raises(TrajectoryError) as info:
        assert_stop_reason(made["limit"], "completed")
    assert "it stopped with max_turns (the model still wanted tools after 1 turns (--max-turns))" in str(info.value)
    assert_stop_reason(made["limit"], "max_turns")


def test_a_schema_is_checked_as_the_executor_checks_it(made):
    """A remote $ref is never retrieved and patterns match on RE2 (no backtracking)."""
    import http.server
    import threading

    hits = []

    class Counting(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        remote = f"http://127.0.0.1:{server.server_port}/order_id.json"
        # unresolved, so unchecked (as in the executor); fetched, it would fail the call
        assert_tool_args(made["run"], "query_order", schema={
            "type": "object", "properties": {"order_id": {"$ref": remote}}})
    finally:
        server.shutdown()
        server.server_close()
    assert hits == []
    # a pattern that backtracks for ages on Python's re, instant on RE2
    assert_tool_args(made["run"], "query_order", schema={
        "type": "object", "properties": {"order_id": {"not": {"pattern": "^(([A-Z0-9]+-?)+)+!$"}}}})
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        assert_tool_args(made["run"], "query_order", schema={"type": "objekt"})
