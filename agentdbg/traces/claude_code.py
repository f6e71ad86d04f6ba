"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``) as Anthropic
Messages conversations.

Each line is one entry: ``user`` and ``assistant`` entries carry an API ``message``, linked in
a chain by ``parentUuid``; ``attachment``, ``system`` and bookkeeping entries carry none. An
assistant message is written one content block per entry (thinking, then text, then each
``tool_use``), all with the same ``message.id``: they are joined back into the one reply the
model gave. Consecutive user entries (the results of parallel calls) are one user message, as
Claude Code sends them. A request is what the chain held when the model was called.

Subagents: entries with ``isSidechain`` belong to a subagent's own conversation (kept in the
same file by older versions, in ``<session>/subagents/agent-<id>.jsonl`` by newer ones), linked
to the ``Task``/``Agent`` call that started it (its tool result names the agent; older files
are linked by the call's prompt). A chain whose parent is an earlier entry (the user went back)
goes on from there; a compaction (``compact_boundary``, a summary message) starts a new
conversation, as a fresh request would be seen by the proxy.

Newer versions also record each request's parameters and its tools and system prompt
(``api-request`` and ``api-request-shape`` entries): used when present, else the transcript
says they are not recorded. The reminders Claude Code adds to each request (attachments) are
not replayed.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.i18n import Msg
from agentdbg.traces.exchange import Called, Ended, Exchange, Item, Link, Thread, epoch
from agentdbg.traces.lines import Where, records, text

SOURCE = "claude-code"
AGENT_TOOLS = ("Task", "Agent")
KEPT_REQUESTS = 256       # api-request entries remembered (an assistant entry refers to its own)
KEPT_SHAPES = 16          # distinct request shapes (system + tools) remembered


def looks_like(first: list[dict[str, Any]]) -> bool:
    """Is this the start of a Claude Code session file?"""
    return any(isinstance(r.get("sessionId"), str) and r.get("type") in (
        "user", "assistant", "queue-operation", "summary", "attachment", "system",
        "api-request", "last-prompt") for r in first) or any(
        r.get("type") == "summary" and "leafUuid" in r for r in first)


def subagent_files(path: Path) -> list[Path]:
    """The subagents' files of a session (newer versions): ``<session>/subagents/*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    try:
        return sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file())
    except OSError:
        return []


def read(path: Path) -> Iterator[Item]:
    """The session's conversations: the main one, then each subagent's."""
    session = _Session(path)
    yield from session.file(path)
    for sub in subagent_files(path):
        yield from session.file(sub, _meta(sub))
    yield from session.finish()


def _meta(sub: Path) -> dict[str, Any]:
    """``agent-<id>.meta.json`` beside a subagent's file: its type and the call that started it."""
    try:
        value = json.loads(sub.with_suffix(".meta.json").read_bytes()[:1 << 20])
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class _Chain:
    """One conversation being read: its messages so far and the reply being joined."""

    thread: Thread
    messages: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Any] | None = None     # the assistant message being joined
    ref: str | None = None                    # its api-request id
    stamp: float | None = None                # when its last block was written
    announced: bool = False
    compacting: bool = False


