"""replay, report and diff count a run's tool calls alike: every call the model's replies asked
for (also those of a recorded app, which agentdbg did not run, and those a limit cut off)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()


def counts(path) -> dict[str, int]:
    replay = runner.invoke(app, ["replay", str(path)]).stdout
    report = runner.invoke(app, ["report", str(path), "-o", "r.html"]).stdout
    diff = runner.invoke(app, ["diff", str(path), str(path)]).stdout
    return {"replay": int(re.search(r"; (\d+) tool call\(s\); replayed", replay).group(1)),
            "report": int(re.search(r"(?:turn|request)\(s\), (\d+) tool call\(s\)", report).group(1)),
            "diff": int(re.search(r"^A: .* · (\d+) tool call\(s\)", diff, re.M).group(1))}


@pytest.mark.parametrize("kind", ["run", "step", "fork", "proxy", "proxy_forget", "parallel"])
def test_replay_report_and_diff_count_the_same_calls(made, kind):
    found = counts(made[kind])
    assert len(set(found.values())) == 1, found


def test_calls_a_limit_cut_off_are_counted_by_the_run_too(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "turns:\n  - tool_calls: [{name: get_weather, id: a, arguments: {city: 北京}},"
        " {name: get_weather, id: b, arguments: {city: 上海}}]\n")
    r = runner.invoke(app, ["run", "q", "--script", "s.yaml", "--max-tool-calls", "1", "--save", "l.jsonl"])
    assert r.exit_code == 4 and "; 2 tool call(s); " in r.stdout
    assert counts(tmp_path / "l.jsonl") == {"replay": 2, "report": 2, "diff": 2}
