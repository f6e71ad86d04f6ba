"""Findings and the rule vocabulary: every rule id with its default severity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import Msg, recorded, tr

ERROR, WARNING = "error", "warning"


@dataclass
class Finding:
    rule: str
    severity: str
    index: int | None               # message index, or None for request-level rules
    message: str                    # what is wrong and how to fix it (one line)
    api_error: str | None = None    # what the real API answers (None: it accepts it)
    tool_call_id: str | None = None
    line: int | None = None         # JSONL input: which line
    path: str | None = None         # where in the format's own structure, e.g. "input[5]",
                                    # "messages[3].content[1]" (None: messages[index])
    api_source: str | None = None   # whose text api_error is when it is not the active
                                    # profile's API, e.g. "Anthropic", "vLLM"
    shown: Any = field(default=None, compare=False, repr=False)
                                    # ``message`` to show in the chosen language (an i18n.Msg);
                                    # ``message`` stays English: JSON output and transcripts

    def text(self) -> str:
        """What is wrong, in the chosen language (a recorded finding read back into the template
        it was made from, else as recorded)."""
        return tr(self.shown) if self.shown is not None else recorded(self.message)

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        """A recorded finding (``to_dict()`` in a transcript) back, its path and line too;
        every field is data of any JSON type, so what is not of its kind is left out."""
        def of(value: Any, kind: type) -> Any:
            return value if isinstance(value, kind) and not isinstance(value, bool) else None
        return cls(rule=str(d.get("rule")), severity=str(d.get("severity") or "error"),
                   index=of(d.get("index"), int), message=str(d.get("message") or ""),
                   api_error=of(d.get("api_error"), str), tool_call_id=of(d.get("tool_call_id"), str),
                   line=of(d.get("line"), int), path=of(d.get("path"), str),
                   api_source=of(d.get("api_source"), str))

    def to_dict(self) -> dict:
        d = {"rule": self.rule, "severity": self.severity, "index": self.index,
             "tool_call_id": self.tool_call_id, "message": self.message,
             "api_error": self.api_error}
        if self.api_source is not None:
            d["api_source"] = self.api_source
        if self.line is not None:
            d["line"] = self.line
        if self.path is not None:
            d["path"] = self.path
        return d


@dataclass(frozen=True)
class RuleInfo:
    id: str
    severity: str          # default severity
    profiles: tuple = ()   # non-empty: only active under these profiles
    summary: str = ""
    scope: str = "chat"    # chat: one Chat Completions request; conversation: across requests;
                           # run: a run's own outcome; tools: the tools lint (``agentdbg tools``)


def _r(id, sev, summary, profiles=(), scope="chat"):
    return RuleInfo(id, sev, tuple(profiles), summary, scope)


RULES: dict[str, RuleInfo] = {r.id: r for r in [
    # pairing / ordering
    _r("orphan-tool-message", ERROR, "tool message not inside a tool block"),
    _r("missing-tool-response", ERROR, "a tool_calls id with no tool message in its block"),
    _r("interleaved-message", ERROR, "a message sits between tool_calls and some of its results"),
    _r("tool-call-id-mismatch", ERROR, "tool_call_id not among the block's tool_calls ids"),
    _r("tool-message-missing-id", ERROR, "tool message without tool_call_id"),
    _r("duplicate-tool-response", ERROR, "second tool message for one id in a block"),
    _r("duplicate-tool-call-id", ERROR, "id repeated in one tool_calls array or reused later"),
    _r("results-out-of-order", ERROR, "results not in tool_calls order", ["positional"]),
    # tool-call shape
    _r("tool-call-missing-id", ERROR, "tool_calls entry without id"),
    _r("tool-call-malformed", ERROR, "entry lacks type/function/name/arguments"),
    _r("empty-tool-calls", ERROR, "tool_calls: []"),
    _r("arguments-not-string", ERROR, "function.arguments is not a string"),
    _r("arguments-invalid-json", WARNING, "arguments do not parse as JSON (an error under the "
       "profiles that reject it: vllm, qwen)"),
    _r("arguments-not-object", WARNING, "arguments parse to a non-object (an error under vllm, "
       "qwen)"),
    _r("unknown-tool", WARNING, "function.name not among the request's tools"),
    _r("arguments-schema-mismatch", WARNING, "arguments fail the tool's JSON Schema"),
    _r("arguments-duplicate-key", WARNING, "arguments repeat a key: every JSON parser keeps the "
       "last value, so the tool gets it while a reader (or an approval) may have seen the first"),
    _r("invalid-tool-name", ERROR, "name does not match ^[a-zA-Z0-9_-]{1,64}$"),
    # content / legacy
    _r("null-content", ERROR, "content null where a string is required"),
    _r("content-wrong-type", ERROR, "content is an object/number"),
    _r("function-message-missing-name", ERROR, "legacy role function without name"),
    _r("empty-content", ERROR, "content \"\" (empty text block)", ["anthropic-proxy"]),
    _r("consecutive-same-role", ERROR, "two user or two assistant messages in a row",
       ["deepseek-reasoner-legacy"]),
    _r("reasoning-content-missing", ERROR, "tool-call turn replayed without reasoning_content",
       ["deepseek-thinking", "kimi-thinking"]),
    _r("tool-call-id-format", ERROR, "id format the provider rejects", ["anthropic-proxy", "mistral"]),
    # request level
    _r("empty-messages", ERROR, "messages: [] (at least one message is required)"),
    _r("too-many-tools", ERROR, "more than 128 tools"),
    _r("tool-params-without-tools", ERROR, "tools: [] or tool_choice/parallel_tool_calls without tools"),
    _r("bad-tool-choice", ERROR, "tool_choice value the API rejects"),
    _r("strict-schema-invalid", ERROR, "strict tool schema breaks strict-mode rules"),
    # across requests (the proxy)
    _r("response-not-appended", WARNING, "the next request goes on without the model's tool-call "
       "reply", scope="conversation"),
    _r("results-not-sent", WARNING, "the reply was kept without its calls and no results follow",
       scope="conversation"),
    _r("history-rewritten", WARNING, "an earlier message changed between requests",
       scope="conversation"),
    _r("repeated-call", WARNING, "the same call asked for and executed again and again",
       scope="conversation"),
    # a run's own outcome (the view and the stop line)
    _r("empty-final-answer", WARNING, "the run completed with an answer that has no text",
       scope="run"),
    # the tools lint (``agentdbg tools``); it also reports invalid-tool-name, too-many-tools
    # and strict-schema-invalid above, for the same defects in the definitions
    _r("tools-file-invalid", ERROR, "the tools file breaks a rule the loader enforces",
       scope="tools"),
    _r("duplicate-tool-name", ERROR, "two tools with one name", scope="tools"),
    _r("parameters-schema-invalid", ERROR, "parameters is not a valid JSON Schema",
       scope="tools"),
    _r("many-tools", WARNING, "more than 20 tools: the model picks the wrong one more often",
       scope="tools"),
    _r("description-without-when", WARNING, "the description does not say when to use the tool",
       scope="tools"),
    _r("required-list-missing", WARNING, "parameters have no 'required' list", scope="tools"),
    _r("parameter-undescribed", WARNING, "a parameter without a description", scope="tools"),
    _r("closed-set-without-enum", WARNING, "a parameter that looks like a closed set has no "
       "enum", scope="tools"),
    _r("side-effects-without-approval", WARNING, "side_effects: true without approval: always",
       scope="tools"),
    _r("handler-not-found", ERROR, "a python handler whose module or function does not exist",
       scope="tools"),
    _r("handler-signature-mismatch", ERROR, "a python handler that cannot take the schema's "
       "parameters as keyword arguments", scope="tools"),
    _r("handler-parameter-optional", WARNING, "a python handler needs a parameter the schema "
       "lets the model leave out", scope="tools"),
    _r("schema-not-checkable", WARNING, "a part of a parameters schema agentdbg cannot check "
       "safely (a $ref it never retrieves, a pattern RE2 cannot run): skipped", scope="tools"),
    _r("schema-too-costly", WARNING, "a parameters schema over agentdbg's work budget (its "
       "references expanded, more than 10,000 parts): arguments are not checked against it",
       scope="tools"),
    _r("mcp-tool-invalid", ERROR, "an MCP server lists a tool the API would reject (its name, "
       "its inputSchema, a name two tools share)", scope="tools"),
    _r("mcp-tool-undescribed", WARNING, "an MCP tool with no description", scope="tools"),
    _r("mcp-no-read-only-hint", WARNING, "an MCP tool without readOnlyHint: its policy comes "
       "from the server's unhinted setting", scope="tools"),
    _r("mcp-strict-schema-invalid", WARNING, "an MCP server's inputSchemas break strict mode",
       scope="tools"),
    # the Responses API and the Anthropic Messages API (plus the shared ids above)
    _r("tool-definition-nested", ERROR, "a tool written in another format's shape (a Chat "
       "Completions {type, function: {…}} tool sent to the Responses or Messages API)",
       scope="formats"),
    _r("reasoning-item-missing", ERROR, "a function_call sent with its server id (fc_…) but "
       "without the reasoning item that preceded it in the model's output", scope="responses"),
    _r("reasoning-without-following-item", ERROR, "a reasoning item not followed by the item "
       "it produced (a call or an assistant message)", scope="responses"),
    _r("duplicate-item-id", ERROR, "two input items with one id, or an item the continued "
       "response already holds", scope="responses"),
    _r("item-id-prefix", ERROR, "an item id without its type's prefix (fc, rs, msg, ctc)",
       scope="responses"),
    _r("item-not-persisted", ERROR, "store: false and a reasoning item sent by id only, "
       "without encrypted_content (404)", scope="responses"),
    _r("reasoning-item-malformed", ERROR, "a reasoning item without summary or id, or with a "
       "non-string encrypted_content", scope="responses"),
    _r("tool-result-not-first", ERROR, "text or other blocks before the tool_result blocks of "
       "the user message that answers a tool_use turn", scope="anthropic"),
    _r("tool-use-id-format", ERROR, "a tool_use id not matching ^[a-zA-Z0-9_-]+$ (replayed "
       "from another provider)", scope="anthropic"),
    _r("tool-use-input-not-object", ERROR, "tool_use.input is not an object", scope="anthropic"),
    _r("thinking-block-missing", ERROR, "with thinking on, the last assistant tool-use turn "
       "does not start with its thinking block", ["anthropic-vertex"], scope="anthropic"),
    _r("empty-text-block", ERROR, "an empty text block, or a message with empty content "
       "that is not the final assistant message", scope="anthropic"),
    _r("tool-names-not-unique", ERROR, "two tools with one name", scope="anthropic"),
    _r("max-tokens-missing", ERROR, "a request body without max_tokens", scope="anthropic"),
    # the Gemini API (plus the shared ids above)
    _r("call-turn-misplaced", ERROR, "a model turn with function calls that opens contents or "
       "follows another model turn", scope="gemini"),
    _r("thought-signature-missing", ERROR, "Gemini 3: the first functionCall of a step of the "
       "current turn sent back without its thoughtSignature", scope="gemini"),
]}


def make(rule: str, index: int | None, message: str | Msg, api_error: Any = None,
         tool_call_id: Any = None, severity: str | None = None,
         api_source: str | None = None) -> Finding:
    """A finding; ``message`` a ``Msg`` to be shown in the chosen language (the API's own
    ``api_error`` is verbatim: it is what the API says)."""
    return Finding(rule=rule, severity=severity or RULES[rule].severity, index=index,
                   message=str(message), api_error=api_error,
                   tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
                   api_source=api_source, shown=message if isinstance(message, Msg) else None)