class _Session:
    def __init__(self, path: Path):
        self.path = path
        self.main = path.stem
        self.chains: dict[str, _Chain] = {}
        self.after: dict[str, tuple[str, int]] = {}   # entry uuid -> (chain key, messages after it)
        self.spawned: dict[str, str] = {}             # agent id -> the call that started it
        self.agent_types: dict[str, str] = {}
        self.prompts: dict[str, str] = {}             # a Task/Agent call's prompt -> its id
        self.requests: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.shapes: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.segments: dict[str, int] = {}

    # -- the entries ---------------------------------------------------------------------
    def file(self, path: Path, meta: dict[str, Any] | None = None) -> Iterator[Item]:
        for where, entry in records(path):
            kind = entry.get("type")
            if kind == "api-request":
                self._remember(self.requests, text(entry.get("id")), entry, KEPT_REQUESTS)
            elif kind == "api-request-shape":
                shape = entry.get("shape")
                if isinstance(shape, dict):
                    self._remember(self.shapes, text(entry.get("shapeHash")), shape, KEPT_SHAPES)
            elif kind in ("user", "assistant", "attachment", "system"):
                yield from self._entry(where, entry, meta)

    @staticmethod
    def _remember(store: OrderedDict[str, Any], key: str | None, value: Any, keep: int) -> None:
        if key is None:
            return
        store[key] = value
        store.move_to_end(key)
        while len(store) > keep:
            store.popitem(last=False)

    def _entry(self, where: Where, entry: dict[str, Any], meta: dict[str, Any] | None) -> Iterator[Item]:
        chain = self._chain_of(where, entry, meta)
        uuid, parent = text(entry.get("uuid")), text(entry.get("parentUuid"))
        kind = entry.get("type")
        if (kind == "system" and entry.get("subtype") == "compact_boundary") or \
                (entry.get("isCompactSummary") is True and not chain.compacting):
            yield from self._flush(chain)
            yield Ended(chain.thread.key)
            chain = self._compacted(chain)
        message = entry.get("message")
        if kind in ("user", "assistant"):
            if not isinstance(message, dict):
                raise where.error(Msg("{kind} entry: field 'message' must be an object", {"kind": kind}))
            content = message.get("content")
            if not isinstance(content, (str, list)):
                raise where.error(Msg("{kind} entry: field 'message.content' must be a string or an array",
                                      {"kind": kind}))
        if kind == "assistant" and isinstance(message, dict):
            yield from self._assistant(where, chain, entry, message, parent)
        else:
            if kind == "user" or not self._continues(chain, entry, parent):
                yield from self._flush(chain)
            self._rewind(chain, parent)
            if kind == "user" and isinstance(message, dict):
                self._user(chain, entry, message)
                chain.compacting = False
        if uuid is not None:
            self.after[uuid] = (chain.thread.key, len(chain.messages) + (chain.pending is not None))

    def _chain_of(self, where: Where, entry: dict[str, Any], meta: dict[str, Any] | None) -> _Chain:
        agent = text(entry.get("agentId"))
        parent = text(entry.get("parentUuid"))
        if entry.get("isSidechain") is True:
            owner = self.after.get(parent or "")
            key = f"agent-{agent}" if agent else owner[0] if owner else f"sidechain-{entry.get('uuid')}"
        else:
            key = self.main
        key = self._current(key)
        chain = self.chains.get(key)
        if chain is None:
            thread = Thread(key, "anthropic", SOURCE, started=epoch(entry.get("timestamp")))
            if key != self.main:
                kind = text((meta or {}).get("agentType")) or self.agent_types.get(agent or "")
                call = text((meta or {}).get("toolUseId")) or self.spawned.get(agent or "") \
                    or self._by_prompt(entry)
                thread.agent = kind or "subagent"
                thread.parent = Link(self._current(self.main), call)
            else:
                thread.agent = "main"
            chain = self.chains[key] = _Chain(thread)
        return chain

    def _current(self, key: str) -> str:
        n = self.segments.get(key, 0)
        return key if n == 0 else f"{key}+compacted-{n}"

    def _by_prompt(self, entry: dict[str, Any]) -> str | None:
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return self.prompts.get(content) if isinstance(content, str) else None

    def _compacted(self, chain: _Chain) -> _Chain:
        """A compaction: the conversation goes on as a new one, from its summary; the old one
        is let go (its messages, where its entries were)."""
        old = chain.thread
        del self.chains[old.key]
        self.after = {u: at for u, at in self.after.items() if at[0] != old.key}
        base = old.key.split("+compacted-")[0]
        self.segments[base] = self.segments.get(base, 0) + 1
        thread = Thread(self._current(base), "anthropic", SOURCE, agent=old.agent,
                        parent=Link(old.key, None), notes=["the conversation was compacted: this "
                                                           "one goes on from its summary"])
        new = self.chains[thread.key] = _Chain(thread, compacting=True)
        return new

    def _continues(self, chain: _Chain, entry: dict[str, Any], parent: str | None) -> bool:
        """Does a non-message entry sit inside the reply being joined (between its blocks)?"""
        return chain.pending is not None and parent is not None and \
            self.after.get(parent, ("", -1))[1] == len(chain.messages) + 1

    def _rewind(self, chain: _Chain, parent: str | None) -> None:
        """The entry's parent is earlier in the chain: the conversation goes on from there."""
        at = self.after.get(parent or "")
        if at is not None and at[0] == chain.thread.key and at[1] < len(chain.messages):
            chain.messages = chain.messages[:at[1]]

    # -- messages -------------------------------------------------------------------------
    def _user(self, chain: _Chain, entry: dict[str, Any], message: dict[str, Any]) -> None:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        result = entry.get("toolUseResult")
        if isinstance(result, dict) and isinstance(result.get("agentId"), str):
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result" and \
                        isinstance(block.get("tool_use_id"), str):
                    self.spawned[result["agentId"]] = block["tool_use_id"]
                    if isinstance(result.get("agentType"), str):
                        self.agent_types[result["agentId"]] = result["agentType"]
        last = chain.messages[-1] if chain.messages else None
        if last is not None and last.get("role") == "user":
            before = last["content"] if isinstance(last["content"], list) else \
                [{"type": "text", "text": last["content"]}]
            chain.messages[-1] = {"role": "user", "content": before + blocks}   # a new object:
        else:                                                                  # bodies keep theirs
            chain.messages.append({"role": "user", "content": content})

    def _assistant(self, where: Where, chain: _Chain, entry: dict[str, Any], message: dict[str, Any],
                   parent: str | None) -> Iterator[Item]:
        mid = message.get("id")
        if message.get("model") == "<synthetic>":   # written by Claude Code, not the model
            yield from self._flush(chain)
            if entry.get("isApiErrorMessage") is True:
                yield from self._failed(chain, entry, message)
            return
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use" and \
                    block.get("name") in AGENT_TOOLS and isinstance(block.get("input"), dict) and \
                    isinstance(block["input"].get("prompt"), str) and isinstance(block.get("id"), str) \
                    and len(self.prompts) < 4096:
                self.prompts[block["input"]["prompt"]] = block["id"]
        pending = chain.pending
        if pending is not None and mid is not None and pending.get("id") == mid:
            pending["content"] = pending["content"] + blocks
            _take_end(pending, message)
        else:
            yield from self._flush(chain)
            self._rewind(chain, parent)
            chain.pending = {"id": mid, "type": "message", "role": "assistant",
                             "model": message.get("model"), "content": list(blocks),
                             "stop_reason": None, "stop_sequence": None, "usage": message.get("usage")}
            _take_end(chain.pending, message)
            chain.ref = text(entry.get("requestRef"))
        chain.stamp = epoch(entry.get("timestamp"))

    def _failed(self, chain: _Chain, entry: dict[str, Any], message: dict[str, Any]) -> Iterator[Item]:
        content = message.get("content")
        said = "".join(b.get("text", "") for b in content if isinstance(b, dict)) \
            if isinstance(content, list) else str(content)
        yield from self._announce(chain)
        yield Called(chain.thread.key, Exchange(self._body(chain, None), None,
                                                started=epoch(entry.get("timestamp")),
                                                error=said[:500] or "the request failed"))

    def _flush(self, chain: _Chain) -> Iterator[Item]:
        """The reply being joined is complete: its exchange, then it joins the messages."""
        reply = chain.pending
        if reply is None:
            return
        chain.pending = None
        request = self.requests.get(chain.ref or "")
        started = epoch(request.get("timestamp")) if request else None
        latency = (chain.stamp - started) * 1000 if started and chain.stamp else None
        yield from self._announce(chain, request)
        yield Called(chain.thread.key, Exchange(self._body(chain, request), reply,
                                                latency_ms=latency, started=started or chain.stamp))
        chain.messages.append({"role": "assistant", "content": reply["content"]})

    def _announce(self, chain: _Chain, request: dict[str, Any] | None = None) -> Iterator[Item]:
        if chain.announced:
            return
        chain.announced = True
        shape = self.shapes.get(text((request or {}).get("shapeHash")) or "")
        chain.thread.missing = ("reminders",) if shape is not None else \
            ("tools", "params", "system", "reminders")
        pending = chain.pending
        chain.thread.model = text(pending.get("model")) if pending else None
        yield chain.thread

    def _body(self, chain: _Chain, request: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": chain.thread.model or "unknown"}
        params = request.get("params") if request else None
        if isinstance(params, dict):
            body.update({k: v for k, v in params.items() if k not in ("messages", "betas")})
        shape = self.shapes.get(text((request or {}).get("shapeHash")) or "")
        if shape is not None:
            for key in ("system", "tools"):
                if key in shape:
                    body[key] = shape[key]
        body["messages"] = list(chain.messages)
        return body

    def finish(self) -> Iterator[Item]:
        for chain in list(self.chains.values()):
            yield from self._flush(chain)


def _take_end(pending: dict[str, Any], message: dict[str, Any]) -> None:
    """A block's entry carries the reply's stop reason and usage as known when it was written."""
    if message.get("stop_reason") is not None:
        pending["stop_reason"] = message["stop_reason"]
    if isinstance(message.get("usage"), dict):
        pending["usage"] = message["usage"]
