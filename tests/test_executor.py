"""Tool execution: every failure is a sanitized result; parallel vs sequential."""

import json
import time

import pytest
import tool_helpers

from agentdbg.engine.executor import ToolExecutor

TOOLS = """
version: 1
defaults: {timeout: 2, parallel: 4}
tools:
  - name: echo
    description: Echo. Use in tests.
    parameters:
      type: object
      properties:
        text: {type: string, description: t}
        n: {type: integer, minimum: 1, description: n}
      required: [text]
    handler: {python: "tool_helpers:echo"}
  - name: sleepy
    description: Sleeps. Use in tests.
    parameters:
      type: object
      properties: {ms: {type: integer}, tag: {type: string}}
    handler: {python: "tool_helpers:sleepy"}
  - name: sleepy_write
    description: Sleeps with a side effect. Use in tests.
    parameters:
      type: object
      properties: {ms: {type: integer}, tag: {type: string}}
    side_effects: true
    handler: {python: "tool_helpers:sleepy"}
  - name: hang
    description: Never answers in time.
    timeout: 0.3
    handler: {python: "tool_helpers:hang"}
  - name: boom
    description: Raises.
    handler: {python: "tool_helpers:boom"}
  - name: nothing
    description: Returns None.
    handler: {python: "tool_helpers:nothing"}
  - name: lookup
    description: Clean not-found.
    parameters: {type: object, properties: {key: {type: string}}, required: [key]}
    handler: {python: "tool_helpers:not_found"}
  - name: unencodable
    description: Returns an object JSON cannot encode.
    handler: {python: "tool_helpers:unencodable"}
  - name: big
    description: Big result.
    max_result_chars: 500
    parameters: {type: object, properties: {n: {type: integer}}}
    handler: {python: "tool_helpers:big"}
  - name: aecho
    description: Async.
    parameters: {type: object, properties: {text: {type: string}}, required: [text]}
    handler: {python: "tool_helpers:async_echo"}
  - name: stub
    description: Fixture.
    handler: {fixture: {status: canned}}
  - name: approve_me
    description: Needs approval.
    approval: always
    side_effects: true
    handler: {fixture: {sent: true}}
  - name: cmd_ok
    description: Command tool.
    parameters: {type: object, properties: {x: {type: integer}}}
    handler: {command: [python, -c, "import json,sys; a=json.load(sys.stdin); print(json.dumps({'double': a['x']*2}))"]}
  - name: cmd_fail
    description: Command exits non-zero.
    handler: {command: [python, -c, "import sys; sys.stderr.write('kaput'); sys.exit(3)"]}
  - name: cmd_garbage
    description: Command prints non-JSON.
    handler: {command: [python, -c, "print('hello, not json')"]}
  - name: cmd_slow
    description: Command that hangs.
    timeout: 0.5
    handler: {command: [python, -c, "import time; time.sleep(20)"]}
  - name: cmd_error_object
    description: Command reporting its own error.
    handler: {command: [python, -c, "print('{\\"ok\\": false, \\"error\\": {\\"type\\": \\"not_found\\", \\"message\\": \\"nope\\"}}')"]}
"""


@pytest.fixture
def executor(tools_from):
    return ToolExecutor(tools_from(TOOLS))


def call(name, arguments="{}", cid=None):
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": cid or f"call_{name}", "type": "function",
            "function": {"name": name, "arguments": arguments}}


def error(outcome):
    assert outcome.ok is False
    body = json.loads(outcome.content)
    assert set(body) == {"ok", "error"} and body["ok"] is False
    assert set(body["error"]) == {"type", "retryable", "message"}
    assert body["error"]["type"] == outcome.error_type
    return body["error"]


def test_success_result_is_json_of_handler_data(executor):
    o = executor.run_one(call("echo", {"text": "你好"}))
    assert o.ok and json.loads(o.content) == {"echo": {"text": "你好"}}
    assert "你好" in o.content  # unicode kept readable


def test_unknown_tool_names_the_whitelist(executor):
    err = error(executor.run_one(call("rm_rf", {})))
    assert err["type"] == "unknown_tool" and "echo" in err["message"] and err["retryable"] is False


@pytest.mark.parametrize("args", ['{"text": "a"', '{"text": "a"}{"text": "b"}', "{'text': 'a'}"])
def test_invalid_json_arguments(executor, args):
    err = error(executor.run_one(call("echo", args)))
    assert err["type"] == "invalid_json" and "not valid JSON" in err["message"]


def test_invalid_arguments_name_the_failing_fields(executor):
    err = error(executor.run_one(call("echo", {"n": 0})))
    assert err["type"] == "invalid_arguments"
    assert "'text' is a required property" in err["message"]
    assert "n: 0 is less than the minimum of 1" in err["message"]
    err = error(executor.run_one(call("echo", "[1, 2]")))
    assert err["type"] == "invalid_arguments" and "must be a JSON object" in err["message"]


