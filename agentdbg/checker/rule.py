"""A rule's id, severity and meaning, declared in the module that holds its code.

Each rule module opens with its declarations::

    DECLARED = declare(__name__,
        rule("orphan-tool-message", ERROR, "tool message not inside a tool block"),
        ...)

and ``RULES`` (``agentdbg.checker.findings.RULES``) is made of them: ``check --rules``, the
rules table in docs/rules.md (``scripts/rules_table.py``), the profiles and the findings read
it. Adding a rule is one declaration beside its code (plus its defect and valid cases); a new
rule module is also named in ``MODULES``, whose order is the order rules are listed in. A rule
module imports this one, never the other way round: ``RULES`` imports the modules it lacks on
first full use, as the codec registry does (``agentdbg.wire.codec.MODULES``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

ERROR, WARNING = "error", "warning"

#: the modules that declare rules, in the order ``check --rules`` and docs/rules.md list them
MODULES = (
    "agentdbg.checker.rules.pairing",          # pairing / ordering
    "agentdbg.checker.rules.calls",            # tool-call shape
    "agentdbg.checker.rules.content",          # content / legacy
    "agentdbg.checker.rules.request",          # request level
    "agentdbg.checker.rules.conversation",     # across requests (the proxy), a run's outcome
    "agentdbg.checker.lint",                   # the tools lint (``agentdbg tools``)
    "agentdbg.checker.handlers",
    "agentdbg.checker.lint_mcp",
    "agentdbg.checker.formats.common",         # every other wire format
    "agentdbg.checker.formats.responses_items",  # the Responses API
    "agentdbg.checker.formats.anthropic",      # the Anthropic Messages API
    "agentdbg.checker.formats.gemini",         # the Gemini API
)


@dataclass(frozen=True)
class RuleInfo:
    id: str
    severity: str          # default severity
    profiles: tuple = ()   # non-empty: only active under these profiles
    summary: str = ""      # what it means, in English (also the key its translation is found by)
    scope: str = "chat"    # chat: one Chat Completions request; conversation: across requests;
                           # run: a run's own outcome; tools: the tools lint (``agentdbg tools``);
                           # formats / responses / anthropic / gemini: the other formats' own


def rule(id: str, severity: str, summary: str, profiles: tuple[str, ...] | list[str] = (),
         scope: str = "chat") -> RuleInfo:
    return RuleInfo(id, severity, tuple(profiles), summary, scope)


class Registry(Mapping[str, RuleInfo]):
    """Every declared rule by id, in ``MODULES`` order then declaration order."""

    def __init__(self) -> None:
        self._rules: dict[str, RuleInfo] = {}
        self._module: dict[str, str] = {}
        self._complete = False

    def declare(self, module: str, *infos: RuleInfo) -> tuple[RuleInfo, ...]:
        if module not in MODULES:
            raise ValueError(f"{module} declares rules but is not in agentdbg.checker.rule.MODULES")
        for info in infos:
            if self._module.setdefault(info.id, module) != module:
                raise ValueError(f"rule {info.id} is declared twice ({self._module[info.id]}, {module})")
            self._rules[info.id] = info
        if self._complete:
            self._order()
        return infos

    def module_of(self, rule_id: str) -> str:
        self._load()
        return self._module[rule_id]

    def _load(self) -> None:
        if self._complete:
            return
        for name in MODULES:
            importlib.import_module(name)
        self._complete = True
        self._order()

    def _order(self) -> None:
        rank = {m: n for n, m in enumerate(MODULES)}
        order = sorted(self._rules, key=lambda r: rank[self._module[r]])   # stable: declaration order
        self._rules = {r: self._rules[r] for r in order}

    def __getitem__(self, rule_id: str) -> RuleInfo:
        found = self._rules.get(rule_id)
        if found is None and not self._complete:
            self._load()
            found = self._rules.get(rule_id)
        if found is None:
            raise KeyError(rule_id)
        return found

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(self._rules)

    def __len__(self) -> int:
        self._load()
        return len(self._rules)


RULES = Registry()


def declare(module: str, *infos: RuleInfo) -> tuple[RuleInfo, ...]:
    """Register the rules a module holds the code of (``module``: its ``__name__``)."""
    return RULES.declare(module, *infos)
