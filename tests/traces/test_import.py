"""agentdbg import on files the real clients wrote (tests/fixtures/traces): the conversations
pair calls and results exactly as the proxy recorded the same runs, with no finding, and every
command reads the session files directly."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.transcript import load_transcript

from .support import CLAUDE, CODEX, FIXTURES, pairs, question

runner = CliRunner()


def imported(tmp_path, source):
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return sorted(out.glob("*.jsonl"), key=lambda p: load_transcript(p).header.conversation), result.output


def test_claude_code_session_pairs_as_the_proxy_recorded_it(tmp_path):
    paths, said = imported(tmp_path, CLAUDE)
    proxied = [FIXTURES / "claude-code" / f"proxy-conversation-{n}.jsonl" for n in (1, 2)]
    assert len(paths) == 2
    for path in paths:   # the same conversation: the same first question
        [twin] = [p for p in proxied if question(path) in question(p)]
        assert pairs(path) == pairs(twin) and pairs(path)
    main, sub = (load_transcript(p).header for p in paths)
    assert (main.agent, sub.agent) == ("main", "general-purpose")
    assert (sub.started_by.conversation, sub.started_by.call_id, sub.started_by.tool) == (1, "toolu_agent1", "Agent")
    assert main.api == sub.api == "anthropic" and main.source.startswith("claude-code ")
    assert [call[1] for call in pairs(paths[0])] == ["Agent", "Bash"]
    assert "started by conversation 1, call toolu_agent1" in said


def test_codex_rollout_pairs_as_the_proxy_recorded_it(tmp_path):
    [path], said = imported(tmp_path, CODEX)
    assert pairs(path) == pairs(FIXTURES / "codex" / "proxy-conversation-1.jsonl")
    assert [p[0] for p in pairs(path)] == ["call_1", "call_2"]
    header = load_transcript(path).header
    assert header.api == "responses" and header.tools == []
    assert "does not record the tool definitions" in " ".join(header.notes)
    assert "does not record the tool definitions" in said       # said once, plainly


def test_a_codex_rollout_with_a_spawned_agent_imports_as_the_tree_the_proxy_recorded(tmp_path):
    """Codex writes the agent spawn_agent starts its own rollout beside its parent's; the folder
    imports as two conversations, the agent's under the call that started it, each pairing as
    the proxy recorded it (the agent's copy of its parent's history is its first request's
    input, with the spawn call "aborted" as Codex sends it), with no finding."""
    folder = FIXTURES / "codex-subagent"
    paths, said = imported(tmp_path, folder)
    proxied = [folder / f"proxy-conversation-{n}.jsonl" for n in (1, 2)]
    assert len(paths) == 2 and [pairs(p) for p in paths] == [pairs(p) for p in proxied]
    main, sub = (load_transcript(p).header for p in paths)
    assert (main.agent, sub.agent) == ("main", "say_hello")
    assert (sub.started_by.conversation, sub.started_by.call_id, sub.started_by.tool) == \
        (1, "call_spawn1", "spawn_agent")
    assert said.count("(a Codex CLI rollout): 2 conversations") == 1       # the agent's file: not again
    assert "conversation 2 · say_hello · started by conversation 1, call call_spawn1: 2 requests" in said
    from agentdbg.transcript.events import Request

    assert [f for p in paths for e in load_transcript(p).events if isinstance(e, Request)
            for f in e.findings or []] == []


def test_rollouts_that_name_each_other_as_parents_import_once_each_and_end(tmp_path):
    """Two rollouts each saying the other spawned it (and one naming itself): each is read, the
    import ends, and none is dropped as "read with its parent"."""
    rollout = next((FIXTURES / "codex").glob("rollout-*.jsonl")).read_text(encoding="utf-8").splitlines()
    meta = json.loads(rollout[0])
    folder = tmp_path / "loop"
    folder.mkdir()
    for me, parent in (("a", "b"), ("b", "a"), ("c", "c")):
        first = {**meta, "payload": {**meta["payload"], "id": me, "source": {"subagent": {"thread_spawn": {
            "parent_thread_id": parent, "agent_path": f"/root/{me}"}}}}}
        (folder / f"rollout-2026-12-01T00-00-00-{me}.jsonl").write_text(
            "\n".join([json.dumps(first), *rollout[1:]]) + "\n", encoding="utf-8")
    paths, said = imported(tmp_path, folder)
    assert said.count("(a Codex CLI rollout)") == 3 and len(paths) == 5   # a with b, b with a, c


def test_the_imported_requests_are_the_proxys_but_for_what_codex_does_not_record(tmp_path):
    """Item for item, each request's input is what Codex sent (but its first item: Codex adapts
    its base instructions to the mode before sending them; the rollout keeps the base ones)."""
    [path], _ = imported(tmp_path, CODEX)
    from agentdbg.transcript.events import Request

    ours = [e.body for e in load_transcript(path).events if isinstance(e, Request)]
    theirs = [e.body for e in load_transcript(FIXTURES / "codex" / "proxy-conversation-1.jsonl").events
              if isinstance(e, Request)]
    strip = lambda items: [{k: v for k, v in i.items() if k != "id"} for i in items]  # noqa: E731
    assert [strip(b["input"][1:]) for b in ours] == [strip(b["input"][1:]) for b in theirs]
    assert all(b["input"][0]["role"] == "developer" for b in ours)


def test_check_finds_nothing_in_either_session(tmp_path):
    for source in (CLAUDE, CODEX):
        result = runner.invoke(app, ["check", str(source)])
        assert result.exit_code == 0, result.output
        assert "no findings (3 recorded request(s)" in result.output


def test_replay_report_and_diff_read_a_session_file_directly(tmp_path):
    replayed = runner.invoke(app, ["replay", str(CODEX), "--save", str(tmp_path / "r.jsonl")])
    assert replayed.exit_code == 0, replayed.output
    assert "stop: completed" in replayed.output
    report = runner.invoke(app, ["report", str(CLAUDE), "-o", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    assert "hello" in (tmp_path / "r.html").read_text(encoding="utf-8")
    diff = runner.invoke(app, ["diff", str(CODEX), str(tmp_path / "r.jsonl")])
    assert diff.exit_code == 0 and "same: every turn" in diff.output, diff.output


def test_a_folder_is_searched_and_subagent_files_go_with_their_session(tmp_path):
    paths, _ = imported(tmp_path, FIXTURES)
    sources = [load_transcript(p).header.source for p in paths]
    assert sum(s.startswith("claude-code") for s in sources) == 2     # main + subagent, once
    # codex/: one; codex-subagent/: main + the spawned agent (its own rollout read with its parent's, once)
    assert sum(s.startswith("codex") for s in sources) == 3
    assert sum(s.startswith("otlp") for s in sources) == 1


def test_a_file_of_no_known_source_is_one_line_and_exit_2(tmp_path):
    other = tmp_path / "x.jsonl"
    other.write_text(json.dumps({"hello": 1}) + "\n")
    result = runner.invoke(app, ["import", str(other)])
    assert result.exit_code == 2
    assert "x.jsonl: not a file agentdbg can import" in result.output


def _runs_listing(paths) -> list[str]:
    """`agentdbg runs` over ``paths`` copied into the runs folder: its rows."""
    from agentdbg.transcript.runs import runs_dir

    folder = runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for p in paths:
        (folder / p.name).write_bytes(p.read_bytes())
    r = runner.invoke(app, ["runs"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    return [line.rstrip() for line in r.output.splitlines() if line[:1].isdigit()]   # not the names


def test_an_imported_subagent_is_a_child_of_its_call_in_runs(tmp_path):
    """The importer links a subagent with the same field as the proxy (`started_by`), so
    `runs` draws it under the Agent call that started it."""
    paths, _ = imported(tmp_path, CLAUDE)
    rows = _runs_listing(paths)
    assert rows[0].endswith("[main] use a subagent to say hello with the shell, then say hello yourself"), rows
    assert rows[1].endswith("└─ general-purpose ← subagent from #1 (call toolu_agent1)"), rows


OLD = FIXTURES / "otlp" / "imported-before-started-by"


def test_a_transcript_imported_with_the_old_parent_call_field_reads_as_started_by(tmp_path):
    """Transcripts imported before `parent_call` became `started_by` (written by that version,
    kept as they were): read with the subagent linked, listed and reported as a tree."""
    old = sorted(OLD.glob("*.jsonl"))
    assert '"parent_call"' in old[1].read_text(encoding="utf-8")
    header = load_transcript(old[1]).header
    assert (header.started_by.conversation, header.started_by.call_id) == (1, "call_9")
    assert header.parent_call is None                      # one field: never written back
    rows = _runs_listing(old)
    assert rows[1].endswith("└─ helper ← subagent from #1 (call call_9)"), rows
    report = runner.invoke(app, ["report", str(old[1]), "-o", str(tmp_path / "run.html")])
    assert report.exit_code == 0 and "a run of 2 conversations" in report.output, report.output
    html = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert "started by call call_9 in conversation 1" in html
