"""``agentdbg tools``: a python handler that does not exist, or cannot take the schema's
parameters, is a lint error found by reading its source (never importing it); every
finding, plain and --json, has a rule id from the one vocabulary."""

import json
import textwrap

import pytest
from typer.testing import CliRunner

from agentdbg.checker.findings import RULES
from agentdbg.cli import app

MODULE = '''
open(__file__ + ".imported", "w").close()   # proof that linting ran it: it must not
import json
from functools import wraps

def find_book(title, limit=10):
    return {"title": title}

def book(isbn, *, passengers):
    return {}

def loose(**kwargs):
    return kwargs

def positional(a, /):
    return a

async def fetch(title):
    return title

def traced(fn):
    @wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner

@traced
def decorated(anything):
    return anything

alias = find_book

class Callable:
    def __call__(self, title):
        return title

try:
    from fastlib import speedy
except ImportError:
    def speedy(title):
        return title
'''


def tool(name, handler, props, required):
    properties = ", ".join(f"{p}: {{type: string, description: {p}}}" for p in props)
    return (f"  - name: {name}\n    description: Use when the user asks for {name}.\n"
            f"    parameters: {{type: object, properties: {{{properties}}}, "
            f"required: [{', '.join(required)}]}}\n    handler: {{python: \"{handler}\"}}\n")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "library.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    pkg = tmp_path / "shelf"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('open(__file__ + ".imported", "w").close()\n')
    (pkg / "rooms.py").write_text("def locate(title):\n    return title\n")
    return tmp_path


def lint(project, *tools):
    path = project / "tools.yaml"
    path.write_text("version: 1\ntools:\n" + "".join(tools), encoding="utf-8")
    r = CliRunner().invoke(app, ["tools", str(path), "--json"])
    assert r.exit_code in (0, 1), r.output
    assert not list(project.rglob("*.imported")), "the linter imported the user's module"
    return r, json.loads(r.stdout)["findings"]


def rules(findings):
    return [(f["rule"], f["tool"]) for f in findings if f["rule"].startswith("handler-")]


def test_a_handler_that_does_not_exist_is_an_error(project):
    r, found = lint(project,
                    tool("nomod", "nomod:fn", ["x"], ["x"]),
                    tool("nofn", "library:missing", ["x"], ["x"]),
                    tool("nosub", "shelf.annex:locate", ["title"], ["title"]),
                    tool("deep", "shelf.rooms:locate", ["title"], ["title"]))
    assert r.exit_code == 1
    assert rules(found) == [("handler-not-found", "nomod"), ("handler-not-found", "nofn"),
                            ("handler-not-found", "nosub")]
    text = {f["tool"]: f["message"] for f in found}
    assert "no module 'nomod'" in text["nomod"] and "defines no 'missing'" in text["nofn"]
    assert "no module 'shelf.annex'" in text["nosub"]


def test_a_signature_that_cannot_take_the_schema_is_an_error(project):
    r, found = lint(project,
                    tool("extra", "library:find_book", ["title", "author"], ["title"]),
                    tool("unfilled", "library:find_book", ["query"], ["query"]),
                    tool("positional", "library:positional", ["a"], ["a"]),
                    tool("optional", "library:book", ["isbn", "passengers"], ["isbn"]))
    assert r.exit_code == 1
    assert rules(found) == [("handler-signature-mismatch", "extra"),
                            ("handler-signature-mismatch", "unfilled"),
                            ("handler-signature-mismatch", "unfilled"),
                            ("handler-signature-mismatch", "positional"),
                            ("handler-parameter-optional", "optional")]
    text = " | ".join(f["message"] for f in found if f["rule"].startswith("handler-"))
    assert "find_book() in" in text and "takes no parameter 'author'" in text
    assert "needs 'title', which the schema does not have" in text
    assert "'a' is positional-only" in text
    assert "needs 'passengers', which the schema lets the model leave out" in text


def test_handlers_that_fit_or_cannot_be_judged_from_source_are_quiet(project):
    r, found = lint(project,
                    tool("fits", "library:find_book", ["title", "limit"], ["title"]),
                    tool("kwargs", "library:loose", ["anything", "else"], ["anything"]),
                    tool("async", "library:fetch", ["title"], ["title"]),
                    tool("decorated", "library:decorated", ["other"], ["other"]),
                    tool("alias", "library:alias", ["x"], ["x"]),
                    tool("klass", "library:Callable", ["x"], ["x"]),
                    tool("fallback", "library:speedy", ["title"], ["title"]),
                    tool("imported", "library:json", ["x"], ["x"]),
                    tool("stdlib", "json:dumps", ["obj"], ["obj"]),
                    tool("builtin", "math:sqrt", ["x"], ["x"]))
    assert rules(found) == [] and r.exit_code == 0


def test_the_sample_tools_lint_clean_and_run_agrees(project):
    r = CliRunner().invoke(app, ["tools", "--json"])
    assert r.exit_code == 0 and rules(json.loads(r.stdout)["findings"]) == []
    _, found = lint(project, tool("nofn", "library:missing", ["x"], ["x"]))
    assert rules(found) == [("handler-not-found", "nofn")]
    run = CliRunner().invoke(app, ["run", "q", "--tools", str(project / "tools.yaml")])
    assert run.exit_code == 2 and "no function 'missing'" in run.stderr  # what lint foretold


def test_every_lint_finding_has_a_rule_id_plain_and_json(project):
    (project / "t.yaml").write_text("""
version: 1
tools:
  - name: search.data
    description: 搜索数据
    parameters:
      type: object
      properties:
        status: {type: string}
    handler: {python: "library:nothing"}
  - name: strict_one
    description: Use when testing strict mode.
    strict: true
    parameters:
      type: object
      properties: {a: {type: string, description: a}}
      required: [a]
    handler: {fixture: []}
  - name: writer
    description: Use when writing.
    side_effects: true
    handler: {fixture: []}
  - name: writer
    description: Use when writing twice.
    handler: {fixture: []}
""", encoding="utf-8")
    r = CliRunner().invoke(app, ["tools", str(project / "t.yaml"), "--json"])
    found = json.loads(r.stdout)["findings"]
    assert {f["rule"] for f in found} == {
        "invalid-tool-name", "duplicate-tool-name", "description-without-when",
        "required-list-missing", "parameter-undescribed", "closed-set-without-enum",
        "handler-not-found", "strict-schema-invalid", "side-effects-without-approval"}
    for f in found:
        assert RULES[f["rule"]].severity == f["severity"] or f["rule"] == "invalid-tool-name"
        assert list(f) == ["rule", "severity", "tool", "line", "message"]
    plain = CliRunner().invoke(app, ["tools", str(project / "t.yaml")]).stdout
    lines = [line for line in plain.splitlines() if line.startswith(("✗ ", "! "))]
    assert len(lines) == len(found)
    for line, f in zip(lines, found):
        assert line.startswith(f"{'✗' if f['severity'] == 'error' else '!'} {f['severity']} "
                               f"{f['rule']}")


def test_lint_rules_are_in_the_vocabulary():
    tools_rules = {r.id for r in RULES.values() if r.scope == "tools"}
    assert {"handler-not-found", "handler-signature-mismatch", "description-without-when"} <= tools_rules
    assert not tools_rules & {r.id for r in RULES.values() if r.scope == "chat"}
