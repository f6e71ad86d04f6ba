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
NAMES = set(["agentdbg", "error", "Error", "JSON", "YAML", "OTLP", "HTTP", "URL", "API", "MCP", "OpenAI", "OpenTelemetry", "Claude", "Code", "Codex", "CLI", "rollout", "trace", "span", "protobuf", "tool", "tools", "version", "messages", "question", "steps", "title", "options", "breakpoints", "exercises", "injections", "lang", "zh", "explain", "true", "fixture", "handler", "tools.yaml", "present", "profile", "approve", "system", "full", "init", "cd",
             # protocol and record words the rarer errors name: a script's keys, an event's
             # type, a Claude Code entry's type, an OTLP field
             "turns", "when", "text", "request", "user", "resourceSpans", "null"])


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
    # the rarer inputs: a scripted model's file, a saved run document, a transcript event,
    # and other tools' session files
    (tmp_path / "empty-script.yaml").write_text("[]\n")
    (tmp_path / "turnless.yaml").write_text("- {}\n")
    (tmp_path / "when.yaml").write_text("turns: [{content: hi, when: {colour: red}}]\n")
    (tmp_path / "doc.json").write_text('{\n "format": "agentdbg-run", "messages": {}}')
    (tmp_path / "doc_turns.json").write_text('{\n "format": "agentdbg-run", "messages": [], "turns": [3]}')
    head = run_header(tmp_path / "run.jsonl")
    (tmp_path / "event_types.jsonl").write_text(head + '{"type": "request", "turn": "one"}\n')
    (tmp_path / "event_fields.jsonl").write_text(head + '{"type": "request", "turn": 1}\n')
    (tmp_path / "claude.jsonl").write_text('{"type": "user", "sessionId": "s1", "message": 3}\n')
    (tmp_path / "codex.jsonl").write_text('{"type": "session_meta", "payload": {"id": "x"}}\n'
                                          '{"type": "response_item", "payload": {"type": 3}}\n')
    (tmp_path / "otlp_spans.json").write_text('{"resourceSpans": [3]}')
    return tmp_path


def run_header(path):
    return path.read_text().splitlines(keepends=True)[0]


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
    ("collect", "--forward", "ftp://x", "--port", "0"),
    ("trust", "--list", "x"), ("trust", "--list"), ("trust", "--revoke", "nothing.yaml"),
    ("trust", "policy.yaml"), ("runs",),
    ("run", "--script", "empty-script.yaml", "x"), ("run", "--script", "turnless.yaml", "x"),
    ("run", "--script", "when.yaml", "x"),
    ("export", "run.jsonl", "--otlp", "http://127.0.0.1:9"),
    ("report", "doc.json"), ("report", "doc_turns.json"), ("report", "event_types.jsonl"),
    ("report", "event_fields.jsonl"), ("import", "claude.jsonl"), ("import", "codex.jsonl"),
    ("import", "otlp_spans.json"),
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_no_english_prose_in_chinese(files, args):
    r = CliRunner().invoke(app, ["--lang", "zh", *args], env={"COLUMNS": "200"})
    out = (r.stdout or "") + (r.stderr or "")
    assert out.strip() and r.exit_code in (0, 1, 2, 127), out
    left = [f"{english(line)}: {line}" for line in out.splitlines() if english(line)]
    assert not left, "\n".join(left)
