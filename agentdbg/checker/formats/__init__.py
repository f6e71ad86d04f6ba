"""The protocol checker for the other wire formats: the Responses API and the Anthropic
Messages API (Chat Completions stays in ``agentdbg.checker``).

    from agentdbg.checker.formats import check_document
    findings = check_document(json.loads(text))            # format detected
    findings = check_responses(body, profile="openai")     # or named

Findings use the chat rule ids where the defect is the same and their own ids otherwise
(``RESPONSES_RULES`` / ``ANTHROPIC_RULES``: the lead merges them into ``findings.RULES``,
and ``FORMAT_PROFILES`` into ``findings.PROFILES``). ``index`` is the top-level position in
``input`` / ``messages``; ``path`` the native path.
"""

from __future__ import annotations

from typing import Any

from agentdbg.checker.findings import Finding, RuleInfo
from agentdbg.checker.formats.anthropic import ANTHROPIC_RULES, analyze_anthropic, check_anthropic
from agentdbg.checker.formats.common import FORMAT_PROFILES, resolve_profile
from agentdbg.checker.formats.responses import RESPONSES_RULES, analyze_responses, check_responses

FORMAT_RULES: dict[str, RuleInfo] = {**RESPONSES_RULES, **ANTHROPIC_RULES}


def check_document(doc: Any, fmt: str | None = None, profile: str = "openai") -> list[Finding]:
    """Findings for a parsed request body or bare array in ``fmt`` (detected when None).
    Chat Completions documents go to ``agentdbg.checker.check``; undetectable ones give []."""
    from agentdbg.wire.detect import detect_format

    fmt = fmt or detect_format(doc)
    if fmt == "responses":
        return check_responses(doc, profile)
    if fmt == "anthropic":
        return check_anthropic(doc, profile)
    if fmt == "chat":
        from agentdbg.checker import check

        return check(doc, profile)
    return []


__all__ = [
    "ANTHROPIC_RULES",
    "FORMAT_PROFILES",
    "FORMAT_RULES",
    "RESPONSES_RULES",
    "analyze_anthropic",
    "analyze_responses",
    "check_anthropic",
    "check_document",
    "check_responses",
    "resolve_profile",
]
