"""Without ``--content`` an export carries nothing that was said (issue 21): not the question
(the run's name is made from it), not the argument values a finding quotes, not the tool
descriptions of the tools file — after the fact (``export``) and live (``run --otlp``)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.report import semconv as sc

from .otlp_receiver import Receiver, attributes

runner = CliRunner()
QUESTION = "my password is hunter2, look it up"
MARKERS = ("hunter2", "DESCRIPTION-MARKER", "VALUE-MARKER")
TOOLS = """
version: 1
tools:
  - name: lookup
    description: DESCRIPTION-MARKER. Use when asked to look something up.
    parameters:
      type: object
      properties: {n: {type: integer, description: a number}}
      required: [n]
    handler: {fixture: {"ok": true}}
"""
SCRIPT = """
turns:
  - tool_calls: [{name: lookup, id: c1, arguments: {n: "VALUE-MARKER hunter2"}}]
  - content: done
"""


def recorded(tmp_path, *extra):
    (tmp_path / "tools.yaml").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SCRIPT, encoding="utf-8")
    r = runner.invoke(app, ["run", QUESTION, "--tools", str(tmp_path / "tools.yaml"),
                            "--script", str(tmp_path / "s.yaml"), *extra])
    assert r.exit_code == 0, r.output
    (path,) = (tmp_path / "agentdbg-home" / "runs").glob("*.jsonl")
    assert "hunter2" in path.name                      # the name is made from the question
    return path


def sent_unanswered(path):
    """The recording as an app that forgot the call's result would have sent it: the call is
    unanswered in the next request, so the checker judges its arguments (the finding's
    message quotes their values)."""
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    removed = 0
    for e in events:
        if e["type"] == "stop" and isinstance(e.get("prefix"), int):
            e["prefix"] -= removed            # the stop goes on from the last request as sent
        elif e.get("append"):
            kept = [m for m in e["append"] if m.get("role") != "tool"]
            removed = len(e["append"]) - len(kept)
            e["append"] = kept
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def test_export_without_content_says_nothing_that_was_said(tmp_path):
    path = sent_unanswered(recorded(tmp_path))
    out = tmp_path / "spans.jsonl"
    r = runner.invoke(app, ["export", str(path), "--format", "otlp-json", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert "arguments-schema-mismatch" in text         # the finding is there, its words are not
    for marker in MARKERS:
        assert marker not in text, marker
    assert "gen_ai.conversation.id" in text
    # with --content they are all there (the test would not notice a leak otherwise)
    full = tmp_path / "full.jsonl"
    r = runner.invoke(app, ["export", str(path), "--format", "otlp-json", "-o", str(full), "--content"])
    assert r.exit_code == 0, r.output
    text = full.read_text(encoding="utf-8")
    assert all(marker in text for marker in MARKERS)


def test_run_otlp_without_content_says_nothing_that_was_said(tmp_path):
    with Receiver() as rec:
        path = recorded(tmp_path, "--otlp", rec.url)
    spans = rec.spans()
    text = json.dumps([[attributes(s), [attributes(e) for e in s.events], s.status.message]
                       for s in spans], default=str)
    assert "execute_tool lookup" in [s.name for s in spans]
    for marker in MARKERS:
        assert marker not in text, marker
    agent = next(s for s in spans if s.name == "invoke_agent")
    # live and after the fact: the same opaque id for the same run
    out = tmp_path / "spans.jsonl"
    assert runner.invoke(app, ["export", str(path), "--format", "otlp-json", "-o", str(out)]).exit_code == 0
    assert attributes(agent)[sc.CONVERSATION_ID] in out.read_text(encoding="utf-8")
