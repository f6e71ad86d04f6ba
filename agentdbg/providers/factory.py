"""Choose the model: a script, the offline planner, or an endpoint over one of three wire
formats (Chat Completions, the Responses API, the Anthropic Messages API)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelRequest, ProviderInfo

#: the client of each wire format's endpoints, keyed by its codec's name: (module, class);
#: each module has ``request_body(request, model=None)``, the exact body it sends
CLIENTS: dict[str, tuple[str, str]] = {
    "chat": ("agentdbg.providers.openai_compat", "OpenAICompatible"),
    "responses": ("agentdbg.providers.responses_api", "ResponsesAPI"),
    "anthropic": ("agentdbg.providers.anthropic_api", "AnthropicAPI"),
    "gemini": ("agentdbg.providers.gemini_api", "GeminiAPI"),
}
APIS = tuple(CLIENTS)


def _module(api: str) -> Any:
    import importlib

    from agentdbg.errors import ConfigError

    if api not in CLIENTS:
        raise ConfigError(f"unknown --api {api!r}; choose one of: {', '.join(APIS)}")
    return importlib.import_module(CLIENTS[api][0])


def make_provider(model: str | None, base_url: str | None = None, api_key: str | None = None,
                  script: Path | None = None, retries: int = 0, api: str = "chat",
                  profile: str = "openai") -> ProviderInfo:
    """The provider and what to say about it (description, base URL, whether it is offline).
    ``api`` picks the wire format of a real endpoint; the offline model answers a request
    that API (under ``profile``) would reject with its status and error body."""
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ProviderInfo(ScriptedModel.from_file(script),
                            Msg(N_("scripted ({path})"), {"path": script}),
                            model=model or "scripted")
    if not model or model == "offline":
        from agentdbg.providers.judged import JudgedModel
        from agentdbg.providers.offline import OfflineModel

        return ProviderInfo(JudgedModel(OfflineModel(), api, profile),
                            Msg(N_("offline (built-in deterministic planner, no network)")),
                            model="offline", offline=True)
    from agentdbg.transcript.redact import safe_url

    client = getattr(_module(api), CLIENTS[api][1])(model, base_url, api_key, retries=retries)
    label = getattr(client, "api_label", None)
    # the description is shown and recorded: the URL without its credentials
    return ProviderInfo(client, Msg(N_("{model} at {url}{api}"), {
        "model": model, "url": safe_url(client.base_url), "api": f" ({label})" if label else ""}),
        model=model, base_url=client.base_url)


def precheck_for(api: str, profile: str) -> Callable[[ModelRequest], list]:
    """The pre-send check of ``run``: the checker of ``api``'s format on the exact body about
    to be sent in that format (the session's chat form converted as the provider sends it)."""
    from agentdbg.checker.formats import findings
    from agentdbg.providers.bodies import BODIES
    from agentdbg.wire.codec import DEFAULT

    api = api if api in BODIES else DEFAULT
    body_of = BODIES[api]
    return lambda request: findings(api, body_of(request, None), profile)
