"""The offline model behind the real API's judgement, as ``serve`` answers.

The planner itself reads any history. A real API does not: a request whose history breaks
a rule it enforces (a tool message with no call before it, after ``drop 1``) gets a 400 and
the API's error body. ``JudgedModel`` judges each request in the run's wire format under the
profile, by the same code path as ``serve`` (``checker.verdict``), and answers a broken one
with that status and body, so ``send`` in step mode shows the real failure with no server.
"""

from __future__ import annotations

from agentdbg.checker.profiles import get_profile
from agentdbg.checker.verdict import error_text, verdict
from agentdbg.errors import ProviderError
from agentdbg.i18n import Msg
from agentdbg.providers.base import ModelReply, ModelRequest, Provider

API_NAMES = {"chat": "Chat Completions", "responses": "Responses", "anthropic": "Messages"}


class JudgedModel:
    def __init__(self, inner: Provider, api: str = "chat", profile: str = "openai"):
        self.inner = inner
        self.api = api
        self.profile = profile
        self.name = inner.name

    def complete(self, request: ModelRequest) -> ModelReply:
        rejected = verdict(self.api, native_body(request, self.api), self.profile)
        if rejected is not None:
            status, body = rejected
            said = {"status": status, "api": f"{get_profile(self.profile).api} "
                                             f"{API_NAMES.get(self.api, self.api)} API",
                    "profile": self.profile, "error": error_text(body)}
            shown = Msg("HTTP {status} (the offline model answers as the {api} would, --profile "
                        "{profile}): {error}", said)
            raise ProviderError(str(shown), status=status, body=body, shown=shown)
        return self.inner.complete(request)


def native_body(request: ModelRequest, api: str) -> dict:
    """The request as it goes out in ``api``'s wire format (what the pre-send check judges)."""
    if api == "responses":
        from agentdbg.providers.responses_api import request_body

        return request_body(request)
    if api == "anthropic":
        from agentdbg.providers.anthropic_api import request_body as anthropic_body

        return anthropic_body(request)
    return request.body()
