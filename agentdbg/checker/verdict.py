"""How the real API answers a request: None when it accepts it, else its status and error body.

One code path for every model agentdbg answers with itself: ``serve`` (a request an app sent)
and the offline model of ``run`` (the session's request, sent past the pre-send check with
``send`` or ``--send-anyway``). The checker's rules of the request's format judge the body
under the profile; the format's codec words the first error the API enforces as the API's own
status and error body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentdbg.wire.codec import Codec


def verdict(codec: Codec, body: Any, profile: str, *, prior: list | None = None,
            model: str | None = None) -> tuple[int, dict] | None:
    """(status, error body) the real API of ``codec``'s format answers ``body`` with under
    ``profile``, or None when it accepts it (``prior``: the stored items a Responses request
    continues; ``model``: the model the request is for, when its rules differ by model)."""
    from agentdbg.checker.formats import analyze

    findings, _ = analyze(codec.name, body, profile, prior=prior, model=model)
    return codec.rejection(findings)
