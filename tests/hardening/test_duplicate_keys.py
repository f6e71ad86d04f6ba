"""Tool-call arguments that repeat a key (issue 21): ``{"to": "alice@…", "to": "attacker@…"}``.

Every JSON parser keeps the last value. The step view, the pending line and the tool now
all show and use that value (the view says a key repeats); the checker flags it
(``arguments-duplicate-key``, a warning: the API accepts it, the reader is misled); the
executor runs a read-only call with the last value and notes it, and refuses a call with
side effects (its approval may have been given on the first value)."""

import io
import json

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from support import scripted

from agentdbg.checker import check
from agentdbg.checker.formats import check_responses
from agentdbg.engine.session import RunConfig, Session
from agentdbg.render.console import PipedConsole
from agentdbg.render.view import render_messages
from agentdbg.repl.debugger import Debugger

ARGS = '{"to": "alice@example.com", "to": "attacker@evil.example", "body": "hi"}'
TOOLS = """
version: 1
tools:
  - name: send_email
    description: Send an email. Use when asked to send one.
    parameters: {type: object, properties: {to: {type: string}, body: {type: string}}}
    side_effects: true
    handler: {fixture: {"sent": true}}
  - name: look_up
    description: Look an address up. Use when asked.
    parameters: {type: object, properties: {to: {type: string}, body: {type: string}}}
    handler: {fixture: {"found": true}}
"""


def test_the_checker_flags_it_in_chat_and_responses():
    body = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "send_email", "arguments": ARGS}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "{}"}]}
    (found,) = [f for f in check(body) if f.rule == "arguments-duplicate-key"]
    assert found.severity == "warning" and found.index == 1 and "'to'" in found.message
    responses = {"input": [{"role": "user", "content": "q"},
                           {"type": "function_call", "call_id": "c1", "name": "send_email",
                            "arguments": ARGS},
                           {"type": "function_call_output", "call_id": "c1", "output": "{}"}]}
    assert [f.rule for f in check_responses(responses)] == ["arguments-duplicate-key"]


def session(tools_from, name):
    turns = [{"tool_calls": [{"name": name, "id": "c1", "arguments": ARGS}]}, {"content": "done"}]
    return Session.for_question(scripted(*turns), tools_from(TOOLS), "q", RunConfig(approve="all"))


def test_a_read_only_call_runs_with_the_last_value_and_says_so(tools_from):
    s = session(tools_from, "look_up")
    s.step()
    s.step()
    (outcome,) = s.outcomes
    assert outcome.ok and "arguments repeat the key 'to': the last value was used" in outcome.note


def test_a_call_with_side_effects_is_refused(tools_from):
    s = session(tools_from, "send_email")
    s.step()
    s.step()
    (outcome,) = s.outcomes
    assert not outcome.ok and outcome.error_type == "invalid_arguments"
    assert "repeat the key 'to'" in json.loads(outcome.content)["error"]["message"]


def test_the_view_and_the_pending_line_show_what_the_tool_gets(tools_from):
    s = session(tools_from, "look_up")
    s.step()                                                    # the model's call, pending
    buf = io.StringIO()
    Console(file=buf, width=200, no_color=True).print(render_messages(s.messages, in_progress=True))
    view = buf.getvalue()
    assert "attacker@evil.example" in view and "alice@example.com" not in view
    assert "repeats the key 'to': the tool gets the last value" in view
    out = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("quit\ry\r")
        pipe.close()
        Debugger(s, PipedConsole(file=out, width=200, no_color=True, highlight=False), input=pipe,
                 output=DummyOutput(), history=False).loop()
    (pending,) = [line for line in out.getvalue().splitlines() if line.startswith("▶ next: execute")]
    assert "attacker@evil.example" in pending and "alice@example.com" not in pending, pending
    assert "repeats the key 'to'" in pending
