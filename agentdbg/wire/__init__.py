"""The wire formats: Chat Completions, the OpenAI Responses API, the Anthropic Messages API and
the Gemini API, each behind one codec (``wire.codec``: the protocol and the registry).

Pure modules (standard library only), one set per format:

- ``responses`` / ``anthropic``: ``to_chat(body) -> ChatForm`` and ``from_chat(...) -> body``;
- ``responses_reply`` / ``anthropic_reply``: ``response_json`` / ``message_json`` (what
  ``serve`` answers), ``chat_reply(native) -> ChatReply``, ``error_body``, ``rejection``;
- ``responses_stream`` / ``anthropic_stream``: ``encode_stream(native)`` and the stream
  accumulators ``ResponsesAccumulator`` / ``AnthropicAccumulator``;
- ``pairing``: ``pair_responses`` / ``pair_anthropic`` -> ``WirePairing`` (checker and view);
- ``detect``: ``detect_format(doc)``.
"""

from agentdbg.wire.codec import NAMES as FORMATS
from agentdbg.wire.detect import detect_format

__all__ = ["FORMATS", "detect_format"]
