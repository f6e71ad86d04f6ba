"""A run's conversations as a tree: which agent each is, and the call that started it.

The proxy writes one transcript per conversation, named ``RUN-conversation-N`` and headed with
``run``, ``conversation``, ``agent`` and ``started_by`` (the conversation and call that
started it). ``run_of`` groups transcripts by run from their names alone (no file is read);
``build`` links the conversations of one run from their headers. A transcript from before
these fields, or a run of one conversation, is a tree of one node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from agentdbg.transcript.events import AgentNamed, Header, StartedBy

NAMED = re.compile(r"^(?P<run>.+)-conversation-(?P<n>\d+)(?:-[0-9a-f]{1,8})?\.jsonl$")


@dataclass
class Node:
    """One conversation of a run."""

    path: Path
    number: int | None
    agent: str | None
    started_by: StartedBy | None
    children: list[Node] = field(default_factory=list)
    depth: int = 0

    @property
    def label(self) -> str:
        """``conversation 2 (Order agent)``; a transcript outside a run is its file's name."""
        base = f"conversation {self.number}" if self.number is not None else self.path.name
        return f"{base} ({self.agent})" if self.agent else base

    def how(self) -> str:
        """How it started (``how_started``); empty for a root."""
        return how_started(self.started_by) if self.started_by is not None else ""


def how_started(s: StartedBy) -> str:
    """``handed off by call call_h1 (transfer_to_order_agent) in conversation 1``."""
    verb = "handed off by" if s.kind == "handoff" else "started by"
    call = f"call {s.call_id}" if s.call_id else "a call"
    tool = f" ({s.tool})" if s.tool else ""
    where = f" in conversation {s.conversation}" if s.conversation is not None else ""
    return f"{verb} {call}{tool}{where}"


def run_of(path: Path) -> tuple[str, int] | None:
    """(the run's name, the conversation's number) from a proxy transcript's file name."""
    m = NAMED.match(path.name)
    return (m.group("run"), int(m.group("n"))) if m else None


def grouped(paths: Sequence[Path]) -> list[Path]:
    """``paths`` (newest first) with each run's conversations together, in their order, at
    the place of the run's newest one."""
    order: dict[str, list[tuple[int, Path]]] = {}
    keys: list[str] = []
    for p in paths:
        named = run_of(p)
        key = f"{p.parent}/{named[0]}" if named else f"\0{p}"
        if key not in order:
            order[key] = []
            keys.append(key)
        order[key].append((named[1] if named else 0, p))
    return [p for key in keys for _, p in sorted(order[key], key=lambda x: x[0])]


def named(header: Header, events: Iterable[object]) -> Header:
    """``header`` with the agent its transcript's ``agent`` events named last (an agent learned
    after the header was written)."""
    agent = header.agent
    for event in events:
        if isinstance(event, AgentNamed):
            agent = event.name
    return header if agent == header.agent else msgspec.structs.replace(header, agent=agent)


def build(headers: Sequence[tuple[Path, Header]]) -> list[Node]:
    """The roots of the trees the conversations form (in the order given), children under
    the conversation that started them."""
    return link([Node(p, h.conversation, h.agent, h.started_by) for p, h in headers])


def link(nodes: Sequence[Node]) -> list[Node]:
    """``build`` from nodes without children yet."""
    by_number: dict[int | None, Node] = {n.number: n for n in nodes if n.number is not None}
    roots = []
    for node in nodes:
        parent = by_number.get(node.started_by.conversation) if node.started_by else None
        if parent is not None and parent is not node and not _under(parent, node, by_number):
            parent.children.append(node)
        else:
            roots.append(node)
    for root in roots:
        for n in walk([root]):
            for child in n.children:
                child.depth = n.depth + 1
    return roots


def _under(parent: Node, node: Node, by_number: dict[int | None, Node]) -> bool:
    """``parent`` descends from ``node`` (a cycle a hostile file could claim): never linked."""
    seen: set[int] = set()
    at: Node | None = parent
    while at is not None and at.started_by is not None and id(at) not in seen:
        if at is node:
            return True
        seen.add(id(at))
        at = by_number.get(at.started_by.conversation)
    return at is node


def walk(roots: Sequence[Node]) -> Iterator[Node]:
    """Every node, depth first: a conversation, then the ones it started."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def siblings(path: Path) -> list[Path]:
    """The transcripts of ``path``'s run in its folder, in conversation order (just ``path``
    for a transcript outside a run)."""
    named = run_of(path)
    if named is None:
        return [path]
    found = [p for p in path.parent.glob("*.jsonl") if (run_of(p) or ("",))[0] == named[0]]
    return sorted(found, key=lambda p: (run_of(p) or ("", 0))[1]) or [path]
