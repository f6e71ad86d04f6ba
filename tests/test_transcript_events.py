"""The typed transcript events: one writer, one reader, each message stored once (version 2).

A transcript written now reads back as what was recorded (the whole messages of each request,
its params with the tools, a proxy request's native body), while the file holds each message
once: the header's ``initial_messages`` are the start the first request refers to, the stop
event refers to the last request, a native body keeps only what the previous body did not hold.
"""

from __future__ import annotations

import importlib.resources
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.engine.session import RunConfig, Session
from agentdbg.providers.offline import OfflineModel
from agentdbg.transcript import load_transcript, start_transcript
from agentdbg.transcript.events import Other, Request, Response, Stop

sys.path.insert(0, str(Path(__file__).resolve().parent / "hardening"))
from recordings import analyse, proxy_exchanges

runner = CliRunner()
# text that repeats nowhere, ~60 KB: each copy of it in a file is one stored copy of the message
BIG = "".join(f"订单{n:06d} " for n in range(6000))


def copies(path: Path) -> int:
    return path.read_text(encoding="utf-8").count(json.dumps(BIG, ensure_ascii=False)[-40:-1])


def with_big_question(wire: str) -> list:
    exchanges = proxy_exchanges(wire)
    for request, _ in exchanges:
        for item in request.get("input" if wire == "responses" else "messages") or []:
            if isinstance(item, dict) and item.get("role") == "user" and isinstance(item.get("content"), str):
                item["content"] = BIG
    return exchanges


@pytest.mark.parametrize("wire,stored", [("chat", 1), ("responses", 2), ("anthropic", 2)])
def test_a_proxied_message_is_stored_once_and_read_back_whole(tmp_path, wire, stored):
    """Chat Completions: once (the header; the first request and the stop event refer to it).
    Responses / Anthropic: the chat form once and the native body once, not once per request."""
    exchanges = with_big_question(wire)
    (path,), _ = analyse(wire, exchanges, tmp_path)
    path = Path(path)
    assert copies(path) == stored
    t = load_transcript(path)
    assert t.header.question is not None and len(t.header.question) <= 301   # a preview
    requests = [e for e in t.events if isinstance(e, Request)]
    assert len(requests) == len(exchanges)
    for event, (body, _) in zip(requests, exchanges):
        assert event.messages is not None and any(
            isinstance(m, dict) and m.get("content") == BIG for m in event.messages)
        if wire != "chat":
            assert event.body == body            # the body as the app sent it, whole
    assert t.stop is not None and t.final_messages()[:len(requests[-1].messages or [])] == \
        requests[-1].messages
    for args in (["replay", str(path)], ["check", str(path)]):
        r = runner.invoke(app, args, env={"AGENTDBG_HOME": str(tmp_path / "home")})
        assert r.exit_code == 0, r.output


def test_a_run_stores_its_question_and_its_tools_once(tmp_path, sample_tools):
    question = "订单 ORD-2026-001 到哪里了? " + BIG
    s = Session.for_question(OfflineModel(), sample_tools, question, RunConfig(approve="all"))
    path = tmp_path / "t.jsonl"
    writer = start_transcript(s, path, model="m", provider="offline", base_url=None, question=question)
    while not s.done:
        s.step()
    writer.close()
    assert copies(path) == 1
    description = sample_tools.openai_tools()[0]["function"]["description"]
    assert path.read_text(encoding="utf-8").count(json.dumps(description, ensure_ascii=False)) == 1
    t = load_transcript(path)
    requests = [e for e in t.events if isinstance(e, Request)]
    assert len(requests) == 3 and requests[0].prefix == 1 and requests[0].append == []
    assert all(e.param_map.get("tools") == t.header.tools for e in requests)   # restored on read
    assert [m["role"] for m in requests[-1].messages or []] == ["user", "assistant", "tool",
                                                                 "assistant", "tool"]
    assert t.final_messages() == s.messages
    stop = t.stop
    assert isinstance(stop, Stop) and stop.prefix == 5 and len(stop.append or []) == 1
    assert runner.invoke(app, ["replay", str(path)],
                         env={"AGENTDBG_HOME": str(tmp_path / "home")}).exit_code == 0


def write(tmp_path: Path, *events: dict, header: dict | None = None, name: str = "t.jsonl") -> str:
    header = {"type": "header", "format": "agentdbg-transcript", "version": 2,
              "initial_messages": [{"role": "user", "content": "q"}], **(header or {})}
    path = tmp_path / name
    path.write_text("".join(json.dumps(e) + "\n" for e in (header, *events)), encoding="utf-8")
    return str(path)


REQUEST = {"type": "request", "seq": 1, "turn": 1, "prefix": 1, "append": []}
REPLY = {"type": "response", "seq": 2, "turn": 1, "message": {"role": "assistant", "content": "a"}}


