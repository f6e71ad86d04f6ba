"""The rules a user reads about are the rules the checker has: ``check --rules`` and the table in
docs/rules.md are made from the registry (``findings.RULES`` and each format's ``REPORTS``)."""

from pathlib import Path

from typer.testing import CliRunner

from agentdbg.checker.findings import RULES
from agentdbg.checker.formats.table import rule_rows, rules_table
from agentdbg.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_check_rules_lists_every_rule_with_its_marks_and_meaning():
    r = CliRunner().invoke(app, ["check", "--rules"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    for rule, summary, _ in rule_rows():
        head = next(i for i, line in enumerate(lines) if line.startswith(rule + "  "))
        assert lines[head + 1].strip() == summary
    # one Gemini-only rule and one Chat Completions profile rule, as a user reads them
    assert "call-turn-misplaced  chat — · responses — · anthropic — · gemini E" in lines
    assert ("reasoning-content-missing  chat P deepseek-thinking, kimi-thinking · responses — · "
            "anthropic — · gemini —") in lines
    # the tools lint's rules are not request rules: they are not listed
    assert not any(line.startswith("description-without-when") for line in lines)


def test_every_request_rule_is_listed():
    listed = {rule for rule, _, _ in rule_rows()}
    request_rules = {r for r, info in RULES.items() if info.scope not in ("tools", "run")}
    assert listed == request_rules


def test_the_rules_page_holds_the_table_made_from_the_registry():
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert rules_table() in page
    assert "| `duplicate-tool-call-id` | E (W when a later turn reuses an id) | W | E | — |" \
        in rules_table()


def test_each_rule_is_declared_in_the_module_that_holds_its_code():
    """A rule's id, severity and text sit beside its code: the declaring module uses the id
    (the run's own outcome is judged by the stop line, above the checker)."""
    import importlib
    import inspect

    from agentdbg.checker.rule import MODULES

    for rule in RULES:
        module = RULES.module_of(rule)
        assert module in MODULES
        source = inspect.getsource(importlib.import_module(module))
        uses = source.count(f'"{rule}"') - 1          # the declaration itself is one
        assert uses >= 1 or rule == "empty-final-answer", (rule, module)
    assert [RULES.module_of(r) for r in RULES] == sorted(
        (RULES.module_of(r) for r in RULES), key=MODULES.index)   # listed in MODULES order


def test_a_rule_is_declared_once_and_only_by_a_registered_module():
    import pytest

    from agentdbg.checker.rule import declare, rule

    with pytest.raises(ValueError, match=r"not in agentdbg\.checker\.rule\.MODULES"):
        declare("agentdbg.somewhere_else", rule("new-rule", "error", "a new rule"))
    with pytest.raises(ValueError, match="declared twice"):
        declare("agentdbg.checker.formats.gemini",
                rule("orphan-tool-message", "error", "tool message not inside a tool block"))
    assert RULES.module_of("orphan-tool-message") == "agentdbg.checker.rules.pairing"
