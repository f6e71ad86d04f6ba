"""Step mode on MCP tools through prompt_toolkit's pipe input: fail, inject, rpc, approve, edit.

One module-wide tool set: mcp-server-time (third party, unchanged) and the demo server."""

import io
import json
import sys

import pytest
from mcp_helpers import DEMO, read_events
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from support import scripted

from agentdbg.checker import check_model_request
from agentdbg.drivers.launch import close_servers, load_run_tools, open_servers
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.repl.debugger import Debugger

TIME = "python -m mcp_server_time --local-timezone Europe/Paris"


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    return tmp_path_factory.mktemp("mcp-step") / "events.jsonl"


@pytest.fixture(scope="module")
def toolset(events, tmp_path_factory):
    folder = tmp_path_factory.mktemp("mcp-step-tools")
    (folder / "tools.yaml").write_text(
        "version: 1\nmcp_servers:\n  - name: demo\n    command: python\n"
        f"    args: [{json.dumps(str(DEMO))}]\n"
        f"    env: {{AGENTDBG_MCP_TEST_EVENTS: {json.dumps(str(events))}}}\n")
    tools = load_run_tools(folder / "tools.yaml", [TIME])
    open_servers(tools, Console(file=io.StringIO()))
    yield tools
    close_servers(tools)


def drive(toolset, *lines, turns):
    session = Session.for_question(scripted(*turns), toolset, "q", RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=lambda r: check_model_request(r))
    buf = io.StringIO()
    console = Console(file=buf, width=120, no_color=True, highlight=False)
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()
        Debugger(session, console, input=pipe, output=DummyOutput(), history=False).loop()
    return session, buf.getvalue()


def call(name, args, cid):
    return {"name": name, "arguments": args, "id": cid}


def test_fail_inject_and_rpc_on_mcp_server_time(toolset):
    s, out = drive(toolset, "n", "fail get_current_time timeout", "n", "rpc call_2", "rpc call_1",
                   "inject call_2 not_found", "n", "inject call_3 internal_error", "n", "rpc 5", "n",
                   turns=[{"tool_calls": [call("get_current_time", {"timezone": "Asia/Tokyo"}, "call_1"),
                                          call("convert_time", {"source_timezone": "Europe/Paris",
                                                                "time": "09:30",
                                                                "target_timezone": "Asia/Tokyo"}, "call_2")]},
                          {"tool_calls": [call("get_current_time", {"timezone": "Europe/Paris"}, "call_3")]},
                          {"content": "done"}])
    assert s.stop_reason is StopReason.COMPLETED
    assert "the next call of get_current_time will return the timeout fault" in out
    assert json.loads(s.messages[2]["content"])["error"]["type"] == "timeout"          # never ran
    # convert_time ran on the server; its JSON-RPC exchange is there to see
    assert "JSON-RPC exchange of call_2 convert_time (MCP server 'mcp_server_time', tool 'convert_time')" in out
    assert '"method": "tools/call"' in out and '"time_difference": "+8.0h"' in out
    assert "*** call_1 get_current_time: no JSON-RPC exchange: an injected fault answered it" in out
    # a finished MCP result replaced by a fault; a pending MCP call answered by one
    assert "message 3 now holds the not_found fault" in out
    assert json.loads(s.messages[3]["content"])["error"]["type"] == "not_found" and s.marks[3] == {"injected"}
    assert "call call_3 will get the internal_error fault: the tool does not run" in out
    assert json.loads(s.messages[5]["content"])["error"]["type"] == "internal_error"
    assert "*** call_3 get_current_time: no JSON-RPC exchange: an injected fault answered it" in out


def test_approve_then_edit_a_destructive_mcp_tools_result(toolset, events, tmp_path, monkeypatch):
    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      "m['content'] = 'nothing was deleted'\njson.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    s, out = drive(toolset, "n", "n", "approve", "n", "edit 2", "n",
                   turns=[{"tool_calls": [call("delete_note", {"note_id": "n7"}, "call_d")]},
                          {"content": "done"}])
    assert "approval needed before running delete_note (call_d): 'approve' or 'deny'" in out
    assert s.messages[2]["content"] == "nothing was deleted" and "message 2 edited" in out
    assert s.outcome_at[2].content == "deleted n7"             # what the server answered
    assert {"event": "delete_note", "note_id": "n7"}.items() <= next(
        e for e in read_events(events) if e["event"] == "delete_note").items()
    assert s.stop_reason is StopReason.COMPLETED


def test_deny_leaves_the_server_untouched_and_the_checker_reads_mcp_schemas(toolset, events):
    before = [e for e in read_events(events) if e["event"] == "delete_note"]
    s, out = drive(toolset, "n", "n", "deny", "n", "rpc call_x", "n",
                   turns=[{"tool_calls": [call("delete_note", {"note_id": "n8"}, "call_x"),
                                          call("lookup_city", {"city": 3}, "call_y")]},
                          {"content": "done"}])
    assert ("! warning arguments-schema-mismatch: tool_calls[1] arguments fail the 'lookup_city' schema: "
            "city: 3 is not of type 'string'") in " ".join(out.split())
    assert json.loads(s.messages[2]["content"])["error"]["type"] == "denied"
    assert json.loads(s.messages[3]["content"])["error"]["type"] == "invalid_arguments"
    assert "no JSON-RPC exchange: it failed before reaching the server (denied)" in out
    assert [e for e in read_events(events) if e["event"] == "delete_note"] == before
