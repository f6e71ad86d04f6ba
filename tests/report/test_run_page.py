"""What changed since the previous request (the request diff), a run of several conversations
on one page, and a proxied history that an app sent back re-serialised staying one history."""

from __future__ import annotations

import json

from agentdbg.report.html import render_report
from agentdbg.report.reqdiff import describe, request_diffs
from agentdbg.report.runpage import render_run_report, summarize
from agentdbg.transcript import TranscriptWriter, load_transcript
from agentdbg.transcript.events import Header

USER = {"role": "user", "content": "订单 ORD-2026-001 到哪里了?"}
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "query_order", "arguments": '{"order_id":"ORD-2026-001"}'}}
REPLY = {"role": "assistant", "content": None, "tool_calls": [CALL]}
# what the openai SDK's model_dump(exclude_none=True) sends back: no "content": null, and
# the arguments re-serialised with a space
SENT_BACK = {"role": "assistant", "tool_calls": [
    {**CALL, "function": {"name": "query_order", "arguments": '{"order_id": "ORD-2026-001"}'}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "shipped"}'}
ANSWER = {"role": "assistant", "content": "已发货。"}


def proxied(path, requests: list[tuple[list, dict, dict | None]], number: int = 1):
    """A transcript as the proxy writes one: each request, then the model's reply."""
    w = TranscriptWriter(path, Header(model="demo", provider="proxy", tools=[],
                                      conversation=number, api="chat"))
    for turn, (messages, params, body) in enumerate(requests, 1):
        event = {"turn": turn, "messages": messages, "params": params, "findings": []}
        if body is not None:
            event["body"] = body
        w("request", event)
        w("response", {"turn": turn, "message": REPLY if turn == 1 else ANSWER, "usage": {},
                       "finish_reason": None, "latency_ms": 1.0, "note": None})
    w("stop", {"reason": "completed", "detail": "", "messages": [*requests[-1][0], ANSWER],
               "usage": {}})
    w.close()
    return path


def test_a_reply_sent_back_without_its_null_content_goes_on_with_the_history(tmp_path):
    path = proxied(tmp_path / "t.jsonl", [([USER], {}, None), ([USER, SENT_BACK, RESULT], {}, None)])
    page = render_report(path)
    assert "history changed" not in page
    assert page.count('id="h0-m1"') == 1 and 'id="h1-m1"' not in page


def test_the_request_diff_says_what_was_added_rewritten_and_changed(tmp_path):
    edited = {**USER, "content": "订单 ORD-2026-002 到哪里了?"}
    tools = [{"type": "function", "name": "query_order", "parameters": {}}]
    more = [*tools, {"type": "function", "name": "query_logistics", "parameters": {}}]
    path = proxied(tmp_path / "t.jsonl", [
        ([USER], {"temperature": 0}, {"tools": tools}),
        ([USER, SENT_BACK, RESULT], {"temperature": 0}, {"tools": more}),
        ([edited, SENT_BACK, RESULT], {"temperature": 0.7}, {"tools": more}),
    ])
    diffs = request_diffs(load_transcript(path).events)
    assert describe(diffs[1]) == ["first request of the conversation: 1 message(s)"]
    second = describe(diffs[2])
    assert second == ["+ [1] assistant → query_order", '+ [2] tool "{"status": "shipped"}"',
                      "tool added: query_logistics"]
    third = describe(diffs[3])
    assert third[0] == ("history rewritten from [0]: the previous request had 3 message(s) "
                        "from there, this one has 3")
    assert third[1].startswith("first difference at messages[0].content: recorded \"订单 ORD-2026-001")
    assert "temperature: 0 → 0.7" in third


def test_a_run_of_two_conversations_is_one_page_with_ids_of_their_own(tmp_path):
    a = proxied(tmp_path / "run-conversation-1.jsonl", [([USER], {}, None),
                                                        ([USER, SENT_BACK, RESULT], {}, None)])
    orphan = [USER, RESULT]
    b = proxied(tmp_path / "run-conversation-2.jsonl", [(orphan, {}, None)], number=2)
    summary = summarize([a, b])
    assert summary.requests == 3
    assert summary.by_rule() == [("error", "orphan-tool-message", 1)]
    page = render_run_report([a, b], "run")
    for anchor in ("c1-h0-m1", "c2-h0-m1"):
        assert page.count(f'id="{anchor}"') == 1
    assert 'href="#c1-h0-m2"' in page          # "answered at [2]" links inside its conversation
    assert "since request 1:" in page and json.dumps("<script") not in page
    assert "<script" not in page and "script-src 'none'" in page
