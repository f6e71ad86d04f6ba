"""Who speaks in a multi-agent run: the signals frameworks leave in the chat form.

Nothing here is guessed from prose alone. An agent is named by what the framework itself
writes: a message's ``name`` (AutoGen, Semantic Kernel, LangGraph agents), the target of a
handoff tool (``transfer_to_billing_agent``, whose result the OpenAI Agents SDK writes as
``{"assistant": "Billing agent"}``), the arguments of a call that starts a subagent (Claude
Code's ``Agent``/``Task``: ``subagent_type``, ``description``; Codex's ``spawn_agent``:
``task_name``, ``agent_type``; agno's ``delegate_task_to_member``: ``member_id``), or an instruction that
says who the model is ("You are the triage agent.", "你是订单客服").

Text protocols (DSPy ``ReAct``, classic ReAct prompts) write calls and observations into the
prompt itself; ``text_steps`` reads them back where the text is unambiguous.

Everything read here is data from outside: every function takes any JSON value and answers
None (or an empty list) for what it cannot read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

HANDOFF = re.compile(r"^transfer_(?:back_)?to_([A-Za-z0-9_-]{1,60})$")
#: tools whose call starts another agent: name -> (argument naming the agent, argument holding
#: the task it is given)
SPAWNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Agent": (("description", "subagent_type"), ("prompt",)),          # Claude Code
    "Task": (("description", "subagent_type"), ("prompt",)),           # Claude Code (older)
    # Codex: multi_agent_v1 (agent_type) and the collaboration tools (task_name)
    "spawn_agent": (("task_name", "agent_type", "name"), ("message", "items")),
    "delegate_task_to_member": (("member_id",), ("task", "task_description")),   # agno Team
    "delegate_task_to_members": (("member_id",), ("task", "task_description")),
    "transfer_task_to_member": (("member_id",), ("task_description", "task")),   # agno (older)
}
#: what the agent that starts others with one of these tools is, when nothing else names it
STARTERS = {"Agent": "main agent", "Task": "main agent", "spawn_agent": "main agent",
            "delegate_task_to_member": "team leader", "delegate_task_to_members": "team leader",
            "transfer_task_to_member": "team leader"}
#: tools that talk to an agent already started (Codex): recognised, never a tool of their own
COORDINATION = frozenset({"send_input", "wait", "wait_agent", "close_agent", "resume_agent",
                          "list_agents", "send_message", "followup_task", "interrupt_agent",
                          "TaskOutput", "SendMessage"})
#: tools whose result is the started agent's id, not its answer: the answer comes later, as a
#: message from that agent (Codex: ``Message Type: FINAL_ANSWER``)
ANSWERS_LATER = frozenset({"spawn_agent"})
#: tools that may start the agent with a copy of the caller's history (Codex: ``fork_turns``,
#: ``fork_context``)
FORKS = frozenset({"spawn_agent"})
#: tools the provider or the client itself runs (never defined as a function by the app)
HOSTED = frozenset({"web_search", "web_search_preview", "file_search", "code_interpreter",
                    "image_generation", "computer_use_preview", "local_shell", "WebSearch",
                    "WebFetch"})

# a capitalised name up to the end of its clause, or a role ("team supervisor") as a whole word
_YOU_ARE = re.compile(
    r"(?:^|[.!\n]\s*)You are (?:an? |the )?(?:([A-Z][\w .'-]{1,40}?)(?:[,.!:;\n]| who | that | for "
    r"| and |$)|((?:[\w-]+ )?(?:agent|assistant|expert|specialist|supervisor|manager|coordinator|"
    r"planner|researcher|writer|reviewer|critic|editor|summarizer|translator|router))\b)")
_NI_SHI = re.compile(r"(?:^|[。！\n])\s*你是(?:一[个名位])?([\w\u4e00-\u9fff]{2,12}?)"
                     r"(?:[，,。！!：:；;\n]|$)")


@dataclass(frozen=True)
class Spawn:
    """A call that starts another agent: who, with which task."""

    tool: str
    agent: str | None
    task: str | None


def handoff_target(name: object, result: object = None) -> str | None:
    """The agent a handoff call hands over to: the name its result gives (the Agents SDK's
    ``{"assistant": "Billing agent"}``), else the one its tool name says; None when the call is
    not a handoff."""
    if not isinstance(name, str):
        return None
    m = HANDOFF.match(name)
    if m is None:
        return None
    told = _assistant_named(result)
    return told or m.group(1).replace("_", " ")


def _assistant_named(result: object) -> str | None:
    text = result if isinstance(result, str) else None
    if isinstance(result, list):
        text = "".join(p.get("text", "") for p in result if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    named = value.get("assistant") if isinstance(value, dict) else None
    return named.strip()[:80] if isinstance(named, str) and named.strip() else None


def spawn_of(name: object, arguments: object) -> Spawn | None:
    """The agent a call starts (Claude Code's ``Agent``, Codex's ``spawn_agent``, agno's
    delegation), None for any other call. ``arguments``: JSON text or an object."""
    if not isinstance(name, str):
        return None
    tool = name.rsplit(".", 1)[-1]
    if tool not in SPAWNS:
        return None
    args = _object(arguments)
    who_keys, task_keys = SPAWNS[tool]
    agent = next((_short(args.get(k)) for k in who_keys if _short(args.get(k))), None)
    task = next((_task(args.get(k)) for k in task_keys if _task(args.get(k))), None)
    return Spawn(tool, agent, task)


# Codex's agents write to each other in this form (an ``agent_message`` item's text)
_AGENT_MESSAGE = re.compile(r"\AMessage Type: ([A-Z_]{1,40})\nTask name: (/\S{0,300})\n"
                            r"Sender: (/\S{0,300})\n")


@dataclass(frozen=True)
class AgentMessage:
    """A message one agent sent another (Codex): its kind, to whom, from whom."""

    kind: str          # NEW_TASK, FINAL_ANSWER, ...
    recipient: str     # an agent path: /root/greet
    sender: str


def agent_message(text: object) -> AgentMessage | None:
    """What a Codex agent message says of itself ("Message Type: NEW_TASK\nTask name:
    /root/greet\nSender: /root\n…"), None for any other text."""
    m = _AGENT_MESSAGE.match(text) if isinstance(text, str) else None
    return AgentMessage(m.group(1), m.group(2), m.group(3)) if m else None


def path_names(path: str, agent: str | None) -> bool:
    """The agent path (``/root/greet``) ends with the task name ``agent`` (``greet``)."""
    return bool(agent) and path.rsplit("/", 1)[-1] == agent


def answers_later(tool: object) -> bool:
    """A call of ``tool`` returns at once; the agent it starts answers later, by message."""
    return isinstance(tool, str) and tool.rsplit(".", 1)[-1] in ANSWERS_LATER


def forks(tool: object) -> bool:
    """A call of ``tool`` may start its agent with a copy of the caller's history."""
    return isinstance(tool, str) and tool.rsplit(".", 1)[-1] in FORKS


def starter_role(tool: object) -> str | None:
    """The role of an agent that called ``tool`` to start another (agno's leader delegates
    with ``delegate_task_to_member``: "team leader")."""
    return STARTERS.get(tool.rsplit(".", 1)[-1]) if isinstance(tool, str) else None


def is_multi_agent_tool(name: object) -> bool:
    """A tool of the multi-agent machinery itself (spawning, handing off, waiting)."""
    if not isinstance(name, str):
        return False
    tool = name.rsplit(".", 1)[-1]
    return tool in SPAWNS or tool in COORDINATION or HANDOFF.match(tool) is not None


def identity(instructions: object) -> str | None:
    """Who the instructions say the model is ("You are the triage agent." -> "triage agent";
    "你是订单客服，…" -> "订单客服"), None when they do not say it plainly."""
    if not isinstance(instructions, str):
        return None
    head = instructions[:600]
    m = _YOU_ARE.search(head) or _NI_SHI.search(head)
    if m is None:
        return None
    name = (m.group(1) or m.group(2) or "").strip(" .'-")
    if name.lower() in ("helpful assistant", "helpful ai assistant", "assistant", "ai assistant",
                        "a helpful assistant", "agent", "ai agent") or len(name) < 2:
        return None
    return name


def message_agent(message: object) -> str | None:
    """The ``name`` a framework wrote on a message (AutoGen, Semantic Kernel, LangGraph)."""
    name = message.get("name") if isinstance(message, dict) else None
    return name.strip()[:80] if isinstance(name, str) and name.strip() else None


def _object(arguments: object) -> dict:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _short(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:80]


def _task(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list):   # Codex: items [{"type": "text", "text": …}]
        text = "".join(p.get("text", "") for p in value if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
        return text or None
    return None


# -- text protocols ----------------------------------------------------------------------------

@dataclass(frozen=True)
class TextStep:
    """One step a text protocol wrote into the prompt: a call, and the observation after it."""

    number: int
    tool: str
    arguments: str
    observation: str | None
    thought: str | None = None


_DSPY_FIELD = re.compile(r"\[\[ ## (\w+?)_(\d+) ## \]\]\n(.*?)"
                         r"(?=\n\[\[ ## |\n\nRespond with the corresponding output fields|\Z)", re.S)
_REACT = re.compile(r"^Action:[ \t]*(?P<tool>[\w.-]{1,64})[ \t]*\nAction Input:[ \t]*(?P<args>.*?)"
                    r"\n(?:Observation:[ \t]*(?P<obs>.*?))?(?=\n(?:Thought|Action|Final Answer)"
                    r":|\Z)", re.S | re.M)


def text_steps(text: object) -> list[TextStep]:
    """The calls and observations a text protocol wrote into ``text``: DSPy's trajectory fields
    (``[[ ## tool_name_0 ## ]]`` …) or ReAct's ``Action:``/``Action Input:``/``Observation:``
    lines. A step is read only when its tool name is there; nothing else is inferred."""
    if not isinstance(text, str) or len(text) > 4_000_000:
        return []
    if "[[ ## tool_name_" in text:
        return _dspy_steps(text)
    if "\nAction Input:" in text or text.startswith("Action:"):
        return [TextStep(n, m.group("tool"), m.group("args").strip(),
                         m.group("obs").strip() if m.group("obs") is not None else None)
                for n, m in enumerate(_REACT.finditer(text))]
    return []


def _dspy_steps(text: str) -> list[TextStep]:
    fields: dict[int, dict[str, str]] = {}
    for m in _DSPY_FIELD.finditer(text):
        fields.setdefault(int(m.group(2)), {})[m.group(1)] = m.group(3).strip()
    return [TextStep(n, f["tool_name"], f.get("tool_args", ""), f.get("observation"),
                     f.get("thought"))
            for n, f in sorted(fields.items()) if f.get("tool_name")]


TRAJECTORY = "[[ ## trajectory ## ]]"


def text_task(text: object) -> str | None:
    """What a DSPy prompt asks before its trajectory (its input fields: the question), None
    for a prompt with no trajectory field. Each step of one ``ReAct`` run, and its closing
    extract step, repeat it."""
    if not isinstance(text, str) or TRAJECTORY not in text:
        return None
    head = text.split(TRAJECTORY, 1)[0].strip()
    return head or None


def lost_steps(before: object, now: object) -> list[TextStep]:
    """The steps the prompt ``before`` showed that ``now`` (a later step of the same run) no
    longer shows: the model lost those calls and what they returned."""
    kept = {(s.tool, s.arguments, s.observation) for s in text_steps(now)}
    return [s for s in text_steps(before) if (s.tool, s.arguments, s.observation) not in kept]


def text_protocol(messages: list[Any]) -> bool:
    """The request writes its calls as text (a trajectory in the prompt) rather than as tool
    calls: no tool call or tool message anywhere, and the last user text holds steps."""
    if any(isinstance(m, dict) and (m.get("tool_calls") or m.get("role") == "tool")
           for m in messages):
        return False
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"),
                None)
    content = last.get("content") if isinstance(last, dict) else None
    text = content if isinstance(content, str) else ""
    return TRAJECTORY in text or bool(text_steps(text))
