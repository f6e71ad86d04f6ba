"""Choose the model: a script, the offline planner, or an OpenAI-compatible endpoint."""

from __future__ import annotations

from pathlib import Path

from agentdbg.providers.base import ProviderInfo


def make_provider(model: str | None, base_url: str | None = None, api_key: str | None = None,
                  script: Path | None = None, retries: int = 0) -> ProviderInfo:
    """The provider and what to say about it (description, base URL, whether it is offline)."""
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ProviderInfo(ScriptedModel.from_file(script), f"scripted ({script})",
                            model=model or "scripted")
    if not model or model == "offline":
        from agentdbg.providers.offline import OfflineModel

        return ProviderInfo(OfflineModel(), "offline (built-in deterministic planner, no network)",
                            model="offline", offline=True)
    from agentdbg.providers.openai_compat import OpenAICompatible
    from agentdbg.transcript.redact import safe_url

    provider = OpenAICompatible(model, base_url, api_key, retries=retries)
    # the description is shown and recorded: the URL without its credentials
    return ProviderInfo(provider, f"{model} at {safe_url(provider.base_url)}", model=model,
                        base_url=provider.base_url)
