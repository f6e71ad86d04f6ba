"""An approval covers exactly one pending call and is consumed when it runs (issue 11).

The tool below really sends: each call appends its arguments to ``outbox.txt`` in the
test's folder, so "what went out" is read from the file, not from agentdbg's words.
"""

import io
import json

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
OUTBOX_TOOL = '''
import json
def send(to, subject="", body=""):
    with open("outbox.txt", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"to": to, "subject": subject}) + "\\n")
    return {"status": "sent", "to": to}
'''
TOOLS = """
version: 1
tools:
  - name: send_email
    description: Send an e-mail. Use only when the user asks to send one.
    parameters:
      type: object
      properties: {to: {type: string}, subject: {type: string}, body: {type: string}}
      required: [to]
    side_effects: true
    approval: always
    handler: {python: "outbox_tool:send"}
"""


def email(to, subject="hi", id="call_0"):
    return {"name": "send_email", "id": id, "arguments": {"to": to, "subject": subject}}


@pytest.fixture
def outbox(tmp_path):
    (tmp_path / "outbox_tool.py").write_text(OUTBOX_TOOL, encoding="utf-8")
    (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")

    def sent():
        path = tmp_path / "outbox.txt"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        return [json.loads(line) for line in lines]
    return sent


def step(turns, *commands):
    """Drive step mode with ``commands`` over a scripted model; the screen text."""
    from support import scripted

    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.repl.debugger import Debugger
    from agentdbg.toolspec import load_tools

    session = Session.for_question(scripted(*turns), load_tools("tools.yaml"), "q",
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=check_model_request)
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("".join(c + "\r" for c in commands) + "quit\r")
        pipe.close()
        Debugger(session, Console(file=buf, width=200, no_color=True), input=pipe,
                 output=DummyOutput(), history=False).loop()
    return " ".join(buf.getvalue().split())


def test_an_approval_is_not_reused_by_a_later_call_with_the_same_id(outbox):
    # the model reuses call_0 for a different e-mail: the approval of the first must not cover it
    turns = [{"tool_calls": [email("alice@example.com")]},
             {"tool_calls": [email("everyone@example.com", "SPAM")]},
             {"content": "done"}]
    out = step(turns, "n", "n", "approve", "n", "n", "n", "deny", "n", "c")
    assert [m["to"] for m in outbox()] == ["alice@example.com"]
    assert out.count("approval needed before running send_email (call_0)") == 2
    assert "denied: call_0" in out


def test_an_approval_is_not_reused_after_a_rewind(outbox):
    turns = [{"tool_calls": [email("alice@example.com")]},
             {"tool_calls": [email("everyone@example.com", "SPAM")]},
             {"content": "done"}]
    out = step(turns, "n", "n", "approve", "n", "rewind 0", "n", "n", "n", "deny", "n", "c")
    assert [m["to"] for m in outbox()] == ["alice@example.com"]
    assert out.count("approval needed before running send_email (call_0)") >= 2
    assert "denied: call_0" in out


def test_a_denial_is_not_reused_either(outbox):
    turns = [{"tool_calls": [email("alice@example.com")]},
             {"tool_calls": [email("bob@example.com")]},
             {"content": "done"}]
    out = step(turns, "n", "n", "deny", "n", "n", "n", "approve", "n", "c")
    assert [m["to"] for m in outbox()] == ["bob@example.com"]
    assert out.count("approval needed before running send_email (call_0)") == 2


def test_approve_matches_the_id_exactly(outbox):
    turns = [{"tool_calls": [email("one@example.com", id="call_1"),
                             email("ten@example.com", id="call_10")]},
             {"content": "done"}]
    out = step(turns, "n", "n", "approve call_1", "n", "deny call_10", "n", "c")
    assert "approved: call_1 " in out + " " and "approved: call_1," not in out
    assert [m["to"] for m in outbox()] == ["one@example.com"]
    assert "denied: call_10" in out


def test_approve_with_an_unknown_id_names_the_waiting_ones(outbox):
    turns = [{"tool_calls": [email("one@example.com", id="call_12")]}, {"content": "done"}]
    out = step(turns, "n", "n", "approve call_1", "deny call_12", "n", "c")
    assert "no waiting call has the id 'call_1'" in out and "waiting: call_12" in out
    assert outbox() == []


def test_approve_after_a_retry_sees_the_new_call(outbox):
    # approve, then retry before it ran: the new call (same id, other arguments) needs its
    # own decision, and 'approve' must see it
    turns = [{"tool_calls": [email("alice@example.com")]},
             {"tool_calls": [email("everyone@example.com", "SPAM")]},
             {"content": "done"}]
    out = step(turns, "n", "n", "approve", "retry", "n", "n", "approve", "n", "c")
    assert "no call is waiting for approval" not in out
    assert out.count("approved: call_0") == 2
    assert [m["to"] for m in outbox()] == ["everyone@example.com"]


def test_batch_approvals_follow_the_flag_for_every_call(outbox, tmp_path):
    (tmp_path / "s.yaml").write_text(json.dumps({"turns": [
        {"tool_calls": [email("alice@example.com")]},
        {"tool_calls": [email("everyone@example.com", "SPAM")]},
        {"content": "done"}]}), encoding="utf-8")
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "tools.yaml", "--json"])
    assert r.exit_code == 0 and outbox() == []  # denied by default, both times
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--tools", "tools.yaml", "--json",
                            "--approve", "all"])
    assert [m["to"] for m in outbox()] == ["alice@example.com", "everyone@example.com"]


LIBRARY = """
version: 1
tools:
  - name: check_availability
    description: Whether a book can be borrowed now, by ISBN.
    parameters:
      type: object
      properties: {isbn: {type: string, pattern: "^97[89]\\\\d{10}$", description: ISBN-13}}
      required: [isbn]
    handler: {fixture: {available: true, copies: 2}}
  - name: reserve_book
    description: Reserve a book for a library card; it is held for a week.
    parameters:
      type: object
      properties:
        isbn: {type: string, pattern: "^97[89]\\\\d{10}$"}
        card_number: {type: string, pattern: "^M\\\\d{5}$", description: Library card number}
      required: [isbn, card_number]
    side_effects: true
    handler: {fixture: {reservation_id: R-1001, status: reserved}}
"""


@pytest.mark.parametrize("question, wanted", [
    ("Is 9780141036144 available? My card is M12345", ["check_availability"]),
    ("Don't reserve anything, just tell me whether 9780141036144 is available. Card M12345.",
     ["check_availability"]),
    ("Reserve 9780141036144 for card M12345", ["reserve_book"]),
])
def test_the_offline_model_plans_side_effects_only_when_asked(tmp_path, question, wanted):
    (tmp_path / "lib.yaml").write_text(LIBRARY, encoding="utf-8")
    r = runner.invoke(app, ["run", question, "--tools", "lib.yaml", "--approve", "all", "--json"])
    doc = json.loads(r.stdout)
    called = [c["function"]["name"] for m in doc["messages"] for c in m.get("tool_calls") or []]
    assert called == wanted
