"""The OpenTelemetry names the export uses, pinned in one place.

Revision: the GenAI semantic conventions of OpenTelemetry semantic-conventions
**v1.37.0** (status: Development), the release that introduced ``gen_ai.provider.name``
(replacing ``gen_ai.system``) and the ``gen_ai.input.messages`` /
``gen_ai.output.messages`` attributes. The names equal the constants of the
``opentelemetry-semantic-conventions`` 0.66b1 package (a test compares them). When the
conventions move, change this module (and ``SCHEMA_URL``) only.
"""

from __future__ import annotations

SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"
INSTRUMENTATION = "agentdbg"

# span names: "{operation} {detail}"
OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
AGENT_NAME_VALUE = "agentdbg"

# attributes (gen_ai.* are Development; error.type and server.* are Stable)
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
#: where agentdbg's recorded usage keeps them (Anthropic's own names; OpenAI's cached_tokens too)
CACHE_READ_KEY, CACHE_CREATION_KEY = "cache_read_input_tokens", "cache_creation_input_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
# opt-in (only with content=True): what was said
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

# well-known gen_ai.provider.name values, by the endpoint's host
PROVIDERS_BY_HOST = {
    "api.openai.com": "openai",
    "api.deepseek.com": "deepseek",
    "api.mistral.ai": "mistral_ai",
    "api.groq.com": "groq",
    "api.x.ai": "x_ai",
    "api.perplexity.ai": "perplexity",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "gcp.gemini",
    "aiplatform.googleapis.com": "gcp.vertex_ai",
}
OPENAI_COMPATIBLE = "openai"   # any other OpenAI-compatible endpoint (the spec's best knowledge)

# agentdbg's own names (not GenAI conventions): findings and your actions as span events
EVENT_FINDING = "agentdbg.finding"
EVENT_ACTION = "agentdbg.action"
EVENT_BLOCKED = "agentdbg.request_blocked"
FINDING_RULE = "agentdbg.finding.rule"
FINDING_SEVERITY = "agentdbg.finding.severity"
FINDING_MESSAGE = "agentdbg.finding.message"
FINDING_API_ERROR = "agentdbg.finding.api_error"
FINDING_INDEX = "agentdbg.finding.message_index"
FINDING_TOOL_CALL_ID = "agentdbg.finding.tool_call_id"
STOP_REASON = "agentdbg.stop_reason"
TURN = "agentdbg.turn"
INJECTED = "agentdbg.tool.injected"
ACTION = "agentdbg.action.name"
