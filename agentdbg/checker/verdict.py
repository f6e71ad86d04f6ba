"""How the real API answers a request: None when it accepts it, else its status and error body.

One code path for every model agentdbg answers with itself: ``serve`` (a request an app sent)
and the offline model of ``run`` (the session's request, sent past the pre-send check with
``send`` or ``--send-anyway``). The format's checker judges the body under the profile; the
first error the API enforces becomes the API's own status and error body.
"""

from __future__ import annotations

from typing import Any


def analyze(api: str, body: dict, profile: str, *, prior: list | None = None,
            in_progress: bool = False) -> tuple[list, Any]:
    """The findings of ``api``'s checker on ``body`` and the pairing they were judged on."""
    if api == "responses":
        from agentdbg.checker.formats import analyze_responses

        return analyze_responses(body, profile, prior=prior, in_progress=in_progress)
    if api == "anthropic":
        from agentdbg.checker.formats import analyze_anthropic

        return analyze_anthropic(body, profile, in_progress=in_progress)
    from agentdbg.checker.api import check
    from agentdbg.checker.pairing import analyze as pairing

    return (check(body, profile, in_progress=in_progress),
            pairing(body.get("messages") or [], in_progress=in_progress))


def rejection(api: str, findings: list) -> tuple[int, dict] | None:
    """The API's answer to the first error among ``findings`` it enforces (None: it accepts)."""
    if api == "responses":
        from agentdbg.wire.responses_reply import rejection as responses

        return responses(findings)
    if api == "anthropic":
        from agentdbg.wire.anthropic_reply import rejection as anthropic

        return anthropic(findings)
    from agentdbg.wire.chat import rejection as chat

    return chat(findings)


def verdict(api: str, body: dict, profile: str, *, prior: list | None = None) -> tuple[int, dict] | None:
    """(status, error body) the real API answers ``body`` with, or None when it accepts it."""
    return rejection(api, analyze(api, body, profile, prior=prior)[0])


def error_text(body: Any) -> str:
    """The message of an error body in any of the three formats."""
    import json

    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else json.dumps(body, ensure_ascii=False)[:200]
