"""The protocol checker for the other wire formats: the Responses API, the Anthropic
Messages API and the Gemini API (Chat Completions stays in ``agentdbg.checker``).

    from agentdbg.checker.formats import check_document
    findings = check_document(json.loads(text))            # format detected
    findings = check_responses(body, profile="openai")     # or named

Findings use the chat rule ids where the defect is the same and their own ids otherwise
(each format's own are declared in its rule module, ``agentdbg.checker.rule``; the
``RESPONSES_RULES`` / ``ANTHROPIC_RULES`` views list what each reports). ``index`` is the
top-level position in ``input`` / ``messages``; ``path`` the native path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentdbg.checker.findings import Finding, RuleInfo
from agentdbg.checker.formats.anthropic import ANTHROPIC_RULES, analyze_anthropic, check_anthropic
from agentdbg.checker.formats.common import FORMAT_PROFILES, resolve_profile
from agentdbg.checker.formats.responses import RESPONSES_RULES, analyze_responses, check_responses

FORMAT_RULES: dict[str, RuleInfo] = {**RESPONSES_RULES, **ANTHROPIC_RULES}


Analyzer = Callable[..., "tuple[list[Finding], Any]"]


def _chat(body: Any, profile: str, *, prior: list | None = None,
          in_progress: bool = False, model: str | None = None) -> tuple[list[Finding], Any]:
    from agentdbg.checker import check
    from agentdbg.checker.pairing import analyze as pair

    messages = body.get("messages") if isinstance(body, dict) else body
    return (check(body, profile, in_progress=in_progress),
            pair(messages if isinstance(messages, list) else [], in_progress=in_progress))


def _responses(body: Any, profile: str, *, prior: list | None = None,
               in_progress: bool = False, model: str | None = None) -> tuple[list[Finding], Any]:
    return analyze_responses(body, profile, prior=prior, in_progress=in_progress)


def _anthropic(body: Any, profile: str, *, prior: list | None = None,
               in_progress: bool = False, model: str | None = None) -> tuple[list[Finding], Any]:
    return analyze_anthropic(body, profile, in_progress=in_progress)


def _gemini(body: Any, profile: str, *, prior: list | None = None,
            in_progress: bool = False, model: str | None = None) -> tuple[list[Finding], Any]:
    from agentdbg.checker.formats.gemini import analyze_gemini

    return analyze_gemini(body, profile, in_progress=in_progress, model=model)


#: each format's rules, keyed by its codec's name (the codecs never call the checker)
def _chat_findings(body: Any, profile: str, *, in_progress: bool = False) -> list[Finding]:
    from agentdbg.checker import check

    return check(body, profile, in_progress=in_progress)


ANALYZERS: dict[str, Analyzer] = {"chat": _chat, "responses": _responses, "anthropic": _anthropic,
                                  "gemini": _gemini}
#: formats whose findings come cheaper without the pairing the view draws
FINDERS: dict[str, Callable[..., list[Finding]]] = {"chat": _chat_findings}


def register(codec: str, analyzer: Analyzer) -> None:
    ANALYZERS[codec] = analyzer


def findings(codec: str, body: Any, profile: str = "openai", *, prior: list | None = None,
             in_progress: bool = False) -> list[Finding]:
    """The findings alone (Chat Completions: without computing the view's pairing)."""
    finder = FINDERS.get(codec)
    if finder is not None:
        return finder(body, profile, in_progress=in_progress)
    return analyze(codec, body, profile, prior=prior, in_progress=in_progress)[0]


def pair(codec: str, entries: list) -> Any:
    """Which result answers which call in ``entries`` (the one pairing analysis, as the
    format of ``codec`` binds them)."""
    from agentdbg.wire import codec as codecs
    from agentdbg.wire.pairing import analyze as pairing

    return pairing(codecs.get(codec), entries)


def analyze(codec: str, body: Any, profile: str = "openai", *, prior: list | None = None,
            in_progress: bool = False, model: str | None = None) -> tuple[list[Finding], Any]:
    """The findings of ``body`` as the API of ``codec`` judges it, and the pairing they were
    judged on (the view draws the same pairing). ``model``: the model the request is for, when
    the URL says it (Gemini's rules differ by model)."""
    return ANALYZERS[codec](body, profile, prior=prior, in_progress=in_progress, model=model)


def check_document(doc: Any, fmt: str | None = None, profile: str = "openai") -> list[Finding]:
    """Findings for a parsed request body or bare array in ``fmt`` (detected when None).
    Chat Completions documents go to ``agentdbg.checker.check``; undetectable ones give []."""
    from agentdbg.wire.detect import detect_format

    fmt = fmt or detect_format(doc)
    return analyze(fmt, doc, profile)[0] if fmt in ANALYZERS else []


__all__ = [
    "ANALYZERS",
    "ANTHROPIC_RULES",
    "FORMAT_PROFILES",
    "FORMAT_RULES",
    "RESPONSES_RULES",
    "analyze",
    "analyze_anthropic",
    "analyze_responses",
    "check_anthropic",
    "check_document",
    "check_responses",
    "findings",
    "register",
    "resolve_profile",
]
