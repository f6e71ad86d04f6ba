"""Every recording made by agentdbg before the typed events (transcript version 1, written by
``make_fixtures.py``: run, a failing model, step mode's actions, a replay, a fork, the proxy in
all three wire formats) still replays, checks and reports as it did then (``expected.json``
holds what that agentdbg said of each)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentdbg.checker.inputs import load_check_input
from agentdbg.checker.judge import judge_all
from agentdbg.report.timeline import read_run
from agentdbg.testing import replay_transcript

HERE = Path(__file__).resolve().parent
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
# the one recording whose replay failed then too (issue 22: a request --block-invalid refused)
KNOWN = {"proxy-chat-blocked.jsonl": ["final messages: first difference at messages[2]"]}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_version_1_recording_replays_checks_and_reports_as_before(name):
    path = HERE / name
    assert path.read_text(encoding="utf-8").startswith(
        '{"type": "header", "format": "agentdbg-transcript", "version": 1,')
    want = EXPECTED[name]
    result = replay_transcript(path)
    assert result.stop_reason == want["stop"]
    assert [p[:len(k)] for p, k in zip(result.problems, KNOWN.get(name, []))] == KNOWN.get(name, [])
    assert len(result.problems) == len(KNOWN.get(name, []))
    assert len(result.messages) == want["messages"]
    found = sorted({(f.rule, f.severity, judged.item.turn)
                    for judged in judge_all(load_check_input(str(path)), None, "openai")
                    for f in judged.findings})
    assert [list(f) for f in found] == want["check"]
    run = read_run(path)
    assert (len(run.turns), len(run.calls()), len(run.actions)) == \
        (want["turns"], want["calls"], want["actions"])
    assert sorted(f.rule for f in run.findings()) == want["findings"]


def test_every_command_reads_a_version_1_recording(tmp_path):
    env = {**os.environ, "AGENTDBG_HOME": str(tmp_path / "home"), "COLUMNS": "100"}
    for name in ("step.jsonl", "proxy-responses.jsonl", "proxy-anthropic-stream.jsonl"):
        path = str(HERE / name)
        for args in (["replay", path], ["check", path], ["report", path, "-o", str(tmp_path / "r.html")],
                     ["diff", path, path], ["export", path, "--format", "otlp-json",
                                            "-o", str(tmp_path / "e.json")]):
            r = subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True,
                               text=True, env=env)
            assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
