"""Findings, and the rule vocabulary: every rule id with its default severity, declared beside
its code (``agentdbg.checker.rule``) and gathered in ``RULES``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdbg.checker.rule import ERROR, RULES, WARNING, RuleInfo
from agentdbg.i18n import Msg, recorded, tr


@dataclass
class Finding:
    rule: str
    severity: str
    index: int | None               # message index, or None for request-level rules
    message: str                    # what is wrong and how to fix it (one line)
    api_error: str | None = None    # what the real API answers (None: it accepts it)
    tool_call_id: str | None = None
    line: int | None = None         # JSONL input: which line
    path: str | None = None         # where in the format's own structure, e.g. "input[5]",
                                    # "messages[3].content[1]" (None: messages[index])
    api_source: str | None = None   # whose text api_error is when it is not the active
                                    # profile's API, e.g. "Anthropic", "vLLM"
    shown: Any = field(default=None, compare=False, repr=False)
                                    # ``message`` to show in the chosen language (an i18n.Msg);
                                    # ``message`` stays English: JSON output and transcripts

    def text(self) -> str:
        """What is wrong, in the chosen language (a recorded finding read back into the template
        it was made from, else as recorded)."""
        return tr(self.shown) if self.shown is not None else recorded(self.message)

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        """A recorded finding (``to_dict()`` in a transcript) back, its path and line too;
        every field is data of any JSON type, so what is not of its kind is left out."""
        def of(value: Any, kind: type) -> Any:
            return value if isinstance(value, kind) and not isinstance(value, bool) else None
        return cls(rule=str(d.get("rule")), severity=str(d.get("severity") or "error"),
                   index=of(d.get("index"), int), message=str(d.get("message") or ""),
                   api_error=of(d.get("api_error"), str), tool_call_id=of(d.get("tool_call_id"), str),
                   line=of(d.get("line"), int), path=of(d.get("path"), str),
                   api_source=of(d.get("api_source"), str))

    def to_dict(self) -> dict:
        d = {"rule": self.rule, "severity": self.severity, "index": self.index,
             "tool_call_id": self.tool_call_id, "message": self.message,
             "api_error": self.api_error}
        if self.api_source is not None:
            d["api_source"] = self.api_source
        if self.line is not None:
            d["line"] = self.line
        if self.path is not None:
            d["path"] = self.path
        return d




def make(rule: str, index: int | None, message: str | Msg, api_error: Any = None,
         tool_call_id: Any = None, severity: str | None = None,
         api_source: str | None = None) -> Finding:
    """A finding; ``message`` a ``Msg`` to be shown in the chosen language (the API's own
    ``api_error`` is verbatim: it is what the API says)."""
    return Finding(rule=rule, severity=severity or RULES[rule].severity, index=index,
                   message=str(message), api_error=api_error,
                   tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
                   api_source=api_source, shown=message if isinstance(message, Msg) else None)


__all__ = ["ERROR", "RULES", "WARNING", "Finding", "RuleInfo", "make"]
