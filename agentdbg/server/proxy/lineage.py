"""Where a proxied request sits in its run's tree of conversations.

A request that goes on from a conversation's history under another agent — new
instructions, right after the model called a handoff tool and the app answered it — is a
*handoff*: a new conversation whose parent is that call. A fresh request whose user text
carries the task of a call that starts an agent (Claude Code's ``Agent``, Codex's
``spawn_agent``, agno's delegation) is that *subagent's* conversation, child of the call; so
is a request that goes on from a conversation's history through such a call and then gives
the new agent its task (Codex forks the parent's history into the agent it spawns).
A fresh request that repeats a text protocol's prompt with more steps written in (DSPy
``ReAct``: the trajectory) is the next *step* of the same conversation.

Each function reads chat-form messages (data from outside) and answers None when the
request is none of these.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentdbg.agents import (
    agent_message,
    answers_later,
    forks,
    handoff_target,
    identity,
    lost_steps,
    message_agent,
    path_names,
    spawn_of,
    text_protocol,
    text_steps,
    text_task,
)
from agentdbg.i18n import _
from agentdbg.messages import call_arguments, call_name, tool_calls_of

#: a ``conversations.Conversation`` (not imported: that module imports this one)
Conversation = Any

TASK_MATCH = 400     # characters of a task compared with the subagent's first user text


@dataclass(frozen=True)
class Link:
    """How a new conversation was started from another one."""

    parent: Conversation
    call_id: str | None
    tool: str | None
    kind: str                 # handoff | subagent
    agent: str | None


def instructions_of(messages: list) -> str:
    """The system/developer text of a request (what says which agent the model is)."""
    return "\n".join(_text(m.get("content")) for m in messages
                     if isinstance(m, dict) and m.get("role") in ("system", "developer"))


def agent_at_start(messages: list) -> str | None:
    """An agent named by the request itself: the instructions' identity."""
    return identity(instructions_of(messages))


def handoff(conv: Conversation, messages: list) -> Link | None:
    """``messages`` carries ``conv``'s handoff call and its result under new instructions."""
    reply = conv.rules.last_response
    if instructions_of(messages) == instructions_of(conv.last_messages):
        return None
    for call in tool_calls_of(reply):
        cid = call.get("id") if isinstance(call, dict) else None
        if not isinstance(cid, str):   # ids are data: a list or an object links nothing
            continue
        result = _result(messages, cid)
        if result is None:
            continue
        target = handoff_target(call_name(call), result.get("content"))
        if target is not None:
            return Link(conv, cid, call_name(call), "handoff", target)
    return None


def spawned(conversations: list[Conversation], messages: list) -> Link | None:
    """The pending call whose task ``messages`` (a fresh request) was started with."""
    said = [_text(m.get("content")) for m in messages
            if isinstance(m, dict) and m.get("role") == "user"]
    if not any(t.strip() for t in said):
        return None
    for conv in reversed(conversations):
        for cid, (tool, agent, task) in list(conv.pending_spawns.items()):
            if _addressed(said, agent, task):
                del conv.pending_spawns[cid]
                return Link(conv, cid, tool, "subagent", agent)
    return None


def forked(conversations: list[Conversation], messages: list) -> Link | None:
    """The pending call ``messages`` starts an agent for with a copy of its parent's history:
    the history through that call (its id, which the model made unique), then a user message
    giving the new agent its task (Codex's ``spawn_agent`` forks the parent's turns by
    default). Whether the parent went on first or not, the copy is the new agent's own
    conversation."""
    pending = [c for c in reversed(conversations) if c.pending_spawns]
    if not pending:
        return None
    called: set[str] = set()
    for m in messages:
        called |= _call_ids(m)
        if not called or not (isinstance(m, dict) and m.get("role") == "user"):
            continue
        for conv in pending:
            for cid, (tool, agent, task) in list(conv.pending_spawns.items()):
                if cid in called and forks(tool) and _addressed([_text(m.get("content"))], agent, task):
                    del conv.pending_spawns[cid]
                    return Link(conv, cid, tool, "subagent", agent)
    return None


def _addressed(said: list[str], agent: str | None, task: str | None) -> bool:
    """The user texts ``said`` give the agent a call started its task: the task's words, or a
    Codex agent message with a new task, sent to the agent the call named."""
    if task and _squeezed(task)[:TASK_MATCH] in _squeezed(" ".join(said)):
        return True
    return any(told is not None and told.kind == "NEW_TASK" and path_names(told.recipient, agent)
               for told in map(agent_message, said))


def _call_ids(message: object) -> set[str]:
    return {c["id"] for c in tool_calls_of(message)
            if isinstance(c, dict) and isinstance(c.get("id"), str)}


def spawns_in(reply: object) -> dict[str, tuple[str, str | None, str]]:
    """The calls of ``reply`` that start an agent: call id -> (tool, agent, task)."""
    out = {}
    for call in tool_calls_of(reply):
        cid = call.get("id") if isinstance(call, dict) else None
        spawn = spawn_of(call_name(call), call_arguments(call))
        if isinstance(cid, str) and spawn is not None and spawn.task:
            out[cid] = (spawn.tool, spawn.agent, spawn.task)
    return out


