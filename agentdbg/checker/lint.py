"""``agentdbg tools``: lint tool definitions the way the seed articles advise.

Descriptions should say *when* to use a tool, every parameter should be
described, closed sets should be enums, strict tools must satisfy strict mode,
and the tool list must stay small (a warning past 20, an error past 128).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentdbg.checker.rules import _strict_problem
from agentdbg.toolspec import ToolSet

WHEN_CUES = re.compile(r"\bwhen\b|\buse (this|it)?\b|\bcall (this|it)?\b|\bonly if\b|当|时使用|时调用|"
                       r"用于|如果|只有在|需要.*时", re.IGNORECASE)
CLOSED_SET_NAMES = re.compile(r"(^|_)(status|state|type|kind|mode|unit|units|level|category|"
                              r"sort|order|direction|priority|format|lang|language)$")
MANY_TOOLS, MAX_TOOLS = 20, 128


@dataclass
class LintFinding:
    severity: str   # error | warning
    tool: str | None
    line: int | None
    message: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def lint(toolset: ToolSet) -> list[LintFinding]:
    out = [LintFinding("error", None, line, msg) for msg, line, _ in toolset.problems]
    n = len(toolset.tools)
    if n > MAX_TOOLS:
        out.append(LintFinding("error", None, None, f"{n} tools: the API accepts at most 128"))
    elif n > MANY_TOOLS:
        out.append(LintFinding("warning", None, None, f"{n} tools: past about 20 the model picks "
                               "the wrong tool more often; group them or route per request"))
    for spec in toolset.tools:
        out.extend(_lint_tool(spec))
        out.extend(_schema_skips(spec))
    return out


def _schema_skips(spec) -> list[LintFinding]:
    """What checking arguments against the schema has to skip: a ``$ref`` that does not
    resolve inside the schema (agentdbg never retrieves one) or a pattern RE2 cannot run."""
    from agentdbg.schemas import warnings

    return [LintFinding("warning", spec.name, spec.line, f"parameters: {w}")
            for w in warnings(spec.parameters)]


def _lint_tool(spec) -> list[LintFinding]:
    found: list[LintFinding] = []

    def warn(msg: str, severity: str = "warning") -> None:
        found.append(LintFinding(severity, spec.name, spec.line, msg))

    if not WHEN_CUES.search(spec.description):
        warn("the description says what the tool is, not when to use it; add e.g. "
             "'Use when the user asks …' (当用户……时使用)")
    props = spec.parameters.get("properties") or {}
    if props and "required" not in spec.parameters:
        warn("no 'required' list: say which parameters the model must fill")
    for name, schema in props.items():
        schema = schema if isinstance(schema, dict) else {}
        if not schema.get("description"):
            warn(f"parameter {name!r} has no description")
        if "enum" not in schema and "const" not in schema and CLOSED_SET_NAMES.search(name) \
                and schema.get("type", "string") == "string":
            warn(f"parameter {name!r} looks like a closed set; list the values with 'enum'")
    if spec.strict:
        problem = _strict_problem(spec.parameters, ())
        if problem:
            warn(f"strict: true but the schema breaks strict mode: {problem[1]}", "error")
    if spec.side_effects and spec.approval != "always":
        warn("side_effects: true without approval: always; a retried write can act twice")
    return found
