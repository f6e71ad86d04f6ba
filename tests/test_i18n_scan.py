"""`--lang zh` over the command line's common error paths and plain outputs: each command is
run in-process (CliRunner) with its input made wrong on purpose, and every line it prints is
scanned for English words that are agentdbg's own prose. What may stay English: the
`agentdbg: error:` and click's `Error:` prefixes, option names, metavars (FILE, CMD), paths,
quoted values, identifiers (snake_case, kebab-case: rule ids, fields), protocol and product
names, and what another program said (none of the cases below quote one)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

#: names and protocol words, not prose
NAMES = set(["agentdbg", "error", "Error", "JSON", "YAML", "OTLP", "HTTP", "URL", "API", "MCP", "OpenAI", "OpenTelemetry", "Claude", "Code", "Codex", "CLI", "rollout", "trace", "span", "protobuf", "tool", "tools", "version", "messages", "question", "steps", "title", "options", "breakpoints", "exercises", "injections", "lang", "zh", "explain", "true", "fixture", "handler", "tools.yaml", "present", "profile", "approve", "system", "full", "init", "cd"])


def english(line: str) -> list[str]:
    """The English words of ``line`` that are none of: a name above, an option, a metavar, a
    path, a quoted value, an identifier."""
    line = re.sub(r"agentdbg(?: [a-z]+)?|\bhttps?\b|\b\w*\d\w*\b|'[^']*'|\"[^\"]*\"|\{[^{}]*\}|\S*/\S*|--?[a-z][\w-]*|\b\w+[_.-]\w[\w.-]*"
                  r"|\b[A-Z][A-Z_]+\b|\b\w+\.(?:yaml|json|jsonl|html)\b", " ", line)
    return [w for w in re.findall(r"[A-Za-z]{2,}", line) if w not in NAMES]


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lesson.yaml").write_text("- a\n- b\n")
    (tmp_path / "keys.yaml").write_text("question: hi\nsteps: 3\nbogus_key: 1\n")
    (tmp_path / "opts.yaml").write_text("question: hi\noptions: {speed: 3}\n")
    (tmp_path / "otlp.json").write_text('{"resourceSpans": 3}')
    (tmp_path / "not-a-run.txt").write_text("hello\n")
    (tmp_path / "tools.json").write_text('{"version": 2, "tools": []}')
    (tmp_path / "policy.yaml").write_text("version: 1\ntools:\n  - name: a\n    description: x\n"
                                         "    approval: sometimes\n    handler: {fixture: {}}\n")
    (tmp_path / "project_1").mkdir()
    (tmp_path / "project_1" / "tools.yaml").write_text("x")
    assert CliRunner().invoke(app, ["run", "hi", "--save", "run.jsonl"]).exit_code == 0
    return tmp_path


CASES = [
    ("run", "--max-turns", "abc", "x"), ("run", "--bogus", "x"), ("diff", "a"), ("rnu",),
    ("run", "--approve", "maybe", "x"), ("run", "--save"),
    ("run", "--lesson", "lesson.yaml"), ("run", "--lesson", "keys.yaml"),
    ("run", "--lesson", "opts.yaml"), ("run", "-t", "policy.yaml", "x"), ("run", "-t", "tools.json", "x"),
    ("report", "run.jsonl", "--lesson", "lesson.yaml"),
    ("report", "run.jsonl", "--handout", "--lesson", "keys.yaml"),
    ("export", "run.jsonl"), ("export", "run.jsonl", "--format", "otlp-json"),
    ("export", "run.jsonl", "--format", "otlp-json", "-o", "spans.json"),
    ("export", "nothing.jsonl", "--format", "otlp-json", "-o", "spans.json"),
    ("init", "project_1"), ("init", "--from", "policy.yaml", "elsewhere"), ("init", "fresh_1"),
    ("import", "nothing_here"), ("import", "not-a-run.txt"), ("import", "otlp.json"),
    ("proxy", "--offline", "--upstream", "http://127.0.0.1:9"), ("proxy",),
    ("proxy", "--client", "app", "--offline"),
    ("serve", "--offline", "--script", "x.yaml"), ("serve", "--replay", "not-a-run.txt"),
    ("collect", "--forward", "ftp://x"),
    ("trust", "--list", "x"), ("trust", "--list"), ("trust", "--revoke", "nothing.yaml"),
    ("trust", "policy.yaml"), ("runs",),
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_no_english_prose_in_chinese(files, args):
    r = CliRunner().invoke(app, ["--lang", "zh", *args], env={"COLUMNS": "200"})
    out = (r.stdout or "") + (r.stderr or "")
    assert out.strip() and r.exit_code in (0, 1, 2, 127), out
    left = [f"{english(line)}: {line}" for line in out.splitlines() if english(line)]
    assert not left, "\n".join(left)
