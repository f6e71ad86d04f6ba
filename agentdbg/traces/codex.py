"""Codex CLI rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as a Responses
API conversation.

Each line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (the session's id, its base
instructions, and for a subagent's session the thread that spawned it), ``turn_context`` (the
model of the turn), ``response_item`` (an item of the conversation as the API knows it:
messages, ``reasoning``, ``function_call`` / ``function_call_output``, ``custom_tool_call`` /
``custom_tool_call_output``, …), ``compacted`` (a compaction and the history that replaced
it) and ``event_msg`` / ``token_usage_record`` (the client's own events; a usage record closes
one response and names it). A request is the instructions and every item so far; its response
is the run of items the model produced after them. Codex sends its base instructions as a
first developer message: so does the import.

A rollout does not record the tools offered nor the requests' parameters: said once.

An agent Codex spawns (``spawn_agent``) writes its own rollout, beside its parent's: its
``session_meta`` names the parent thread and the agent's path (``/root/say_hello``, whose last
part is the call's ``task_name``). Reading a rollout reads its agents' rollouts after it, each
a conversation linked to the ``spawn_agent`` call that started it. An agent begun with a copy
of its parent's history has it in its rollout (after a second ``session_meta``, the parent's):
that part is its first request's input, not calls of its own.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.i18n import Msg
from agentdbg.traces.exchange import Called, Ended, Exchange, Item, Link, Thread, epoch
from agentdbg.traces.lines import Where, records, text

SOURCE = "codex"
#: items the model produces (a response's output); every other item is input
OUTPUT_TYPES = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call",
                          "web_search_call", "file_search_call", "computer_call",
                          "code_interpreter_call", "image_generation_call", "mcp_call",
                          "tool_search_call"})
#: fields Codex adds to an item for itself (never sent to the API)
PRIVATE = ("internal_chat_message_metadata_passthrough",)


def looks_like(first: list[dict[str, Any]]) -> bool:
    return any(r.get("type") in ("session_meta", "response_item", "turn_context")
               and isinstance(r.get("payload"), dict) for r in first)


def is_output(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    return kind in OUTPUT_TYPES or (kind == "message" and item.get("role") == "assistant")


MAX_SIBLINGS = 10_000      # rollouts looked at beside a rollout, for the agents it spawned
MAX_AGENTS = 1_000         # agents read with one rollout
MAX_DEPTH = 8              # agents of agents … followed


class _Rollout:
    def __init__(self, path: Path, spawns: dict[str, str] | None = None):
        self.path = path
        self.thread = Thread(path.stem, "responses", SOURCE, agent="main",
                             missing=("tools", "params", "instructions"))
        self.spawns: dict[str, str] = {}                # a spawn_agent call's task_name -> its id
        self.has_meta = False
        #: reading the parent's history a spawned agent began with (its parent's calls, not its own)
        self.inherited = False
        self.parent_spawns = spawns or {}               # the parent's, to link this one
        self.instructions: str | None = None
        self.model: str | None = None
        self.items: list[dict[str, Any]] = []
        self.output: list[dict[str, Any]] = []
        self.started: float | None = None     # when the current response's first item came
        self.last: float | None = None
        self.announced = False
        self.segment = 0

    def meta(self, where: Where, payload: dict[str, Any]) -> None:
        self.has_meta = True
        sid = text(payload.get("id")) or text(payload.get("session_id"))
        if sid:
            self.thread.key = sid
        base = payload.get("base_instructions")
        self.instructions = text(base.get("text")) if isinstance(base, dict) else text(base)
        source = payload.get("source")
        spawned = source.get("subagent") if isinstance(source, dict) else None
        if isinstance(spawned, dict):
            spawn: dict[str, Any] = spawned["thread_spawn"] \
                if isinstance(spawned.get("thread_spawn"), dict) else spawned
            parent = text(spawn.get("parent_thread_id")) or text(spawn.get("thread_id"))
            name = _task_name(text(spawn.get("agent_path")))
            self.thread.agent = name or text(spawn.get("agent_name")) or text(spawn.get("name")) \
                or "subagent"
            if parent:
                self.thread.parent = Link(parent, text(spawn.get("call_id"))
                                          or self.parent_spawns.get(name or ""))
        elif spawned is not None:
            self.thread.agent = text(spawned) or "subagent"
        self.thread.started = epoch(payload.get("timestamp"))

    def item(self, item: dict[str, Any], stamp: float | None) -> Iterator[Item]:
        item = {k: v for k, v in item.items() if k not in PRIVATE}
        self._spawn(item)
        if is_output(item):
            if not self.output:
                self.started = self.last
            self.output.append(item)
        else:
            yield from self.close()
            self.items.append(item)
        self.last = stamp

    def own_turns(self) -> None:
        """The copied history ends and the agent's own turns begin. A call the copy leaves
        unanswered (the parent's turn was still running it: the spawn call itself) is sent with
        the output "aborted", as Codex sends it (the proxy records it so)."""
        self.inherited = False
        answered = {i.get("call_id") for i in self.items if i.get("type") == "function_call_output"}
        out: list[dict[str, Any]] = []
        for item in self.items:
            out.append(item)
            if item.get("type") == "function_call" and item.get("call_id") not in answered:
                out.append({"type": "function_call_output", "call_id": item.get("call_id"),
                            "output": "aborted"})
        self.items = out

    def _spawn(self, item: dict[str, Any]) -> None:
        """A ``spawn_agent`` call: which agent (its task name) it starts. In a spawned agent's
        own rollout, its parent's call that started it (the history it was given) links it."""
        if item.get("type") != "function_call" or item.get("name") != "spawn_agent":
            return
        try:
            args = json.loads(item.get("arguments") or "")
        except (TypeError, ValueError, RecursionError):
            return
        task, cid = args.get("task_name") if isinstance(args, dict) else None, text(item.get("call_id"))
        if isinstance(task, str) and cid:
            self.spawns.setdefault(task, cid)
            parent = self.thread.parent
            if parent is not None and parent.call_id is None and task == self.thread.agent:
                self.thread.parent = Link(parent.thread, cid)

    def close(self, response_id: str | None = None, usage: Any = None) -> Iterator[Item]:
        """The response the output items so far make up (in a copied history, only input)."""
        if not self.output:
            return
        if self.inherited:
            self.items.extend(self.output)
            self.output = []
            return
        if not self.announced:
            self.announced = True
            self.thread.model = self.model
            yield self.thread
        # Codex sends its base instructions as the first item, a developer message
        head = [{"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": self.instructions}]}] if self.instructions else []
        body: dict[str, Any] = {"model": self.model or "unknown", "input": head + self.items}
        reply: dict[str, Any] = {"id": response_id or f"resp_imported_{self.thread.key}_{len(self.items)}",
                                 "object": "response", "status": "completed",
                                 "model": self.model, "output": list(self.output)}
        if isinstance(usage, dict):
            reply["usage"] = usage
        latency = (self.last - self.started) * 1000 if self.last and self.started else None
        yield Called(self.thread.key, Exchange(body, reply, latency_ms=latency, started=self.started))
        self.items.extend(self.output)
        self.output = []

    def compacted(self, payload: dict[str, Any]) -> Iterator[Item]:
        """A compaction: the conversation goes on as a new one, from the history that replaced it."""
        yield from self.close()
        yield Ended(self.thread.key)
        history = payload.get("replacement_history")
        old = self.thread
        self.segment += 1
        key = f"{old.key.split('+compacted-')[0]}+compacted-{self.segment}"
        self.thread = Thread(key, "responses", SOURCE, agent=old.agent, parent=Link(old.key, None),
                             missing=old.missing, notes=["the conversation was compacted: this one "
                                                         "goes on from what replaced it"])
        self.announced = False
        self.items = [dict(i) for i in history if isinstance(i, dict)] if isinstance(history, list) \
            else ([{"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": payload["message"]}]}]
                if isinstance(payload.get("message"), str) else [])


