"""A finding of the tools lint (``agentdbg tools``): one tool, one rule, one line.

Its own module so the lint's parts (``lint``, ``lint_mcp``, ``handlers``) all import it and
none imports another back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdbg.checker.findings import RULES
from agentdbg.toolspec import ToolSpec


@dataclass
class LintFinding:
    rule: str       # an id of checker.findings.RULES
    severity: str   # error | warning
    tool: str | None
    line: int | None
    message: str    # English (what --json prints)
    shown: Any = field(default=None, compare=False)   # ``message`` as an i18n.Msg (--lang)

    def to_dict(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "tool": self.tool,
                "line": self.line, "message": self.message}


def finding(rule: str, spec: ToolSpec | None, message: Any, *, line: int | None = None,
            severity: str | None = None) -> LintFinding:
    """``message``: English text, or an ``i18n.Msg`` (shown in the chosen language)."""
    return LintFinding(rule, severity or RULES[rule].severity, spec.name if spec else None,
                       line if line is not None else (spec.line if spec else None), str(message),
                       shown=message)