def test_python_timeout_is_retryable_and_abandons_the_handler(executor):
    start = time.perf_counter()
    o = executor.run_one(call("hang"))
    assert time.perf_counter() - start < 2
    err = error(o)
    assert err["type"] == "timeout" and err["retryable"] is True
    assert "abandoned" in o.detail and "late result will be discarded" in o.detail


def test_internal_error_is_sanitized_for_the_model_but_complete_for_the_user(executor):
    o = executor.run_one(call("boom"))
    err = error(o)
    assert err["type"] == "internal_error"
    for secret in ("SELECT", "db.internal", "/home/alice", "Traceback", "KeyError"):
        assert secret not in o.content
    assert "Traceback" in o.detail and "db.internal" in o.detail


def test_none_is_an_empty_result_not_success(executor):
    err = error(executor.run_one(call("nothing")))
    assert err["type"] == "empty_result" and "not as an answer" in err["message"]


def test_tool_error_passes_type_and_message(executor):
    err = error(executor.run_one(call("lookup", {"key": "k1"})))
    assert err == {"type": "not_found", "retryable": False, "message": "no record k1"}


def test_unencodable_result_is_internal_error(executor):
    o = executor.run_one(call("unencodable"))
    assert error(o)["type"] == "internal_error" and "cannot be encoded as JSON" in o.content
    assert "not JSON serializable" in o.detail


def test_long_result_is_cut_with_marker(executor):
    o = executor.run_one(call("big", {"n": 10000}))
    assert o.ok and o.truncated_chars > 0
    assert len(o.content) < 700
    assert f"truncated by agentdbg: {o.truncated_chars} of" in o.content
    assert "max_result_chars=500" in o.content


def test_async_and_fixture_handlers(executor):
    assert json.loads(executor.run_one(call("aecho", {"text": "hi"})).content) == {"async": "hi"}
    o = executor.run_one(call("stub"))
    assert o.ok and o.stubbed and json.loads(o.content) == {"status": "canned"}


def test_approval_needed_tool_is_denied_without_approval(executor):
    err = error(executor.run_one(call("approve_me"), approved=lambda c: False))
    assert err["type"] == "denied"
    assert executor.run_one(call("approve_me"), approved=lambda c: True).ok


def test_command_handlers(executor):
    assert json.loads(executor.run_one(call("cmd_ok", {"x": 21})).content) == {"double": 42}
    o = executor.run_one(call("cmd_fail"))
    assert error(o)["type"] == "internal_error" and "status 3" in o.detail and "kaput" in o.detail
    o = executor.run_one(call("cmd_garbage"))
    assert error(o)["type"] == "internal_error" and "not JSON" in o.content
    assert error(executor.run_one(call("cmd_error_object"))) == {
        "type": "not_found", "retryable": False, "message": "nope"}


def test_command_timeout_kills_the_process(executor):
    start = time.perf_counter()
    o = executor.run_one(call("cmd_slow"))
    assert time.perf_counter() - start < 3
    assert error(o)["type"] == "timeout" and "killed" in o.detail


def test_read_only_calls_overlap_in_time(executor):
    tool_helpers.CALLS.clear()
    calls = [call("sleepy", {"ms": 300, "tag": f"r{i}"}, f"c{i}") for i in range(4)]
    start = time.perf_counter()
    outcomes = executor.run(calls, approved=lambda c: True)
    wall = time.perf_counter() - start
    assert [o.call_id for o in outcomes] == ["c0", "c1", "c2", "c3"]
    assert wall < 0.9, f"4 x 300 ms read-only calls took {wall:.2f}s: not concurrent"
    spans = sorted((s, e) for _, s, e in tool_helpers.CALLS)
    assert all(spans[i + 1][0] < spans[i][1] for i in range(3)), "calls did not overlap"


def test_side_effecting_calls_run_one_at_a_time_in_model_order(executor):
    tool_helpers.CALLS.clear()
    calls = [call("sleepy_write", {"ms": 100, "tag": t}, f"w{t}") for t in "abc"]
    outcomes = executor.run(calls, approved=lambda c: True)
    assert [o.call_id for o in outcomes] == ["wa", "wb", "wc"]
    order = [tag for tag, _, _ in tool_helpers.CALLS]
    assert order == ["a", "b", "c"]
    spans = [(s, e) for _, s, e in tool_helpers.CALLS]
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(2)), "side effects overlapped"


def test_results_keep_their_ids_whatever_order_they_finish(executor):
    calls = [call("sleepy", {"ms": 250, "tag": "slow"}, "first"),
             call("sleepy", {"ms": 10, "tag": "fast"}, "second")]
    outcomes = executor.run(calls, approved=lambda c: True)
    assert [(o.call_id, json.loads(o.content)["tag"]) for o in outcomes] == [
        ("first", "slow"), ("second", "fast")]
    assert outcomes[1].ended < outcomes[0].ended  # the second finished first
