"""Choose the model: a script, the offline planner, or an endpoint over one of three wire
formats (Chat Completions, the Responses API, the Anthropic Messages API)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelRequest, ProviderInfo

APIS = ("chat", "responses", "anthropic")


def make_provider(model: str | None, base_url: str | None = None, api_key: str | None = None,
                  script: Path | None = None, retries: int = 0, api: str = "chat",
                  profile: str = "openai") -> ProviderInfo:
    """The provider and what to say about it (description, base URL, whether it is offline).
    ``api`` picks the wire format of a real endpoint; the offline model answers a request
    that API (under ``profile``) would reject with its status and error body."""
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ProviderInfo(ScriptedModel.from_file(script), f"scripted ({script})",
                            model=model or "scripted")
    if not model or model == "offline":
        from agentdbg.providers.judged import JudgedModel
        from agentdbg.providers.offline import OfflineModel

        return ProviderInfo(JudgedModel(OfflineModel(), api, profile),
                            Msg(N_("offline (built-in deterministic planner, no network)")),
                            model="offline", offline=True)
    if api == "responses":
        from agentdbg.providers.responses_api import ResponsesAPI

        provider = ResponsesAPI(model, base_url, api_key, retries=retries)
        return ProviderInfo(provider, f"{model} at {provider.base_url} (Responses API)", model=model,
                            base_url=provider.base_url)
    if api == "anthropic":
        from agentdbg.providers.anthropic_api import AnthropicAPI

        anthropic = AnthropicAPI(model, base_url, api_key, retries=retries)
        return ProviderInfo(anthropic, f"{model} at {anthropic.base_url} (Anthropic Messages API)",
                            model=model, base_url=anthropic.base_url)
    from agentdbg.providers.openai_compat import OpenAICompatible
    from agentdbg.transcript.redact import safe_url

    chat = OpenAICompatible(model, base_url, api_key, retries=retries)
    # the description is shown and recorded: the URL without its credentials
    return ProviderInfo(chat, f"{model} at {safe_url(chat.base_url)}", model=model,
                        base_url=chat.base_url)


def precheck_for(api: str, profile: str) -> Callable[[ModelRequest], list]:
    """The pre-send check of ``run``: the checker of ``api``'s format on the exact body about
    to be sent in that format (the session's chat form converted as the provider sends it)."""
    if api == "responses":
        from agentdbg.checker.formats import check_responses
        from agentdbg.providers.responses_api import request_body

        return lambda request: check_responses(request_body(request), profile)
    if api == "anthropic":
        from agentdbg.checker.formats import check_anthropic
        from agentdbg.providers.anthropic_api import request_body as anthropic_body

        return lambda request: check_anthropic(anthropic_body(request), profile)
    from agentdbg.checker import check_model_request

    return lambda request: check_model_request(request, profile)
