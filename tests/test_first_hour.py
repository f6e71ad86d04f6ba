"""What a newcomer hit in the first hour (issue 25), each fixed where it happens."""

from __future__ import annotations

import json
import sys

from test_repl import drive, session_for


def test_a_result_edited_to_a_success_no_longer_shows_the_injected_error(sample_tools, tmp_path,
                                                                         monkeypatch):
    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      "m['content'] = json.dumps({'status': 'shipped', 'tracking_no': 'SF123456'})\n"
                      "json.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    s = session_for(sample_tools)
    _, out, _ = drive(s, "n", "inject call_o1 rate_limited", "n", "edit 2", "messages")
    assert "error: rate_limited (retryable) · injected fault" in out     # before the edit
    line = next(ln for ln in out[out.rindex("[2] tool"):].splitlines() if " ms" in ln)
    assert "[edited by you]" in line and "rate_limited" not in line and "injected" not in line
    assert json.loads(s.messages[2]["content"])["tracking_no"] == "SF123456"


def test_replaying_a_step_session_labels_your_actions_where_they_happened(sample_tools, tmp_path,
                                                                          monkeypatch):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      "m['content'] = json.dumps({'status': 'lost'})\njson.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    from agentdbg.transcript import start_transcript

    saved = tmp_path / "lesson.jsonl"
    s = session_for(sample_tools)
    writer = start_transcript(s, saved, model="offline", provider="offline", base_url=None,
                              question=s.messages[0]["content"])
    drive(s, "n", "n", "edit 2", "drop 2", "rewind 1", "retry", "c", transcript=writer)
    writer.close()
    r = CliRunner().invoke(app, ["replay", str(saved)])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("✎ ")]
    assert lines == ["✎ you edited message [2] (recorded; re-applied here)",
                     "✎ you dropped message [2] (recorded; re-applied here)",
                     "✎ you rewound to message [1] (cut 0 message(s)) (recorded; re-applied here)",
                     "✎ you asked the model again (retry): cut 1 message(s) from [1] (recorded; "
                     "re-applied here)"]
