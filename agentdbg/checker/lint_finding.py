"""A finding of the tools lint (``agentdbg tools``): one tool, one rule, one line.

Its own module so the lint's parts (``lint``, ``lint_mcp``, ``handlers``) all import it and
none imports another back."""

from __future__ import annotations

from dataclasses import dataclass

from agentdbg.checker.findings import RULES
from agentdbg.toolspec import ToolSpec


@dataclass
class LintFinding:
    rule: str       # an id of checker.findings.RULES
    severity: str   # error | warning
    tool: str | None
    line: int | None
    message: str

    def to_dict(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "tool": self.tool,
                "line": self.line, "message": self.message}


def finding(rule: str, spec: ToolSpec | None, message: str, *, line: int | None = None,
            severity: str | None = None) -> LintFinding:
    return LintFinding(rule, severity or RULES[rule].severity, spec.name if spec else None,
                       line if line is not None else (spec.line if spec else None), message)
