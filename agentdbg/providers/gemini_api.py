"""The Gemini API (``models/{model}:generateContent``) through the official ``google-genai``
client.

The session stays in chat form: each request is sent as a generateContent body
(``wire.gemini.from_chat``: a model turn that came from a response goes back with its very parts,
thought signatures included) and each response comes back as a chat assistant message keeping
its parts (``chat_reply``). ``google-genai`` (the ``gemini`` extra) is imported only when this
provider is made; errors are one line naming the endpoint, never the key.
"""

from __future__ import annotations

import os
from typing import Any

from agentdbg.errors import ConfigError, ProviderError
from agentdbg.providers.base import ModelReply, ModelRequest, sdk_dump
from agentdbg.providers.bodies import gemini_body as request_body

PLACEHOLDER_KEY = "agentdbg-no-key"
CONFIG_KEYS = {"systemInstruction": "system_instruction", "tools": "tools",
               "toolConfig": "tool_config"}


def api_root(base_url: str | None) -> tuple[str | None, str]:
    """(the root URL, the API version): ``http://host/v1beta`` -> (``http://host``, ``v1beta``)."""
    url = (base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or "").rstrip("/")
    for version in ("v1beta", "v1"):
        if url.endswith("/" + version):
            return url[:-len(version) - 1], version
    return url or None, "v1beta"


class GeminiAPI:
    name = "gemini"
    wire = "gemini"
    api_label = "Gemini API"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 *, timeout: float = 60.0, retries: int = 0):
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise ConfigError("--api gemini needs the official google-genai client: "
                              "pip install 'agentdbg-cli[gemini]'") from None
        self.errors, self.types = errors, types
        self.model = model.removeprefix("models/")
        self.key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        root, version = api_root(base_url)
        options = types.HttpOptions(base_url=root, api_version=version, timeout=int(timeout * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=retries + 1))
        self.client = genai.Client(api_key=self.key or PLACEHOLDER_KEY, http_options=options)
        self.base_url = f"{root or 'https://generativelanguage.googleapis.com'}/{version}"

    def complete(self, request: ModelRequest) -> ModelReply:
        from agentdbg.wire.gemini_codec import chat_reply

        where = f"{self.base_url}/models/{self.model}:generateContent"
        body = request_body(request, self.model)
        config: dict[str, Any] = {CONFIG_KEYS[k]: v for k, v in body.items() if k in CONFIG_KEYS}
        config.update(body.get("generationConfig") or {})
        config["automatic_function_calling"] = {"disable": True}   # the session runs the tools
        if request.timeout is not None:
            config["http_options"] = {"timeout": int(request.timeout * 1000)}
        try:
            response = self.client.models.generate_content(
                model=self.model, contents=body["contents"],
                config=self.types.GenerateContentConfig.model_validate(config))
        except self.errors.APIError as exc:
            raise self._explain(where, exc) from None
        except ValueError as exc:
            raise ProviderError(self._hide(f"{where}: {exc}")) from None
        native = sdk_dump(response, mode="json", by_alias=True, exclude_none=True)
        if not isinstance(native, dict) or not native.get("candidates"):
            raise ProviderError(f"{where} answered with no candidate: {str(native)[:120]!r}")
        reply = chat_reply(native)
        return ModelReply(message=reply.message, usage=reply.usage, finish_reason=reply.finish_reason)

    def _explain(self, where: str, exc: Any) -> ProviderError:
        status = getattr(exc, "code", None)
        status = status if isinstance(status, int) else None
        hints = {400: "the API rejected the request", 401: "authentication failed",
                 403: "permission denied (is GEMINI_API_KEY right?)",
                 404: f"not found: check the model name ({self.model!r}) and --base-url",
                 429: "rate limited or out of quota; wait and try again"}
        head = hints.get(status or 0) or ("the server failed" if (status or 500) >= 500 else "error")
        message = getattr(exc, "message", None) or str(exc)
        return ProviderError(self._hide(f"{where}: HTTP {status}: {head}: {message}"),
                             retryable=status in (429, 503) or (status or 0) >= 500, status=status)

    def _hide(self, text: str) -> str:
        return text.replace(self.key, "[REDACTED]") if self.key and len(self.key) >= 4 else text
