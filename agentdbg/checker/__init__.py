"""The protocol checker: findings for a request (or a history) as the real APIs judge it.

    from agentdbg.checker import check
    findings = check({"messages": [...], "tools": [...]}, profile="openai")

``check`` and its helpers live in ``checker.api`` and load on first use, so the CLI can
read ``checker.profiles`` at start-up without loading the rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentdbg.checker.api import (
        ERROR,
        PROFILES,
        RULES,
        WARNING,
        CheckRequest,
        Finding,
        check,
        check_model_request,
        has_errors,
        summary,
    )

__all__ = ["ERROR", "PROFILES", "RULES", "WARNING", "CheckRequest", "Finding", "check",
           "check_model_request", "has_errors", "summary"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentdbg.checker import api

        return getattr(api, name)
    raise AttributeError(f"module 'agentdbg.checker' has no attribute {name!r}")
