"""The other wire formats: the OpenAI Responses API and the Anthropic Messages API.

Pure modules (standard library only), one set per format:

- ``responses`` / ``anthropic``: ``to_chat(body) -> ChatForm`` and ``from_chat(...) -> body``;
- ``responses_reply`` / ``anthropic_reply``: ``response_json`` / ``message_json`` (what
  ``serve`` answers), ``chat_reply(native) -> ChatReply``, ``error_body``, ``rejection``;
- ``responses_stream`` / ``anthropic_stream``: ``encode_stream(native)`` and the stream
  accumulators ``ResponsesAccumulator`` / ``AnthropicAccumulator``;
- ``pairing``: ``pair_responses`` / ``pair_anthropic`` -> ``WirePairing`` (checker and view);
- ``detect``: ``detect_format(doc)``.
"""

from agentdbg.wire.detect import detect_format

FORMATS = ("chat", "responses", "anthropic")

__all__ = ["FORMATS", "detect_format"]
