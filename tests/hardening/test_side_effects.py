"""Approval before any side effect, in every mode; idempotency keys on retry."""

import io
import json

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.toolspec import bundled_tools_path

runner = CliRunner()
SCRIPT = """
turns:
  - tool_calls: [{name: send_email, id: m1, arguments: {to: a@b.cn, subject: hi, body: b, idempotency_key: k-1}}]
  - content: sent
  - tool_calls: [{name: send_email, id: m2, arguments: {to: a@b.cn, subject: hi, body: b, idempotency_key: k-1}}]
  - content: sent again?
"""


def test_batch_denies_by_default_and_runs_with_approve_all(tmp_path):
    (tmp_path / "s.yaml").write_text(SCRIPT)
    doc = json.loads(runner.invoke(app, ["run", "q", "--script", "s.yaml", "--json"]).stdout)
    assert json.loads(doc["messages"][2]["content"])["error"]["type"] == "denied"
    doc = json.loads(runner.invoke(app, ["run", "q", "--script", "s.yaml", "--json",
                                         "--approve", "all"]).stdout)
    assert json.loads(doc["messages"][2]["content"])["status"] in ("sent", "duplicate_ignored")


def test_step_mode_asks_and_retry_does_not_send_twice(tmp_path, sample_tools):
    import yaml
    from support import scripted

    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.repl.debugger import Debugger
    turns = yaml.safe_load(SCRIPT)["turns"]
    s = Session.for_question(scripted(*turns), sample_tools, "q",
                             RunConfig(approve="ask", stop_on_invalid=False), precheck=check_model_request)
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        # run the email, then 'retry' the final answer: the script's next turn repeats the call
        pipe.send_text("n\rn\rapprove\rn\rn\rretry\rn\rapprove\rn\r")
        pipe.close()
        Debugger(s, Console(file=buf, width=120, no_color=True), input=pipe, output=DummyOutput(),
                 history=False).loop()
    out = buf.getvalue()
    assert "approval needed before running send_email (m1)" in out
    assert "approved: m1" in out and "approved: m2" in out  # every send needed a decision
    results = [json.loads(m["content"]) for m in s.messages if m["role"] == "tool"]
    assert [r["status"] for r in results][-1] == "duplicate_ignored"
    assert len({r["message_id"] for r in results}) == 1  # one e-mail, whatever the retries


def test_replay_never_reruns_side_effects(tmp_path):
    (tmp_path / "s.yaml").write_text(SCRIPT)
    path = tmp_path / "e.jsonl"
    runner.invoke(app, ["run", "q", "--script", "s.yaml", "--approve", "all", "--save", str(path)])
    from sample_tools import shop  # the sample's folder is on sys.path since the run above
    shop._OUTBOX.clear()
    r = runner.invoke(app, ["replay", str(path)])
    assert r.exit_code == 0 and shop._OUTBOX == {}  # nothing was sent again
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", str(bundled_tools_path())])
    assert "side effects: not re-run" in r.stdout and shop._OUTBOX == {}
