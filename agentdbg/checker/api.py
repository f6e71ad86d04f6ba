"""check(): every rule over one request, findings sorted by message index."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentdbg import schemas
from agentdbg.checker.clean import clean
from agentdbg.checker.findings import ERROR, RULES, WARNING, Finding
from agentdbg.checker.profiles import PROFILES, get_profile
from agentdbg.checker.request import CheckRequest
from agentdbg.checker.rules import CHECKS, WHEN_CLEAN, Ctx
from agentdbg.i18n import _

__all__ = [
    "ERROR",
    "PROFILES",
    "RULES",
    "WARNING",
    "CheckRequest",
    "Finding",
    "check",
    "has_errors",
    "summary",
]


def check(request: CheckRequest | dict | list, profile: str = "openai", *,
          in_progress: bool = False) -> list[Finding]:
    """All findings for a request body, a messages list or a ``CheckRequest``.

    ``in_progress``: the last assistant turn's calls are still being executed,
    so its missing results are pending rather than wrong.
    """
    return checked(request, profile, in_progress=in_progress)[0]


def checked(request: CheckRequest | dict | list, profile: str = "openai", *,
            in_progress: bool = False) -> tuple[list[Finding], Ctx]:
    """``check``, with what the rules saw (``Ctx``: its pairing is made when first asked)."""
    if isinstance(request, list):
        request = CheckRequest(messages=request)
    elif isinstance(request, dict):
        request = CheckRequest.from_body(request)
    if not isinstance(request.messages, list):
        request.messages = []
    rules = get_profile(profile)
    ctx = Ctx(request, rules, in_progress)
    ctx.clean = clean(ctx)   # one pass: objects only, nothing for the message rules to report
    if not ctx.clean and not all(type(m) is dict for m in request.messages):
        # rules may assume objects; a non-object keeps its index as a role-less message
        request = dataclasses.replace(request, messages=[
            m if isinstance(m, dict) else {"role": None} for m in request.messages])
        ctx = Ctx(request, rules, in_progress)
    findings: list[Finding] = []
    with schemas.budget():   # the request's calls share one check's work budget
        for run in WHEN_CLEAN if ctx.clean else CHECKS:
            findings.extend(run(ctx))
    findings.sort(key=lambda f: (-1 if f.index is None else f.index))
    return findings, ctx


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)


def summary(findings: list[Finding]) -> str:
    errors = sum(f.severity == ERROR for f in findings)
    warnings = len(findings) - errors
    if not findings:
        return _("no findings")
    return _("{errors} error(s), {warnings} warning(s)").format(errors=errors, warnings=warnings)


def check_model_request(request: Any, profile: str = "openai") -> list[Finding]:
    """The pre-send check of the engine: the exact body about to go out."""
    return check(request.body(), profile)
