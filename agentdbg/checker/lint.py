"""``agentdbg tools``: lint tool definitions the way the seed articles advise.

Descriptions should say *when* to use a tool, every parameter should be
described, closed sets should be enums, strict tools must satisfy strict mode,
and the tool list must stay small (a warning past 20, an error past 128). A python
handler must exist and take the schema's parameters: both are checked by reading the
handler's source, never by importing it (``lint_handlers``). Every finding has a rule
id from the one vocabulary (``checker.findings.RULES``, scope ``tools``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from agentdbg.checker.lint_finding import LintFinding, finding
from agentdbg.checker.rule import ERROR, WARNING, declare, rule
from agentdbg.checker.rules import _strict_problem
from agentdbg.i18n import N_, Msg
from agentdbg.toolspec import ToolSet, ToolSpec

# it also reports invalid-tool-name, too-many-tools and strict-schema-invalid (rules/calls.py,
# rules/request.py), for the same defects in the definitions
DECLARED = declare(
    __name__,
    rule("tools-file-invalid", ERROR, "the tools file breaks a rule the loader enforces",
         scope="tools"),
    rule("duplicate-tool-name", ERROR, "two tools with one name", scope="tools"),
    rule("parameters-schema-invalid", ERROR, "parameters is not a valid JSON Schema",
         scope="tools"),
    rule("many-tools", WARNING, "more than 20 tools: the model picks the wrong one more often",
         scope="tools"),
    rule("description-without-when", WARNING, "the description does not say when to use the tool",
         scope="tools"),
    rule("required-list-missing", WARNING, "parameters have no 'required' list", scope="tools"),
    rule("parameter-undescribed", WARNING, "a parameter without a description", scope="tools"),
    rule("closed-set-without-enum", WARNING, "a parameter that looks like a closed set has no "
         "enum", scope="tools"),
    rule("side-effects-without-approval", WARNING, "side_effects: true without approval: always",
         scope="tools"),
    rule("schema-not-checkable", WARNING, "a part of a parameters schema agentdbg cannot check "
         "safely (a $ref it never retrieves, a pattern RE2 cannot run): skipped", scope="tools"),
    rule("schema-too-costly", WARNING, "a parameters schema over agentdbg's work budget (its "
         "references expanded, more than 10,000 parts): arguments are not checked against it",
         scope="tools"),
)

WHEN_CUES = re.compile(r"\bwhen\b|\buse (this|it)?\b|\bcall (this|it)?\b|\bonly if\b|当|时使用|时调用|"
                       r"用于|如果|只有在|需要.*时", re.IGNORECASE)
CLOSED_SET_NAMES = re.compile(r"(^|_)(status|state|type|kind|mode|unit|units|level|category|"
                              r"sort|order|direction|priority|format|lang|language)$")
MANY_TOOLS, MAX_TOOLS = 20, 128


def lint(toolset: ToolSet) -> list[LintFinding]:
    out = list(_loader_problems(toolset))
    out.extend(_tool_count(toolset))
    for spec in toolset.tools:
        for check in TOOL_CHECKS:
            out.extend(check(spec))
        out.extend(_schema_skips(spec))
    from agentdbg.checker.lint_mcp import lint_mcp

    out.extend(lint_mcp(toolset))  # MCP tools: their servers' own problems
    return out


def _schema_skips(spec: ToolSpec) -> list[LintFinding]:
    """What checking arguments against the schema has to skip: the whole schema when it is
    over the work budget, a ``$ref`` that does not resolve inside the schema (agentdbg never
    retrieves one) or a pattern RE2 cannot run."""
    from agentdbg.schemas import over_budget, warnings

    costly = over_budget(spec.parameters)
    found = [finding("schema-too-costly", spec, Msg(N_(
        "parameters: {costly}; check, run, serve and the proxy leave its arguments unchecked "
        "and say so"), {"costly": costly}))] if costly else []
    return found + [finding("schema-not-checkable", spec, f"parameters: {w}")
                    for w in warnings(spec.parameters)]


# -- the file as a whole ----------------------------------------------------------------

#: what the loader refuses (``load_tools`` raises them; the linter lists them all), by the
#: words the loader uses for them
_LOADER_RULES = (("field 'name' must match", "invalid-tool-name"),
                 ("duplicate name", "duplicate-tool-name"),
                 ("is not a valid JSON Schema", "parameters-schema-invalid"))


def _loader_problems(toolset: ToolSet) -> Iterator[LintFinding]:
    for message, line, _ in toolset.problems:
        rule = next((r for words, r in _LOADER_RULES if words in str(message)), "tools-file-invalid")
        yield finding(rule, None, message, line=line, severity="error")


def _tool_count(toolset: ToolSet) -> Iterator[LintFinding]:
    n = len(toolset.tools)
    if n > MAX_TOOLS:
        yield finding("too-many-tools", None, Msg(N_("{n} tools: the API accepts at most {limit}"),
                                                  {"n": n, "limit": MAX_TOOLS}))
    elif n > MANY_TOOLS:
        yield finding("many-tools", None, Msg(N_(
            "{n} tools: past about {many} the model picks the wrong tool more often; group them "
            "or route per request"), {"n": n, "many": MANY_TOOLS}))


# -- one tool ---------------------------------------------------------------------------

def _description(spec: ToolSpec) -> Iterator[LintFinding]:
    if not WHEN_CUES.search(spec.description):
        yield finding("description-without-when", spec, Msg(N_(
            "the description says what the tool is, not when to use it; add e.g. 'Use when the "
            "user asks …' (当用户……时使用)")))


def _parameters(spec: ToolSpec) -> Iterator[LintFinding]:
    props = spec.parameters.get("properties") or {}
    if not isinstance(props, dict):   # parameters-schema-invalid says so (the loader's words)
        return
    if props and "required" not in spec.parameters:
        yield finding("required-list-missing", spec, Msg(N_(
            "no 'required' list: say which parameters the model must fill")))
    for name, schema in props.items():
        schema = schema if isinstance(schema, dict) else {}
        if not schema.get("description"):
            yield finding("parameter-undescribed", spec, Msg(N_("parameter {name} has no description"),
                                                             {"name": repr(name)}))
        if "enum" not in schema and "const" not in schema and CLOSED_SET_NAMES.search(name) \
                and schema.get("type", "string") == "string":
            yield finding("closed-set-without-enum", spec, Msg(N_(
                "parameter {name} looks like a closed set; list the values with 'enum'"),
                {"name": repr(name)}))


def _strict(spec: ToolSpec) -> Iterator[LintFinding]:
    if spec.strict:
        problem = _strict_problem(spec.parameters, ())
        if problem:
            yield finding("strict-schema-invalid", spec, Msg(N_(
                "strict: true but the schema breaks strict mode: {problem}"),
                {"problem": problem[1]}))


def _side_effects(spec: ToolSpec) -> Iterator[LintFinding]:
    # an MCP tool's policy comes from its annotations, not from a field of this file
    if spec.side_effects and spec.approval != "always" and spec.handler_kind != "mcp":
        yield finding("side-effects-without-approval", spec, Msg(N_(
            "side_effects: true without approval: always; a retried write can act twice")))


def _handler(spec: ToolSpec) -> Iterable[LintFinding]:
    from agentdbg.checker.handlers import lint_handler

    return lint_handler(spec) if spec.handler_kind == "python" else ()


#: the checks every tool goes through, in order (add a check here to lint one more thing)
TOOL_CHECKS: tuple[Callable[[ToolSpec], Iterable[LintFinding]], ...] = (
    _description, _parameters, _strict, _side_effects, _handler)
