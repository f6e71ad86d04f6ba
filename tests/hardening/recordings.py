"""A real recording to mutate: a run with a tool call, a 'fail' fault and an 'edit'."""

import functools
import json
import os
import tempfile


@functools.lru_cache(maxsize=1)
def _events_text() -> str:
    from agentdbg.engine.faults import Fault
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import bundled_tools_path, load_tools
    from agentdbg.transcript import start_transcript

    path = os.path.join(tempfile.mkdtemp(), "base.jsonl")
    s = Session.for_question(OfflineModel(), load_tools(bundled_tools_path()),
                             "订单 ORD-2026-001 到哪里了?", RunConfig(approve="all"))
    writer = start_transcript(s, path, model="offline", provider="offline", base_url=None,
                              question="q")
    s.step()
    s.fail("get_weather", Fault("timeout", ""))  # an action event: fail
    s.step()
    s.edit(1, dict(s.messages[1]))              # an action event: edit
    while not s.done:
        s.step()
    writer.close()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def recording_events() -> list[dict]:
    """A fresh copy of the recording's events (header first)."""
    return [json.loads(line) for line in _events_text().split("\n") if line]


def write_events(path, events) -> str:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                    encoding="utf-8")
    return str(path)


# -- the proxy's recordings: one conversation of each wire format, a call and its result ----------

QUESTION = "订单 ORD-2026-001 到哪里了?"
RESULT = '{"status": "shipped"}'


def _chat_exchanges() -> list[tuple[dict, dict]]:
    tools = [{"type": "function", "function": {"name": "query_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}}}]
    call = {"id": "call_1", "type": "function",
            "function": {"name": "query_order", "arguments": '{"order_id": "ORD-2026-001"}'}}
    asked = {"role": "assistant", "content": None, "tool_calls": [call]}
    user = {"role": "user", "content": QUESTION}
    return [({"model": "m", "messages": [user], "tools": tools},
             {"id": "c1", "object": "chat.completion", "choices": [
                 {"index": 0, "message": asked, "finish_reason": "tool_calls"}],
              "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
            ({"model": "m", "messages": [user, asked, {"role": "tool", "tool_call_id": "call_1",
                                                      "content": RESULT}], "tools": tools},
             {"id": "c2", "object": "chat.completion", "choices": [
                 {"index": 0, "message": {"role": "assistant", "content": "shipped"},
                  "finish_reason": "stop"}]})]


def _responses_exchanges() -> list[tuple[dict, dict]]:
    tools = [{"type": "function", "name": "query_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}}]
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "query_order",
            "arguments": '{"order_id": "ORD-2026-001"}', "status": "completed"}
    user = {"role": "user", "content": QUESTION}
    answer = {"id": "resp_2", "object": "response", "status": "completed", "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "shipped", "annotations": []}]}]}
    return [({"model": "m", "input": [user], "tools": tools},
             {"id": "resp_1", "object": "response", "status": "completed", "output": [call],
              "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}),
            ({"model": "m", "input": [user, call, {"type": "function_call_output", "call_id": "call_1",
                                                   "output": RESULT}], "tools": tools}, answer),
            ({"model": "m", "previous_response_id": "resp_1", "tools": tools, "input": [
                {"type": "function_call_output", "call_id": "call_1", "output": RESULT}]}, answer)]


def _anthropic_exchanges() -> list[tuple[dict, dict]]:
    tools = [{"name": "query_order", "input_schema": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}}]
    use = {"type": "tool_use", "id": "toolu_1", "name": "query_order",
           "input": {"order_id": "ORD-2026-001"}}
    user = {"role": "user", "content": QUESTION}
    return [({"model": "m", "max_tokens": 100, "messages": [user], "tools": tools},
             {"id": "msg_1", "type": "message", "role": "assistant", "content": [use],
              "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}),
            ({"model": "m", "max_tokens": 100, "tools": tools, "messages": [
                user, {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                              "content": RESULT}]}]},
             {"id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "end_turn",
              "content": [{"type": "text", "text": "shipped"}]})]


EXCHANGES = {"chat": _chat_exchanges, "responses": _responses_exchanges,
             "anthropic": _anthropic_exchanges}


def proxy_exchanges(wire: str) -> list[tuple[dict, dict]]:
    """A fresh copy of one conversation's (request body, response body) pairs."""
    return EXCHANGES[wire]()


def analyse(wire: str, exchanges, folder, stream: bool = False) -> tuple[list, list[str]]:
    """The proxy's analysis of ``exchanges`` (bodies, or raw bytes) as its analyst runs it:
    (the transcripts it wrote, what it printed)."""
    import io

    from rich.console import Console

    from agentdbg.server.proxy.analyst import Analysis, _run_job
    from agentdbg.server.proxy.conversations import Tracker
    from agentdbg.server.proxy.view import ProxyView

    tracker = Tracker(folder, "http://upstream.invalid/v1")
    out = io.StringIO()
    analysis = Analysis(tracker, ProxyView(Console(file=out, width=100), tracker.redactor), "openai")
    for n, (request, response) in enumerate(exchanges, start=1):
        raw = request if isinstance(request, bytes) else json.dumps(request).encode()
        data = response if isinstance(response, bytes) else json.dumps(response).encode()
        _run_job(analysis, ("request", n, raw, "127.0.0.1:1", False, wire))
        _run_job(analysis, ("response", n, 200, data, 1.0, stream))
    paths = _run_job(analysis, ("close",))
    return paths, out.getvalue().splitlines()


def proxy_recording_events(wire: str) -> list[dict]:
    """The events of the transcript the proxy writes for one conversation in ``wire``."""
    folder = tempfile.mkdtemp()
    (path,), _ = analyse(wire, proxy_exchanges(wire), folder)
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