def text_step(conv: Conversation, messages: list) -> bool:
    """``messages`` (a fresh prompt) is the next step of ``conv``'s text protocol: the same
    prompt with more of the trajectory written in."""
    if not text_protocol(messages) or any(isinstance(m, dict) and m.get("role") == "assistant"
                                          for m in conv.last_messages):
        return False
    before, now = _last_user(conv.last_messages), _last_user(messages)
    task = text_task(before)
    if task is not None and task == text_task(now):
        # DSPy: the same question, and further on (a later step's call, or the extract step
        # after the last one), whatever the rest of the prompt says or lost
        had, has = text_steps(before), text_steps(now)
        return bool(has) and max(s.number for s in has) >= max((s.number for s in had), default=0) \
            and len(has) + len(lost_steps(before, now)) > len(had)
    if not before or len(now) <= len(before):
        return False
    # the previous prompt whole, with more written in between its head and its tail
    head = len(os.path.commonprefix([before, now]))  # noqa: RUF071 - text, not paths
    tail = len(os.path.commonprefix([before[::-1], now[::-1]]))  # noqa: RUF071
    return head > 0 and head + tail >= len(before)


def own_name(conv: Conversation, messages: list) -> str | None:
    """The ``name`` the app wrote on this conversation's own last reply when it sent it back
    (AutoGen, Semantic Kernel: the agent that wrote it)."""
    reply = conv.rules.last_response
    if not isinstance(reply, dict):
        return None
    want = (_text(reply.get("content")), [call_name(c) for c in tool_calls_of(reply)])
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "assistant" and \
                (_text(m.get("content")), [call_name(c) for c in tool_calls_of(m)]) == want:
            return message_agent(m)
    return None


def _result(messages: list, cid: object) -> dict | None:
    if not isinstance(cid, str):
        return None
    return next((m for m in messages if isinstance(m, dict) and m.get("role") == "tool"
                 and m.get("tool_call_id") == cid), None)


def _last_user(messages: list) -> str:
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"),
                None)
    return _text(last.get("content")) if isinstance(last, dict) else ""


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def lineage_lines(seen: Any, parent_of: Callable[[Any], Any]) -> list[str]:
    """What the console says of a request's place in the tree: at a conversation's first
    request, who started it; when a request carries the result of a call that started
    another conversation, where that result came from; a text protocol's new steps."""
    conv, messages = seen.conv, seen.messages
    out = []
    if conv.requests == 0 and conv.started_by is not None:
        out.append(started_line(conv, parent_of(conv)))
    from agentdbg.transcript.compare import common_prefix

    new = common_prefix(conv.last_messages, messages) if conv.requests else len(messages)
    for m in messages[new:]:
        cid = m.get("tool_call_id") if isinstance(m, dict) and m.get("role") == "tool" else None
        child = conv.children.get(cid) if isinstance(cid, str) else None   # ids are data: any JSON
        if child is not None and child.started_by.kind == "subagent" and \
                not answers_later(child.started_by.tool):
            said = _("↳ the result of {tool} {call} comes from {conversation}") \
                if child.started_by.tool else _("↳ the result of the call {call} comes from {conversation}")
            out.append(said.format(tool=child.started_by.tool, call=child.started_by.call_id,
                                   conversation=_conversation(child.number, child.agent)))
        answer = _answer_from(conv, m)
        if answer is not None:
            said = _("↳ the answer of {conversation} to {tool} {call} comes as a message") \
                if answer.started_by.tool else \
                _("↳ the answer of {conversation} to the call {call} comes as a message")
            out.append(said.format(conversation=_conversation(answer.number, answer.agent),
                                   tool=answer.started_by.tool, call=answer.started_by.call_id))
    if conv.rules.text_protocol:
        out.extend(step_lines(messages))
    return out


def _answer_from(conv: Any, message: object) -> Any:
    """The child conversation whose final answer ``message`` is (a Codex agent message from
    the agent a ``spawn_agent`` call of ``conv`` started), None for any other message."""
    if not (isinstance(message, dict) and message.get("role") == "user"):
        return None
    told = agent_message(_text(message.get("content")))
    if told is None or told.kind != "FINAL_ANSWER":
        return None
    return next((c for c in conv.children.values() if c.started_by.kind == "subagent"
                 and answers_later(c.started_by.tool) and path_names(told.sender, c.agent)), None)


def started_line(conv: Any, parent: Any) -> str:
    s = conv.started_by
    was = _conversation(s.conversation, parent.agent if parent is not None else None)
    if s.kind == "handoff":
        said = _("↳ handed off from {conversation} to {agent} (call {call}: {tool})") if conv.agent \
            else _("↳ handed off from {conversation} to another agent (call {call}: {tool})")
        return said.format(conversation=was, agent=conv.agent, call=s.call_id, tool=s.tool)
    said = _("↳ subagent ({agent}) started by call {call} ({tool}) in {conversation}") if conv.agent \
        else _("↳ subagent started by call {call} ({tool}) in {conversation}")
    return said.format(agent=conv.agent, call=s.call_id, tool=s.tool, conversation=was)


def step_lines(messages: list) -> list[str]:
    """The calls and observations a text protocol wrote into the prompt, one line each."""
    from agentdbg.agents import text_steps
    from agentdbg.textsafe import one_line

    steps = text_steps(_last_user(messages))
    return ["  " + (_("text step {n}: {tool}({arguments})") if s.observation is None else
                    _("text step {n}: {tool}({arguments}) → {observation}")).format(
        n=s.number, tool=s.tool, arguments=one_line(s.arguments)[:80],
        observation=one_line(s.observation or "")[:80]) for s in steps]


def _conversation(number: int, agent: str | None) -> str:
    """``conversation 2 (Billing agent)``, in the chosen language."""
    base = _("conversation {n}").format(n=number)
    return _("{conversation} ({agent})").format(conversation=base, agent=agent) if agent else base
