"""The apps of the compatibility suite: which framework environment, which script, which
flags, which wire format, what `agentdbg serve` must answer with, and each misuse flag with
the rule ids agentdbg must report for it."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
APPS = HERE / "apps"
SCRIPTS = HERE / "scripts"


def _shop():
    spec = importlib.util.spec_from_file_location("frameworks_shop", APPS / "shop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOCATION = _shop().LOCATION  # every app's answer names it


@dataclass(frozen=True)
class App:
    id: str                          # the test id
    env: str                         # requirements/<env>.txt
    script: str                      # apps/<script>
    args: tuple[str, ...] = ()       # the flags that make this variant (e.g. --stream)
    wire: str = "chat"               # chat | responses | messages: what the app sends
    serve: tuple[str, ...] = ("--offline",)
    misuse: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)
    #: a multi-agent run: its conversations depth first, each (depth, agent, how it started)
    tree: tuple[tuple[int, str | None, str | None], ...] = ()
    edits: tuple[str, ...] = ()      # the history edits it makes on purpose: notes, never warnings
    #: a Node app: the npm packages it imports (``tests/oneclick/npm_clients.PINNED[npm]``);
    #: ``env`` is then empty and the app runs with ``node``
    npm: str | None = None

    @property
    def path(self) -> Path:
        return APPS / self.script

    def __str__(self) -> str:
        return self.id


def _script(name: str) -> tuple[str, ...]:
    return ("--script", str(SCRIPTS / name))


DROP_RESULTS = ("missing-tool-response",)          # one defect, one finding
FORGET_ASSISTANT = ("orphan-tool-message",)
TRIMMED = ("orphan-tool-message",)
REWRITTEN = ("history-rewritten",)

_CHAT = [
    App("openai-chat", "openai", "openai_chat.py",
        misuse={"--drop-results": DROP_RESULTS, "--forget-assistant": FORGET_ASSISTANT}),
    App("openai-chat-stream", "openai", "openai_chat.py", ("--stream",),
        misuse={"--drop-results": DROP_RESULTS}),
    App("openai-chat-stream-helper", "openai", "openai_chat.py", ("--stream-helper",)),
    App("openai-agents-chat", "openai-agents", "openai_agents.py", ("--chat-completions",),
        misuse={"--trim": TRIMMED}),
    App("openai-agents-chat-stream", "openai-agents", "openai_agents.py", ("--chat-completions", "--stream")),
    App("langgraph", "langgraph", "langgraph_app.py", misuse={"--trim": TRIMMED}),
    App("langgraph-stream", "langgraph", "langgraph_app.py", ("--stream",)),
    # pydantic-ai drops a tool return whose call was trimmed away: what is left is a history that
    # lost the user's question.
    App("pydantic-ai", "pydantic-ai", "pydantic_ai_app.py", misuse={"--trim": REWRITTEN}),
    App("pydantic-ai-stream", "pydantic-ai", "pydantic_ai_app.py", ("--stream",)),
    App("pydantic-ai-structured", "pydantic-ai", "pydantic_ai_app.py", ("--structured",)),
    App("pydantic-ai-structured-stream", "pydantic-ai", "pydantic_ai_app.py", ("--structured", "--stream")),
    App("smolagents", "smolagents", "smolagents_app.py", serve=_script("smolagents.yaml"),
        misuse={"--lose-result": ("results-not-sent",)}),
    App("smolagents-stream", "smolagents", "smolagents_app.py", ("--stream",),
        serve=_script("smolagents.yaml")),
    App("litellm", "litellm", "litellm_app.py", misuse={"--trim": TRIMMED}),
    App("litellm-stream", "litellm", "litellm_app.py", ("--stream",)),
    App("llama-index", "llama-index", "llama_index_app.py", misuse={"--trim": TRIMMED}),
    App("llama-index-stream", "llama-index", "llama_index_app.py", ("--stream",)),
]

# These need agentdbg's support for the Responses and Anthropic Messages wire formats (issue 15).
_OTHER_WIRES = [
    App("openai-agents-responses", "openai-agents", "openai_agents.py", wire="responses",
        misuse={"--trim": TRIMMED}),
    App("openai-agents-responses-stream", "openai-agents", "openai_agents.py", ("--stream",),
        wire="responses"),
    App("openai-responses", "openai", "openai_responses.py", wire="responses",
        misuse={"--drop-results": ("missing-tool-response",), "--forget-assistant": ("orphan-tool-message",)}),
    App("openai-responses-stream", "openai", "openai_responses.py", ("--stream",), wire="responses"),
    App("anthropic", "anthropic", "anthropic_messages.py", wire="messages",
        misuse={"--drop-results": ("missing-tool-response",), "--forget-assistant": ("orphan-tool-message",)}),
    App("anthropic-stream", "anthropic", "anthropic_messages.py", ("--stream",), wire="messages"),
    App("pydantic-ai-anthropic", "pydantic-ai", "pydantic_ai_app.py", ("--anthropic",), wire="messages",
        misuse={"--trim": REWRITTEN}),
    App("pydantic-ai-anthropic-stream", "pydantic-ai", "pydantic_ai_app.py", ("--anthropic", "--stream"),
        wire="messages"),
    App("litellm-anthropic", "litellm", "litellm_app.py", ("--anthropic",), wire="messages"),
]

ALL = _CHAT + _OTHER_WIRES
MISUSES = [(app, flag, rules) for app in ALL for flag, rules in app.misuse.items()]

# Multi-agent runs (issue 23): one run, several conversations linked as a tree, every agent named.
_HANDOFF = ((0, "triage agent", None), (1, "Order agent", "handoff"))
MULTI = [
    App("openai-agents-handoff-responses", "openai-agents", "openai_agents_handoff.py", wire="responses",
        serve=_script("handoff.yaml"), tree=_HANDOFF, misuse={"--trim": TRIMMED}),
    App("openai-agents-handoff-responses-stream", "openai-agents", "openai_agents_handoff.py", ("--stream",),
        wire="responses", serve=_script("handoff.yaml"), tree=_HANDOFF),
    App("openai-agents-handoff-chat", "openai-agents", "openai_agents_handoff.py", ("--chat-completions",),
        serve=_script("handoff.yaml"), tree=_HANDOFF, misuse={"--trim": TRIMMED}),
    App("openai-agents-handoff-chat-stream", "openai-agents", "openai_agents_handoff.py",
        ("--chat-completions", "--stream"), serve=_script("handoff.yaml"), tree=_HANDOFF),
    # a round-robin team's agents are peers: each its own context, side by side in one run
    App("autogen-round-robin", "autogen", "autogen_team.py", serve=_script("team.yaml"),
        tree=((0, "order agent", None), (0, "critic", None))),
    App("autogen-round-robin-stream", "autogen", "autogen_team.py", ("--stream",), serve=_script("team.yaml"),
        tree=((0, "order agent", None), (0, "critic", None))),
    App("agno-team", "agno", "agno_app.py", serve=_script("agno_team.yaml"),
        tree=((0, "team leader", None), (1, "order-agent", "subagent"))),
    # max_tool_calls_from_history=1: the second run's history lost the first call, on purpose
    App("agno-history", "agno", "agno_app.py", ("--history",), serve=_script("agno_history.yaml"),
        tree=((0, "order assistant", None),), edits=("2 messages removed (call A and its result)",)),
    # the supervisor hands off to its expert (transfer_to_order_expert) and gets it back
    App("langgraph-supervisor", "langgraph-supervisor", "langgraph_supervisor_app.py", serve=_script("supervisor.yaml"),
        tree=((0, "supervisor", None), (1, "order_expert", "handoff"))),
    # a follow-up on the same thread: the agent's stored replies come back with its "name" on them
    App("semantic-kernel-follow-up", "semantic-kernel", "semantic_kernel_app.py", serve=_script("sk_followup.yaml"),
        tree=((0, "OrderAgent", None),),
        edits=('name "OrderAgent" added to [2]', 'name "OrderAgent" added to [4]')),
]
# The same handoff with the SDK for JavaScript (`@openai/agents`): its handoff tool keeps the
# agent's name as written (transfer_to_Order_agent), its script says so.
_JS = {"env": "", "npm": "openai-agents-js", "serve": _script("handoff_js.yaml"), "tree": _HANDOFF}
MULTI += [
    App("openai-agents-js-handoff-responses", script="openai_agents_handoff.mjs", wire="responses",
        misuse={"--trim": TRIMMED}, **_JS),
    App("openai-agents-js-handoff-responses-stream", script="openai_agents_handoff.mjs", args=("--stream",),
        wire="responses", **_JS),
    App("openai-agents-js-handoff-chat", script="openai_agents_handoff.mjs", args=("--chat-completions",),
        misuse={"--trim": TRIMMED}, **_JS),
    App("openai-agents-js-handoff-chat-stream", script="openai_agents_handoff.mjs",
        args=("--chat-completions", "--stream"), **_JS),
]
MULTI_MISUSES = [(app, flag, rules) for app in MULTI for flag, rules in app.misuse.items()]

# A text protocol: DSPy ReAct writes each step's calls and observations into a fresh prompt.
# Its steps and the closing extract step are one conversation of one (unnamed) agent; a ReAct
# whose prompts lose earlier steps is history-rewritten, once per step lost (the steps of
# query_order, then of query_logistics).
TEXT = [App("dspy-react", "dspy", "dspy_react.py", serve=_script("dspy_react.yaml"), tree=((0, None, None),),
            misuse={"--forget-steps": ("history-rewritten", "history-rewritten")})]
MULTI += TEXT
TEXT_MISUSES = [(app, flag, rules) for app in TEXT for flag, rules in app.misuse.items()]