@pytest.mark.parametrize("events,said", [
    ([{**REQUEST, "prefix": 2}], "t.jsonl:2: request event: field 'prefix' is 2, but the request "
                                 "before it held 1 message(s)"),
    ([REQUEST, {**REPLY, "usage": {"prompt_tokens": "12"}}],
     "t.jsonl:3: response event: field 'usage.prompt_tokens' must be a number or null"),
    ([REQUEST, {**REPLY, "message": {"role": "assistant", "tool_calls": [1]}}],
     "t.jsonl:3: response event: field 'message.tool_calls' must hold objects"),
    ([{"type": "action", "seq": 1, "action": "edit", "index": 0}],
     "t.jsonl:2: edit action event without its field 'after'"),
    ([{"type": "action", "seq": 1, "action": "inject", "pending": True}],
     "t.jsonl:2: inject action event without its field 'tool_call_id'"),
    ([REQUEST, {**REPLY, "latency_ms": "slow"}],
     "t.jsonl:3: response event: field 'latency_ms' must be a number or null, got \"slow\""),
    ([{**REQUEST, "append": [{"role": "user"}, 7]}],
     "t.jsonl:2: request event: field 'append[1]' must be an object, got 7"),
    ([{"type": "request", "seq": 1, "append": []}], "t.jsonl:2: request event without its field 'prefix'"),
    ([{**REQUEST, "body": {"input": [1]}, "body_prefix": {"input": 1}}],
     "t.jsonl:2: request event: field 'body_prefix.input' is 1, but the body before it has no such"),
    ([{"type": "stop", "seq": 1, "reason": "completed", "prefix": 3, "append": []}],
     "t.jsonl:2: stop event: field 'prefix' is 3"),
])
def test_a_field_of_the_wrong_type_is_one_line_naming_the_line_and_the_field(tmp_path, events, said):
    path = write(tmp_path, *events)
    for args in (["replay", path], ["check", path], ["report", path, "-o", str(tmp_path / "r.html")]):
        r = runner.invoke(app, args, env={"AGENTDBG_HOME": str(tmp_path / "home")})
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and said in r.stderr, (args, r.output)


def test_an_event_of_an_unknown_kind_is_kept_and_passed_over(tmp_path):
    path = write(tmp_path, REQUEST, {"type": "thought", "seq": 2, "text": "hm"}, {**REPLY, "seq": 3},
                 {"type": "stop", "seq": 4, "reason": "completed", "prefix": 1,
                  "append": [REPLY["message"]]})
    t = load_transcript(path)
    assert isinstance(t.events[1], Other) and t.events[1].data["text"] == "hm"
    assert isinstance(t.events[2], Response)
    r = runner.invoke(app, ["replay", path], env={"AGENTDBG_HOME": str(tmp_path / "home")})
    assert r.exit_code == 0, r.output


def test_a_recorded_finding_keeps_its_path_and_line():
    from agentdbg.checker import Finding
    from agentdbg.report.adapter import finding_from_dict

    f = Finding("missing-tool-response", "error", 3, "no result", "API words", "call_1", line=7,
                path="input[5]", api_source="Anthropic")
    assert finding_from_dict(f.to_dict()) == f


def test_the_package_ships_its_types():
    assert importlib.resources.files("agentdbg").joinpath("py.typed").is_file()


def test_a_session_event_of_odd_types_is_written_as_it_came_never_a_crash(tmp_path):
    """A provider's odd value (a finish_reason that is a number) never stops the run mid-way; the
    line is written as it came, and reading it back names the line and the field."""
    from agentdbg.errors import InputError
    from agentdbg.transcript import TranscriptWriter
    from agentdbg.transcript.events import Header

    writer = TranscriptWriter(tmp_path / "t.jsonl", Header(initial_messages=[{"role": "user"}]))
    writer("request", {"turn": 1, "messages": [{"role": "user"}], "params": {}})
    writer("response", {"turn": 1, "message": {"role": "assistant", "content": "a"}, "finish_reason": 5})
    writer.close()
    with pytest.raises(InputError) as info:
        load_transcript(tmp_path / "t.jsonl")
    assert info.value.message.endswith("t.jsonl:3: response event: field 'finish_reason' must be "
                                       "a string or null, got 5")


def test_a_conversation_of_a_multi_agent_run_reads_back_its_agent_and_the_call_that_started_it(tmp_path):
    """The header names the run, the agent and the call that started the conversation; an agent
    learned later is an ``agent`` event; a transcript without them reads as before."""
    header = {"run": "demo", "agent": "researcher",
              "started_by": {"conversation": 1, "call_id": "toolu_01", "tool": "Agent"}}
    path = write(tmp_path, REQUEST, {**REPLY}, header=header)
    t = load_transcript(path)
    assert (t.header.run, t.agent) == ("demo", "researcher")
    assert (t.header.started_by.conversation, t.header.started_by.call_id,
            t.header.started_by.kind) == (1, "toolu_01", "subagent")
    named = write(tmp_path, REQUEST, {"type": "agent", "seq": 2, "turn": 1, "name": "WeatherAgent"},
                  {**REPLY, "seq": 3}, name="n.jsonl")
    assert load_transcript(named).agent == "WeatherAgent"
    # the starting conversation may be unknown (an imported subagent's), never of the wrong type
    bad = write(tmp_path, REQUEST, header={"started_by": {"conversation": "one", "call_id": "x"}}, name="b.jsonl")
    r = runner.invoke(app, ["replay", bad], env={"AGENTDBG_HOME": str(tmp_path / "home")})
    assert r.exit_code == 2 and "started_by.conversation" in r.stderr, r.output
