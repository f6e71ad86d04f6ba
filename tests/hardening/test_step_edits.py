"""A step-mode ``edit`` that puts non-objects into ``tool_calls`` (issue 21): refused in one
line, the message unchanged; ``continue`` goes on and the session's own recording replays.
Before, ``continue`` raised ``AttributeError`` and the recording could not be replayed."""

import json
import sys

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.providers.offline import OfflineModel

ORDER_Q = "订单 ORD-2026-001 到哪里了?"


def drive(session, *lines, transcript=None):
    import io

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agentdbg.render.console import PipedConsole
    from agentdbg.repl.debugger import Debugger

    buf = io.StringIO()
    console = PipedConsole(file=buf, width=110, no_color=True, highlight=False)
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()
        Debugger(session, console, input=pipe, output=DummyOutput(), history=False,
                 transcript=transcript).loop()
    return buf.getvalue()


@pytest.mark.parametrize("calls", [[5], ["call_1"], [None, {"id": "x"}], [[]]])
def test_edit_with_calls_that_are_not_objects_is_refused(sample_tools, tmp_path, monkeypatch, calls):
    from agentdbg.transcript import start_transcript

    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      f"m['tool_calls'] = {calls!r}\njson.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    s = Session.for_question(OfflineModel(), sample_tools, ORDER_Q, RunConfig(approve="all"))
    path = tmp_path / "step.jsonl"
    writer = start_transcript(s, path, model="offline", provider="offline", base_url=None,
                              question=ORDER_Q)
    out = drive(s, "n", "edit 1", "c", transcript=writer)
    writer.close()
    assert "*** tool_calls[" in out and "is not an object" in out and "message unchanged" in out
    assert s.stop_reason is StopReason.COMPLETED and not s.actions
    r = CliRunner().invoke(app, ["replay", str(path)])
    assert r.exit_code == 0, r.output


def test_the_engine_refuses_it_too(sample_tools):
    s = Session.for_question(OfflineModel(), sample_tools, ORDER_Q, RunConfig(approve="all"))
    s.step()
    before = json.dumps(s.messages)
    with pytest.raises(ValueError, match=r"tool_calls\[0\] is not an object"):
        s.edit(1, {"role": "assistant", "content": None, "tool_calls": [5]})
    assert json.dumps(s.messages) == before
    while not s.done:
        s.step()
    assert s.stop_reason is StopReason.COMPLETED