def read(path: Path, spawns: dict[str, str] | None = None, depth: int = 0,
         seen: set[Path] | None = None) -> Iterator[Item]:
    """The rollout's conversation, then those of the agents it spawned (their rollouts beside
    it), each after its parent; each rollout once, however the files name each other."""
    seen = seen if seen is not None else set()
    seen.add(path)
    rollout = _Rollout(path, spawns)
    yield from _read(rollout)
    if depth < MAX_DEPTH:
        for child in spawned_rollouts(path, rollout.thread.key)[:MAX_AGENTS]:
            if child not in seen:
                yield from read(child, rollout.spawns, depth + 1, seen)


def ids_of(path: Path) -> tuple[str | None, str | None]:
    """The thread a rollout is (its ``session_meta`` id) and the thread that spawned it (None:
    not an agent's)."""
    from agentdbg.traces.lines import first_record

    for record in first_record(path, limit=1):   # a rollout begins with its session_meta
        payload = record.get("payload")
        if record.get("type") == "session_meta" and isinstance(payload, dict):
            source = payload.get("source")
            spawned = source.get("subagent") if isinstance(source, dict) else None
            spawn = spawned.get("thread_spawn") if isinstance(spawned, dict) else None
            parent = text(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else \
                text(payload.get("parent_thread_id"))
            return text(payload.get("id")), parent
    return None, None


def spawned_rollouts(path: Path, key: str) -> list[Path]:
    """The rollouts beside ``path`` of the agents the thread ``key`` spawned."""
    return [p for p in _folder(path.parent).children.get(key, ()) if p != path]


def read_with_parent(path: Path) -> bool:
    """``path`` is a spawned agent's rollout whose parent's rollout (and so on up to one that
    no rollout beside it spawned) is beside it: it is read with that one, not on its own."""
    folder = _folder(path.parent)
    thread = folder.thread_of.get(path)
    for _ in range(MAX_DEPTH):
        parent = folder.parent_of.get(thread) if thread else None
        if parent is None:
            return thread != folder.thread_of.get(path)      # reached a root above it
        if parent not in folder.parent_of:                     # its parent's rollout is not here
            return False
        thread = parent
    return False                                                # too deep, or a loop: on its own


@dataclass(frozen=True)
class _Folder:
    """The rollouts of one folder: who spawned whom (each file's first line read once)."""

    children: dict[str, tuple[Path, ...]]       # thread -> the rollouts of the agents it spawned
    parent_of: dict[str, str | None]            # thread -> the thread that spawned it
    thread_of: dict[Path, str]


def _folder(folder: Path) -> _Folder:
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return _Folder({}, {}, {})
    return _indexed(str(folder), stamp)


@functools.lru_cache(maxsize=8)
def _indexed(folder: str, stamp: int) -> _Folder:
    children: dict[str, list[Path]] = {}
    parent_of: dict[str, str | None] = {}
    thread_of: dict[Path, str] = {}
    try:
        siblings = sorted(Path(folder).glob("rollout-*.jsonl"))[:MAX_SIBLINGS]
    except OSError:
        siblings = []
    for p in siblings:
        thread, parent = ids_of(p)
        if thread:
            thread_of[p] = thread
            parent_of.setdefault(thread, parent if parent != thread else None)
        if parent and parent != thread:
            children.setdefault(parent, []).append(p)
    return _Folder({k: tuple(v) for k, v in children.items()}, parent_of, thread_of)


def _read(rollout: _Rollout) -> Iterator[Item]:
    path = rollout.path
    for where, record in records(path):
        kind, payload = record.get("type"), record.get("payload")
        if kind not in ("session_meta", "turn_context", "response_item", "compacted",
                        "token_usage_record", "event_msg"):
            continue
        if not isinstance(payload, dict):
            raise where.error(Msg("{kind} record: field 'payload' must be an object", {"kind": kind}))
        stamp = epoch(record.get("timestamp"))
        if rollout.inherited and kind in ("event_msg", "token_usage_record") and \
                payload.get("thread_id") == rollout.thread.key:
            rollout.own_turns()
        if kind == "session_meta" and rollout.has_meta:
            rollout.inherited = True           # the parent's history, copied in (a fork)
        elif kind == "session_meta":
            rollout.meta(where, payload)
        elif kind == "turn_context":
            rollout.model = text(payload.get("model")) or rollout.model
        elif kind == "response_item":
            if not isinstance(payload.get("type"), str):
                raise where.error(Msg("response_item record: field 'payload.type' must be a string"))
            yield from rollout.item(payload, stamp)
        elif kind == "compacted":
            yield from rollout.compacted(payload)
        elif kind == "token_usage_record":
            rollout.last = stamp or rollout.last
            yield from rollout.close(text(payload.get("response_id")), _usage(payload.get("usage")))
    yield from rollout.close()


def _task_name(agent_path: str | None) -> str | None:
    """The task name an agent path ends with (``/root/say_hello`` -> ``say_hello``)."""
    name = agent_path.rstrip("/").rsplit("/", 1)[-1] if agent_path else None
    return name or None


def _usage(usage: Any) -> dict[str, Any] | None:
    """Codex's usage record in the Responses API's words."""
    if not isinstance(usage, dict):
        return None
    out: dict[str, Any] = {}
    for theirs, ours in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                         ("total_tokens", "total_tokens")):
        if isinstance(usage.get(theirs), int):
            out[ours] = usage[theirs]
    if isinstance(usage.get("cached_input_tokens"), int):
        out["input_tokens_details"] = {"cached_tokens": usage["cached_input_tokens"]}
    if isinstance(usage.get("reasoning_output_tokens"), int):
        out["output_tokens_details"] = {"reasoning_tokens": usage["reasoning_output_tokens"]}
    if "total_tokens" not in out and "input_tokens" in out and "output_tokens" in out:
        out["total_tokens"] = out["input_tokens"] + out["output_tokens"]
    return out
