"""The OpenAI Responses API (``POST /v1/responses``) through the official ``openai`` client.

The session stays in chat form: each request is sent as a Responses body
(``wire.responses.from_chat``: a message that came from an earlier response goes back as the
very items it came from, reasoning items and ids included) and each response comes back as a
chat assistant message that keeps its native items for the next request (``chat_reply``).
Imported only for ``run --api responses``; errors are one line naming the endpoint.
"""

from __future__ import annotations

from typing import Any

import openai

from agentdbg.errors import ProviderError
from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelReply, ModelRequest, sdk_dump
from agentdbg.providers.bodies import responses_body as request_body
from agentdbg.providers.openai_compat import (
    PLACEHOLDER_KEY,
    _api_message,
    _cause,
    _nodelay_client,
    _status_error,
)


class ResponsesAPI:
    name = "openai-responses"
    wire = "responses"
    api_label = "Responses API"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 *, timeout: float = 60.0, retries: int = 0):
        self.model = model
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or PLACEHOLDER_KEY,
                                    timeout=timeout, max_retries=retries,
                                    http_client=_nodelay_client(timeout))
        self.base_url = str(self.client.base_url).rstrip("/")
        self.has_key = bool(api_key)

    def complete(self, request: ModelRequest) -> ModelReply:
        from agentdbg.wire.responses_reply import chat_reply

        where = f"{self.base_url}/responses"
        kwargs: dict[str, Any] = {}
        if request.timeout is not None:
            kwargs["timeout"] = request.timeout
        try:
            response = self.client.responses.create(**request_body(request, self.model), **kwargs)
        except openai.APIError as exc:
            raise self._hide_key(self._explain(where, exc)) from None
        except ValueError as exc:  # a 200 whose body is not JSON
            raise ProviderError(f"{where} answered with a body that is not valid JSON ({exc})") from None
        native = sdk_dump(response, mode="json", exclude_unset=True) \
            if hasattr(response, "model_dump") else None
        if not isinstance(native, dict) or not isinstance(native.get("output"), list):
            raise ProviderError(f"{where} answered with something that is not a response: "
                                f"{str(response)[:120]!r}")
        if native.get("status") == "failed" or native.get("error"):
            error = native.get("error") or {}
            raise ProviderError(f"{where}: the response failed: "
                                f"{error.get('message') if isinstance(error, dict) else error}")
        reply = chat_reply(native)
        return ModelReply(message=reply.message, usage=reply.usage, finish_reason=reply.finish_reason)

    def _explain(self, where: str, exc: openai.APIError) -> ProviderError:
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(Msg(N_("{where}: the request timed out"), {"where": where}),
                                 retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(Msg(N_("{where}: cannot connect ({cause}); is the server running "
                                        "and is --base-url right?"),
                                     {"where": where, "cause": _cause(exc)}), retryable=True)
        if isinstance(exc, openai.APIStatusError):
            return _status_error(where, self.model, exc, self.has_key)
        return ProviderError(f"{where}: {type(exc).__name__}: {_api_message(exc)}")

    def _hide_key(self, error: ProviderError) -> ProviderError:
        key = self.client.api_key
        if key and len(key) >= 4 and key != PLACEHOLDER_KEY and key in error.message:
            error.message = error.message.replace(key, "[REDACTED]")
            error.args = (error.message,)
        return error
