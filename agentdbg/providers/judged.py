"""The offline model behind the real API's judgement, as ``serve`` answers.

The planner itself reads any history. A real API does not: a request whose history breaks
a rule it enforces (a tool message with no call before it, after ``drop 1``) gets a 400 and
the API's error body. ``JudgedModel`` judges each request in the run's wire format under the
profile, by the same code path as ``serve`` (``checker.verdict`` with the format's codec), and
answers a broken one with that status and body, so ``send`` in step mode shows the real failure
with no server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentdbg.checker.profiles import get_profile
from agentdbg.checker.verdict import verdict
from agentdbg.errors import ProviderError
from agentdbg.i18n import N_, Msg
from agentdbg.providers.base import ModelReply, ModelRequest, Provider
from agentdbg.providers.bodies import BODIES
from agentdbg.wire import codec as codecs

if TYPE_CHECKING:
    from agentdbg.conversation import JSON

# how a rejection reads (a replay finds it again in the recorded English: ``Msg.parse``)
REJECTED = N_("HTTP {status} (the offline model answers as the {api} would, --profile {profile}): "
              "{error}")


class JudgedModel:
    def __init__(self, inner: Provider, api: str = codecs.DEFAULT, profile: str = "openai"):
        self.inner = inner
        self.codec = codecs.get(api if codecs.known(api) else codecs.DEFAULT)
        self.profile = profile
        self.name = inner.name

    def complete(self, request: ModelRequest) -> ModelReply:
        body = BODIES[self.codec.name](request, None)   # as it goes out in the run's format
        rejected = verdict(self.codec, body, self.profile, model=request.model)
        if rejected is not None:
            status, error = rejected
            said = {"status": status, "api": api_name(get_profile(self.profile).api, self.codec),
                    "profile": self.profile, "error": quoted(error)}
            shown = Msg(REJECTED, said)
            raise ProviderError(str(shown), status=status, body=error, shown=shown)
        return self.inner.complete(request)


def quoted(body: JSON) -> str:
    """The error body's message as the API wrote it, with the parameter it names (as the
    checker's "API says:" quotes it): ``… 'tool_calls'. (param: messages.[1].role)``."""
    text = codecs.error_text(body)
    err = body.get("error") if isinstance(body, dict) else None
    param = err.get("param") if isinstance(err, dict) else None
    return f"{text} (param: {param})" if isinstance(param, str) and param else text


def api_name(vendor: str, codec: codecs.Codec) -> str:
    """Whose API answers: a format of its own vendor's says so itself ("Anthropic Messages
    API", "Gemini API"); an OpenAI format is spoken by the profile's server ("OpenAI Chat
    Completions API", "DeepSeek Chat Completions API")."""
    name = codec.label if codec.provider is not None else f"{vendor} {codec.label}"
    return name if name.endswith(" API") else f"{name} API"
