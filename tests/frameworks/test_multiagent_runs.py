"""Multi-agent runs of real frameworks (Python ones, and the OpenAI Agents SDK for JavaScript
run with Node), each written the way its docs write a team, a handoff or an agent with trimmed
history, through `agentdbg proxy` in front of `agentdbg serve --script` (a real model chooses
the handoff or the delegation; the script plays those turns).

For every run: it completes; its correct traffic gets no error or warning finding (a handoff
is an event, not a defect; a framework's documented history trimming is a note); the proxy
saves one run whose conversations form the expected tree with every agent named, each child
under the call that started it (a round-robin team's agents side by side); every conversation
replays and passes `check`; and `agentdbg report` of any one of them writes the whole run.
"""

from __future__ import annotations

import pytest
from fw_apps import LOCATION, MULTI, MULTI_MISUSES, TEXT, TEXT_MISUSES, App
from test_frameworks import agentdbg, brief, saved

from agentdbg.transcript import load_transcript
from agentdbg.transcript.tree import build, named, walk


def ids(apps):
    return [a.id for a in apps]


@pytest.mark.parametrize("app", MULTI, ids=ids(MULTI))
def test_the_team_completes_with_no_finding(runs, app: App):
    run = runs.get(app)
    assert run.returncode == 0 and LOCATION in run.stdout, run.describe()
    found = [f for f in run.findings() if f.get("severity") in ("error", "warning")]
    assert not found, "\n".join(f"{f['transcript']} request {f['turn']}: {f['severity']} {f['rule']}"
                                f"@{f.get('index')}: {f.get('message')}" for f in found)
    verdicts = run.verdicts()
    assert verdicts and all(v == "✓ no findings" for v in verdicts), verdicts


@pytest.mark.parametrize("app", MULTI, ids=ids(MULTI))
def test_one_run_as_a_tree_with_every_agent_named(runs, app: App):
    run = runs.get(app)
    transcripts = [load_transcript(p) for p in saved(run)]
    assert {t.header.wire for t in transcripts} == {app.wire}      # the API the app was told to use
    assert len({t.header.run for t in transcripts}) == 1, [t.header.run for t in transcripts]
    roots = build([(t.path, named(t.header, t.events)) for t in transcripts])
    drawn = tuple((n.depth, n.agent, n.started_by.kind if n.started_by else None) for n in walk(roots))
    # every agent named; a single agent whose framework sends no name (DSPy) is one conversation
    assert drawn == app.tree and (all(agent for _, agent, _ in drawn) or len(drawn) == 1), drawn


@pytest.mark.parametrize("app", MULTI, ids=ids(MULTI))
def test_every_conversation_replays_and_passes_check(runs, app: App):
    run = runs.get(app)
    for path in saved(run):
        replay = agentdbg(run, "replay", str(path))
        assert replay.returncode == 0, f"{path.name}:\n{brief(replay)}"
        check = agentdbg(run, "check", str(path))
        assert check.returncode == 0, f"{path.name}:\n{brief(check, 12)}"


@pytest.mark.parametrize("app", MULTI[:1], ids=ids(MULTI[:1]))
def test_the_report_of_one_conversation_is_the_whole_run(runs, app: App):
    run = runs.get(app)
    last = saved(run)[-1]
    report = agentdbg(run, "report", str(last), "-o", str(run.folder / "run.html"))
    assert report.returncode == 0, brief(report)
    assert f"a run of {len(run.transcripts)} conversations" in report.stdout, brief(report)
    html = (run.folder / "run.html").read_text(encoding="utf-8")
    assert all(f'data-agent="{agent}"' in html for _, agent, _ in app.tree)


EDITING = [a for a in MULTI if a.edits]


@pytest.mark.parametrize("app", EDITING, ids=ids(EDITING))
def test_documented_history_edits_are_notes_said_as_what_they_are(runs, app: App):
    run = runs.get(app)
    edits = [e for _, event in run.events() if event.get("type") == "request" for e in event.get("edits") or []]
    assert [(e["text"], e["severity"]) for e in edits] == [(text, "note") for text in app.edits], edits
    assert all(f"history: {text} (note)" in run.proxy_out for text in app.edits), run.proxy_out[-3000:]


@pytest.mark.parametrize("app", TEXT, ids=ids(TEXT))
def test_a_text_protocol_s_calls_and_observations_are_shown_as_calls_and_results(runs, app: App):
    run = runs.get(app)
    assert run.requests() == 4, run.proxy_out[-3000:]     # three steps and the extract step
    steps = [line.strip() for line in run.proxy_out.splitlines() if line.startswith("  text step ")]
    assert steps[:3] == [
        'text step 0: query_order({"order_id": "ORD-2026-001"}) → {"status": "shipped", "tracking_no": "SF123456"}',
        'text step 0: query_order({"order_id": "ORD-2026-001"}) → {"status": "shipped", "tracking_no": "SF123456"}',
        'text step 1: query_logistics({"tracking_no": "SF123456"}) → {"location": "杭州转运中心"}'], steps


@pytest.mark.parametrize(("app", "flag", "rules"), TEXT_MISUSES, ids=[f"{a.id}{flag}" for a, flag, _ in TEXT_MISUSES])
def test_a_text_protocol_that_loses_its_steps_is_reported_in_its_one_conversation(
        runs, app: App, flag: str, rules: tuple[str, ...]):
    run = runs.run(app, flag)
    found = [f for f in run.findings() if f.get("severity") in ("error", "warning")]
    assert [f["rule"] for f in found] == list(rules), found
    assert len(run.transcripts) == 1, [p.name for p in run.transcripts]
    assert "text step 0 removed (query_order and its observation)" in found[0]["message"], found


@pytest.mark.parametrize(("app", "flag", "rules"), MULTI_MISUSES,
                         ids=[f"{a.id}{flag}" for a, flag, _ in MULTI_MISUSES])
def test_misuse_after_a_handoff_is_reported_with_its_rule_in_its_agent_s_conversation(
        runs, app: App, flag: str, rules: tuple[str, ...]):
    """A filter that cuts the handoff's call from its output once the order agent works: the
    API's error, one finding, in the order agent's conversation (not a new one)."""
    run = runs.run(app, flag)
    found = [f for f in run.findings() if f.get("severity") in ("error", "warning")]
    assert [f["rule"] for f in found] == list(rules), found
    assert all(f["transcript"].endswith("-conversation-2.jsonl") for f in found), found
    assert len(run.transcripts) == 2, [p.name for p in run.transcripts]
