"""What the format checkers share: their rule registries, the extra profile, a context that
makes findings with a native path, and the argument checks every format runs on a call."""

from __future__ import annotations

import re
from typing import Any

from agentdbg.checker.context import parse_arguments
from agentdbg.checker.findings import ERROR, RULES, WARNING, Finding, RuleInfo, make
from agentdbg.checker.profiles import PROFILES, Profile, get_profile
from agentdbg.checker.rule import declare, rule
from agentdbg.checker.rules.calls import schema_problems
from agentdbg.i18n import Msg

# shared by the other formats; they reuse the Chat Completions ids where the defect is the same
DECLARED = declare(
    __name__,
    rule("tool-definition-nested", ERROR, "a tool written in another format's shape (a Chat "
         "Completions {type, function: {…}} tool sent to the Responses or Messages API)",
         scope="formats"),
)

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def registry(*ids: str) -> dict[str, RuleInfo]:
    """The entries of ``findings.RULES`` a format checker reports (the one vocabulary)."""
    return {i: RULES[i] for i in ids}


SHARED_RULES = registry("tool-definition-nested")
FORMAT_PROFILES: dict[str, Profile] = {"anthropic-vertex": PROFILES["anthropic-vertex"]}


def resolve_profile(name: str) -> Profile:
    return FORMAT_PROFILES.get(name) or get_profile(name)


class FormatCtx:
    """The profile, the format's rule registry and a finding factory with native paths."""

    def __init__(self, profile: str, registry: dict[str, RuleInfo]):
        self.profile = PROFILES.get(profile) or resolve_profile(profile)
        self.registry = registry
        self.findings: list[Finding] = []

    def info(self, rule_id: str) -> RuleInfo:
        return self.registry.get(rule_id) or RULES[rule_id]

    def on(self, rule_id: str) -> bool:
        info = self.info(rule_id)
        return not info.profiles or rule_id in self.profile.extra_rules

    def add(self, rule_id: str, index: int | None, path: str | None, message: str | Msg,
            api_error: str | None = None, call_id: Any = None, severity: str | None = None) -> None:
        if not self.on(rule_id):
            return
        if severity is None:
            info = self.info(rule_id)
            # the profile's server rejects what is only a warning elsewhere (vLLM, Qwen)
            severity = ERROR if rule_id in self.profile.errors else info.severity
        f = make(rule_id, index, message, api_error, call_id, severity)
        f.path = path
        self.findings.append(f)

    def sorted(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (-1 if f.index is None else f.index))


def kind_of(value: Any) -> str:
    """'an object', 'an array', 'a number' … as the APIs' type errors word it."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else f"a {type(value).__name__}"


def parsed_arguments(text: str) -> tuple[Any, str | None]:
    """(parsed value, None) or (None, the JSON error)."""
    try:
        return parse_arguments(text), None
    except ValueError as exc:
        return None, str(exc)


def schema_mismatch(schemas: dict, name: str, text: str, value: dict) -> str:
    schema = schemas.get(name)
    return schema_problems(schema, text, value, name=name) if isinstance(schema, dict) else ""


__all__ = ["ERROR", "WARNING", "FormatCtx", "registry"]
