"""The Anthropic Messages API (``POST /v1/messages``) through the official ``anthropic`` client.

The session stays in chat form: each request is sent as a Messages body
(``wire.anthropic.from_chat``: leading system messages become ``system``, tool results become
``tool_result`` blocks, an assistant turn that came from a response goes back with its very
blocks, thinking and signatures included) and each response comes back as a chat assistant
message keeping its blocks (``chat_reply``). The ``anthropic`` client (an extra) is imported
only when this provider is made.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from agentdbg.errors import ConfigError, ProviderError
from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelReply, ModelRequest, sdk_dump
from agentdbg.providers.bodies import MAX_TOKENS
from agentdbg.providers.bodies import anthropic_body as request_body
from agentdbg.providers.openai_compat import _api_message, _cause

PLACEHOLDER_KEY = "agentdbg-no-key"


def api_root(base_url: str | None) -> str | None:
    """Anthropic's base URL has no /v1 (the client adds /v1/messages); accept one that does."""
    url = base_url or os.environ.get("ANTHROPIC_BASE_URL")
    if url and url.rstrip("/").endswith("/v1"):
        return url.rstrip("/")[:-len("/v1")]
    return url


class AnthropicAPI:
    name = "anthropic"
    wire = "anthropic"
    api_label = "Anthropic Messages API"
    wire_params: ClassVar[dict] = {"max_tokens": MAX_TOKENS}   # recorded in transcripts

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 *, timeout: float = 60.0, retries: int = 0):
        try:
            import anthropic
        except ImportError:
            raise ConfigError("--api anthropic needs the official anthropic client: "
                              "pip install 'agentdbg-cli[anthropic]'") from None
        self.sdk = anthropic
        self.model = model
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        self.client = anthropic.Anthropic(base_url=api_root(base_url), api_key=key or PLACEHOLDER_KEY,
                                          timeout=timeout, max_retries=retries)
        self.base_url = str(self.client.base_url).rstrip("/")
        self.has_key = bool(key)
        self.key = key

    def complete(self, request: ModelRequest) -> ModelReply:
        from agentdbg.wire.anthropic_reply import chat_reply

        where = f"{self.base_url}/v1/messages"
        kwargs: dict[str, Any] = {}
        if request.timeout is not None:
            kwargs["timeout"] = request.timeout
        try:
            message = self.client.messages.create(**request_body(request, self.model), **kwargs)
        except self.sdk.APIError as exc:
            raise self._hide_key(self._explain(where, exc)) from None
        except ValueError as exc:
            raise ProviderError(f"{where} answered with a body that is not valid JSON ({exc})") from None
        native = sdk_dump(message, mode="json", exclude_unset=True) \
            if hasattr(message, "model_dump") else None
        if not isinstance(native, dict) or native.get("type") != "message":
            raise ProviderError(f"{where} answered with something that is not a message: "
                                f"{str(message)[:120]!r}")
        reply = chat_reply(native)
        return ModelReply(message=reply.message, usage=reply.usage, finish_reason=reply.finish_reason)

    def _explain(self, where: str, exc: Any) -> ProviderError:
        sdk = self.sdk
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(Msg(N_("{where}: the request timed out"), {"where": where}),
                                 retryable=True)
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderError(Msg(N_("{where}: cannot connect ({cause}); is the server running "
                                        "and is --base-url right?"),
                                     {"where": where, "cause": _cause(exc)}), retryable=True)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            hints = {401: "authentication failed" + ("" if self.has_key else
                                                     "; set ANTHROPIC_API_KEY or --api-key"),
                     403: "permission denied for this key or model",
                     404: f"not found: check the model name ({self.model!r}) and --base-url",
                     429: "rate limited or out of quota; wait and try again",
                     529: "the API is overloaded; try again later"}
            head = hints.get(status) or ("the server failed" if status >= 500
                                         else "the API rejected the request")
            return ProviderError(f"{where}: HTTP {status}: {head}: {_api_message(exc)}",
                                 retryable=status in (429, 529) or status >= 500, status=status)
        return ProviderError(f"{where}: {type(exc).__name__}: {_api_message(exc)}")

    def _hide_key(self, error: ProviderError) -> ProviderError:
        if self.key and len(self.key) >= 4 and self.key in error.message:  # 'x' is no secret
            error.message = error.message.replace(self.key, "[REDACTED]")
            error.args = (error.message,)
        return error
