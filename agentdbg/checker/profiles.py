"""Provider profiles: the rules and error texts that differ between servers."""

from __future__ import annotations


class Profile:
    """One provider's differences (a plain class, not a dataclass: the command line builds its
    ``--profile`` choices from these at start-up, and a frozen dataclass costs a millisecond to
    create). Read-only; each profile exists once, in ``PROFILES``."""

    __slots__ = (
        "api",
        "cross_turn_id_reuse_is_error",
        "description",
        "empty_reasoning_present",
        "errors",
        "extra_rules",
        "id_pattern",
        "id_pattern_text",
        "name",
        "null_content_on_tool_turns",
        "required_choice_rejected",
        "signed_calls",
    )

    def __init__(self, name: str, description: str, *, null_content_on_tool_turns: bool = False,
                 id_pattern: str | None = None, id_pattern_text: str = "",
                 cross_turn_id_reuse_is_error: bool = False, required_choice_rejected: bool = False,
                 extra_rules: frozenset[str] = frozenset(), errors: frozenset[str] = frozenset(),
                 api: str = "OpenAI", empty_reasoning_present: bool = False,
                 signed_calls: bool = False) -> None:
        values = dict(locals())
        del values["self"]
        for key, value in values.items():
            object.__setattr__(self, key, value)

    name: str
    description: str
    null_content_on_tool_turns: bool
    id_pattern: str | None              # tool-call-id-format
    id_pattern_text: str
    cross_turn_id_reuse_is_error: bool
    required_choice_rejected: bool
    extra_rules: frozenset[str]
    errors: frozenset[str]              # warnings by default, errors here
    api: str                            # whose error texts this profile's server answers with
    empty_reasoning_present: bool       # reasoning_content "" counts as sent back (DeepSeek)
    signed_calls: bool                  # Gemini 3 behind Chat Completions: thought signatures
                                        # ride on tool calls and must come back

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"profile {self.name!r} is read-only")

    def __repr__(self) -> str:
        return f"Profile({self.name!r})"


#: OpenAI accepts a history whose arguments are broken JSON or not an object; servers that
#: parse them into a chat template (vLLM, DashScope's Qwen) answer 400/500
BROKEN_ARGUMENTS = frozenset({"arguments-invalid-json", "arguments-not-object"})

PROFILES: dict[str, Profile] = {p.name: p for p in [
    Profile("openai", "OpenAI Chat Completions (default)"),
    Profile("deepseek-thinking", "DeepSeek thinking mode: reasoning_content must be passed back "
            "(Responses: a call and its output adjacent)",
            extra_rules=frozenset({"reasoning-content-missing"}), empty_reasoning_present=True),
    Profile("deepseek-reasoner-legacy", "deepseek-reasoner (R1): roles must alternate",
            extra_rules=frozenset({"consecutive-same-role"})),
    Profile("kimi-thinking", "Moonshot Kimi with thinking enabled",
            required_choice_rejected=True, extra_rules=frozenset({"reasoning-content-missing"})),
    Profile("ollama", "Ollama: content null is rejected even on tool-call turns",
            null_content_on_tool_turns=True),
    Profile("llamacpp", "llama.cpp server: content null is rejected even on tool-call turns",
            null_content_on_tool_turns=True),
    Profile("anthropic-proxy", "Anthropic behind an OpenAI-compatible proxy (LiteLLM, OpenRouter…)",
            id_pattern=r"^[a-zA-Z0-9_-]+$", id_pattern_text="^[a-zA-Z0-9_-]+$",
            cross_turn_id_reuse_is_error=True, api="Anthropic",
            extra_rules=frozenset({"empty-content", "tool-call-id-format"})),
    Profile("mistral", "Mistral: tool call ids are exactly 9 letters/digits",
            id_pattern=r"^[a-zA-Z0-9]{9}$", id_pattern_text="9 characters a-z, A-Z, 0-9",
            extra_rules=frozenset({"tool-call-id-format"})),
    Profile("positional", "GLM/Hermes-style templates and Bedrock: results bound by position",
            extra_rules=frozenset({"results-out-of-order"})),
    Profile("anthropic-vertex", "Claude on Vertex AI: with thinking on, the last assistant "
            "tool-use turn must start with its thinking block", api="Anthropic",
            extra_rules=frozenset({"thinking-block-missing"})),
    Profile("qwen", "Qwen / DashScope: broken or non-object arguments in the history are "
            "rejected", errors=BROKEN_ARGUMENTS, api="DashScope"),
    Profile("glm", "Zhipu GLM (no extra rules yet)"),
    Profile("vllm", "vLLM: broken or non-object arguments in the history are rejected",
            errors=BROKEN_ARGUMENTS, api="vLLM"),
    Profile("deepseek", "DeepSeek, non-thinking: on the Responses API a call and its output "
            "must be adjacent"),
    Profile("gemini", "Gemini 3 behind its OpenAI-compatible endpoint: the first tool call of "
            "each step of the current turn brings back extra_content.google.thought_signature",
            api="Gemini", signed_calls=True),
]}


def get_profile(name: str) -> Profile:
    from agentdbg.errors import AgentdbgError

    try:
        return PROFILES[name]
    except KeyError:
        raise AgentdbgError(f"unknown profile {name!r}; choose one of: "
                            + ", ".join(PROFILES)) from None


def active(rule: str, profile: Profile) -> bool:
    from agentdbg.checker.findings import RULES  # not at import: the CLI reads only the names

    info = RULES[rule]
    return not info.profiles or rule in profile.extra_rules


def severity(rule: str, profile: Profile) -> str:
    """The rule's severity under ``profile``: its default, or error where the server rejects it."""
    from agentdbg.checker.findings import ERROR, RULES

    return ERROR if rule in profile.errors else RULES[rule].severity


def quoted(profile: Profile, provider: str) -> str | None:
    """Who says an error text written by ``provider``: None when it is the profile's own
    server (the view says "API says"), else the provider's name."""
    return None if provider == profile.api else provider
