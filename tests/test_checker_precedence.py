"""One finding per defect: the five precedence rules of PROTOCOL.md."""

from test_checker_rules import WEATHER, U, asst, call, found, tool


def test_1_idless_call_is_reported_once_and_claims_empty_id_results():
    msgs = [U, asst(call(None)), {"role": "tool", "tool_call_id": "", "content": "{}"}]
    assert found(msgs) == [("tool-call-missing-id", "error", 1, None)]


def test_2_mismatch_or_missing_id_suppresses_missing_response():
    assert found([U, asst(call("a")), tool("b")]) == [("tool-call-id-mismatch", "error", 2, "b")]
    assert found([U, asst(call("a")), {"role": "tool", "content": "x"}]) == [
        ("tool-message-missing-id", "error", 2, None)]


def test_3_late_results_after_an_interloper_report_only_interleaved():
    msgs = [U, asst(call("a"), call("b")), {"role": "user", "content": "别忘了带伞"},
            tool("a"), tool("b")]
    assert found(msgs) == [("interleaved-message", "error", 2, "a")]


def test_3_partly_late_still_reports_the_ids_never_answered():
    msgs = [U, asst(call("a"), call("b")), {"role": "user", "content": "?"}, tool("a")]
    assert found(msgs) == [("missing-tool-response", "error", 1, "b"),
                           ("interleaved-message", "error", 2, "a")]


def test_4_a_run_of_orphans_is_one_finding():
    msgs = [tool("x"), tool("y"), tool("z"), U, tool("w")]
    assert found(msgs) == [("orphan-tool-message", "error", 0, "x"),
                           ("orphan-tool-message", "error", 4, "w")]


def test_5_argument_checks_stop_at_the_first_failure():
    body = {"tools": [WEATHER]}
    # not a string: no JSON, object, tool or schema findings for the same call
    assert [r for r, *_ in found([U, asst(call("a", name="nope", args={"x": 1})), tool("a")], **body)] == [
        "arguments-not-string"]
    # invalid JSON on an unknown tool: only the JSON finding
    assert [r for r, *_ in found([U, asst(call("a", name="nope", args="{")), tool("a")], **body)] == [
        "arguments-invalid-json"]
    # unknown tool with schema-breaking args (about to be executed): only unknown-tool
    assert [r for r, *_ in found([U, asst(call("a", name="nope", args='{"q": 1}'))], **body)] == [
        "missing-tool-response", "unknown-tool"]
    # malformed (no type) stops everything else for that call
    bad = {"id": "a", "function": {"name": "nope", "arguments": "{"}}
    assert [r for r, *_ in found([U, asst(bad), tool("a")], **body)] == ["tool-call-malformed"]


def test_seed_pitfall_forgotten_assistant_message():
    """The seeds' first pitfall: results appended, the assistant message never was."""
    msgs = [{"role": "system", "content": "你是一个智能助手"}, U,
            tool("call_abc123", '{"temperature": 26, "condition": "小雨"}')]
    assert found(msgs) == [("orphan-tool-message", "error", 2, "call_abc123")]
