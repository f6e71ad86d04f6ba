"""Any OpenAI-compatible endpoint, through the official ``openai`` client.

The only module that imports ``openai``. Errors become one-line
``ProviderError``s that name the endpoint (never the key).
"""

from __future__ import annotations

from typing import Any

import openai

from agentdbg.errors import ProviderError
from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelReply, ModelRequest, sdk_dump
from agentdbg.providers.bodies import chat_body as request_body
from agentdbg.transcript.redact import safe_url, url_secrets

PLACEHOLDER_KEY = "agentdbg-no-key"  # local servers need no key; the client insists on one


class OpenAICompatible:
    name = "openai"
    api_label: str | None = None

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 *, timeout: float = 60.0, retries: int = 0):
        self.model = model
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or PLACEHOLDER_KEY,
                                    timeout=timeout, max_retries=retries,
                                    http_client=_nodelay_client(timeout))
        self.base_url = str(self.client.base_url).rstrip("/")
        self.shown_url = safe_url(self.base_url)  # errors name the endpoint, not its credentials
        self.has_key = bool(api_key)

    def complete(self, request: ModelRequest) -> ModelReply:
        body = request_body(request, self.model)
        kwargs: dict[str, Any] = {}
        if request.timeout is not None:
            kwargs["timeout"] = request.timeout
        try:
            response = self.client.chat.completions.create(**body, **kwargs)
        except openai.APIError as exc:
            raise self._hide_key(self._explain(exc)) from None
        except ValueError as exc:  # a 200 whose body is not JSON
            raise ProviderError(f"{self.shown_url}/chat/completions answered with a body that is "
                                f"not valid JSON ({exc})") from None
        if not hasattr(response, "choices"):  # e.g. a 200 with a JSON string or list body
            raise ProviderError(f"{self.shown_url}/chat/completions answered with something that "
                                f"is not a chat completion: {str(response)[:120]!r}")
        return self._reply(response)

    def _hide_key(self, error: ProviderError) -> ProviderError:
        """A server may echo the key (or the URL's credentials) in its error text; they never
        reach the user's screen."""
        key = self.client.api_key
        for secret in [key if key != PLACEHOLDER_KEY else "", *url_secrets(self.base_url)]:
            if len(secret) >= 4 and secret in error.message:  # the key, or URL credentials
                error.message = error.message.replace(secret, "[REDACTED]")
                error.args = (error.message,)
        return error

    def _reply(self, response: Any) -> ModelReply:
        choices = getattr(response, "choices", None)
        if not choices:
            raise ProviderError(f"{self.shown_url}/chat/completions answered with no choices")
        choice = choices[0]
        if getattr(choice, "message", None) is None:
            raise ProviderError(f"{self.shown_url}/chat/completions answered a choice with no message")
        message = _message_dict(choice.message)
        usage = sdk_dump(response.usage, exclude_none=True) if response.usage else {}
        usage = {k: v for k, v in usage.items() if isinstance(v, (int, float))}
        return ModelReply(message=message, usage=usage, finish_reason=choice.finish_reason)

    def _explain(self, exc: openai.APIError) -> ProviderError:
        where = f"{self.shown_url}/chat/completions"
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


def _nodelay_client(timeout: float) -> Any:
    """The client's own HTTP client, with TCP_NODELAY.

    Without it the request's headers and body leave in two segments and each request to
    a local server (vLLM, Ollama, llama.cpp, agentdbg serve) waits ~40 ms for a delayed
    ACK. None (the client's default) when this openai version exposes no such hook.
    """
    import socket

    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    factory: Any
    transport_lib: Any
    try:
        if hasattr(openai, "DefaultHttpx2Client"):
            import httpx2

            factory, transport_lib = openai.DefaultHttpx2Client, httpx2
        else:
            import httpx

            factory, transport_lib = openai.DefaultHttpxClient, httpx
        limits = getattr(openai, "DEFAULT_CONNECTION_LIMITS", None) or transport_lib.Limits(
            max_connections=1000, max_keepalive_connections=100)
        transport = transport_lib.HTTPTransport(socket_options=options, limits=limits)
        return factory(transport=transport, timeout=timeout)
    except (ImportError, AttributeError, TypeError):
        return None


def _status_error(where: str, model: str, exc: openai.APIStatusError, has_key: bool) -> ProviderError:
    status = exc.status_code
    detail = _api_message(exc)
    hints = {
        401: Msg(N_("authentication failed")) if has_key else
        Msg(N_("authentication failed; set OPENAI_API_KEY or --api-key")),
        403: Msg(N_("permission denied for this key or model")),
        404: Msg(N_("not found: check the model name ({model}) and --base-url"), {"model": repr(model)}),
        429: Msg(N_("rate limited or out of quota; wait and try again")),
    }
    if status in hints:
        head = hints[status]
    elif status >= 500:
        head = Msg(N_("the server failed"))
    else:
        head = Msg(N_("the API rejected the request"))
    return ProviderError(Msg(N_("{where}: HTTP {status}: {head}: {detail}"),
                             {"where": where, "status": status, "head": head, "detail": detail}),
                         retryable=status == 429 or status >= 500, status=status)


def _api_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return str(getattr(exc, "message", "") or exc)


def _cause(exc: Exception) -> str:
    cause = exc.__cause__ or exc.__context__
    while cause is not None and (cause.__cause__ or cause.__context__) is not None:
        cause = cause.__cause__ or cause.__context__
    return str(cause) if cause else "connection error"


def _message_dict(message: Any) -> dict:
    data = sdk_dump(message, exclude_none=True)
    out: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
    if data.get("tool_calls"):
        out["tool_calls"] = [
            {"id": c.get("id"), "type": c.get("type", "function"),
             "function": {"name": (c.get("function") or {}).get("name"),
                          "arguments": (c.get("function") or {}).get("arguments")}}
            for c in data["tool_calls"]
        ]
    for extra in ("reasoning_content", "refusal"):
        if data.get(extra):
            out[extra] = data[extra]
    return out
