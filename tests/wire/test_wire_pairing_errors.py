"""Responses pairing (the view's data), error bodies with the real statuses, dispatch by format."""

from agentdbg.checker.formats import check_document, check_responses
from agentdbg.wire import anthropic_reply, codec, responses_reply
from agentdbg.wire.pairing import analyze


def pair_responses(items, **kw):
    return analyze(codec.get("responses"), items, **kw)


def fc(cid, kind="function_call"):
    return {"type": kind, "call_id": cid, "name": "w", "arguments": "{}"}


def out(cid, kind="function_call_output"):
    return {"type": kind, "call_id": cid, "output": "x"}


def test_pair_responses_labels_locations_and_statuses():
    items = [{"role": "user", "content": "q"}, fc("call_a"), fc("call_b"), fc("call_c", "custom_tool_call"),
             out("call_b"), out("call_a"), out("call_a"), out("call_c"), out("call_z"),
             {"type": "function_call_output", "output": "x"}]
    p = pair_responses(items)
    assert p.labels == {"call_a": "A", "call_b": "B", "call_c": "C"}
    assert p.answer_of == {(1,): (5,), (2,): (4,)} and (3,) in p.calls
    assert p.status == {(4,): "ok", (5,): "ok", (6,): "duplicate", (7,): "mismatch", (8,): "orphan",
                        (9,): "missing_id"}
    assert p.call_of == {(4,): (2,), (5,): (1,), (6,): (1,), (7,): (3,)}
    assert p.kinds[(3,)] == "custom_tool_call" and codec.get("responses").path((8,)) == "input[8]"
    assert p.notes == []


def test_pair_responses_continuation_without_and_with_prior():
    p = pair_responses([out("call_a")], continued="the stored response resp_1 (previous_response_id)")
    assert p.status == {(0,): "external"} and "cannot be known here" in p.notes[0]
    p = pair_responses([out("call_a"), out("call_q")], continued="x", prior=[fc("call_a")])
    assert p.status == {(0,): "external", (1,): "orphan"}


def test_openai_error_bodies_have_the_real_shape_and_status():
    assert responses_reply.error_body("bad", param="input") == {
        "error": {"message": "bad", "type": "invalid_request_error", "param": "input", "code": None}}
    status, body = responses_reply.rejection(check_responses([{"role": "user", "content": "q"}, fc("call_a")]))
    assert status == 400 and body == {"error": {
        "message": "No tool output found for function call call_a.", "type": "invalid_request_error",
        "param": "input", "code": None}}
    status, body = responses_reply.rejection(check_responses(
        {"store": False, "input": [{"id": "rs_1", "type": "reasoning", "summary": []}, fc("c1"), out("c1")]}))
    assert status == 404 and body["error"]["message"].startswith("Item with id 'rs_1' not found.")
    status, body = responses_reply.rejection(check_responses(
        [{"id": "item_1", "type": "function_call", "call_id": "c", "name": "w", "arguments": "{}"}, out("c")]))
    assert (status, body["error"]["param"], body["error"]["code"]) == (400, "input[0].id", "invalid_id_prefix")
    # warnings alone are not rejected
    assert responses_reply.rejection(check_responses([fc("c"), out("c"), out("c")])) is None


def test_anthropic_error_bodies_have_the_real_shape_and_status():
    assert anthropic_reply.error_body("bad") == {
        "type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    assert anthropic_reply.error_body("slow down", "rate_limit_error")["error"]["type"] == "rate_limit_error"
    assert anthropic_reply.ERROR_STATUS["overloaded_error"] == 529
    found = check_document([{"role": "user", "content": "q"},
                            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                                               "name": "w", "input": {}}]}])
    status, body = anthropic_reply.rejection(found)
    assert status == 400 and body["error"]["message"].startswith("messages.1: `tool_use` ids were found")


def test_check_document_dispatches_by_detected_or_forced_format():
    chat = [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c", "content": "x"}]
    assert [f.rule for f in check_document(chat)] == ["orphan-tool-message"]
    assert [f.rule for f in check_document([out("c")])] == ["orphan-tool-message"]
    assert [f.path for f in check_document([out("c")])] == ["input[0]"]
    assert check_document({"foo": 1}) == []
    assert [f.rule for f in check_document({"input": [fc("c")]}, fmt="responses")] == ["missing-tool-response"]


def test_wire_modules_import_only_the_standard_library():
    """Pure modules: a relay or the CLI can import them without pulling a client library."""
    import subprocess
    import sys

    code = ("import sys\n"
            "before = set(sys.modules)  # whatever the interpreter's site hooks load (e.g. .pth files)\n"
            "import agentdbg.wire, agentdbg.wire.responses_stream, agentdbg.wire.anthropic_stream\n"
            "import agentdbg.wire.pairing, agentdbg.checker.formats\n"
            "outside = sorted({m.split('.')[0] for m in set(sys.modules) - before}"
            " - set(sys.stdlib_module_names)"
            " - {'agentdbg', '__main__', '_distutils_hack', '__editable___agentdbg_cli_0_1_0_finder'})\n"
            "print(','.join(outside))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""
