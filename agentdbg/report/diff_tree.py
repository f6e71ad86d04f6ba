"""``agentdbg diff`` of two multi-agent runs: agent by agent.

Each run's conversations are walked as a tree (``transcript.tree``); a conversation is known by
its place among the agents — the names from its root down to it (``triage agent › Billing
agent``) and, for an agent that appears more than once there, its occurrence. The two runs'
conversations with the same key are diffed as any two runs are (``report.diff``); one found in
only one run is said so. The runs match when every agent matches and none is missing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.report import adapter
from agentdbg.report.diff import STYLES, RunDiff, diff_lines, diff_runs
from agentdbg.report.timeline import Run, read_run

ARROW = " › "


@dataclass
class AgentDiff:
    agent: str                         # its key: the agents from the root down to it
    a: Path | None
    b: Path | None
    diff: RunDiff | None = None        # both runs have it

    @property
    def same(self) -> bool:
        return self.diff is not None and self.diff.same

    def to_dict(self) -> dict:
        return {"agent": self.agent, "a": str(self.a) if self.a else None,
                "b": str(self.b) if self.b else None, "same": self.same,
                "diff": self.diff.to_dict() if self.diff is not None else None}


@dataclass
class TreeDiff:
    agents: list[AgentDiff] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return all(a.same for a in self.agents)

    def to_dict(self) -> dict:
        return {"format": "agentdbg-diff-run", "version": 1, "same": self.same,
                "agents": [a.to_dict() for a in self.agents]}


def keyed(paths: Sequence[str | os.PathLike], profile: str) -> dict[str, Run]:
    """A run's conversations by their place among its agents, in tree order."""
    from agentdbg.transcript.tree import build, walk

    runs = {Path(p): read_run(p, profile=profile, findings=False) for p in paths}
    roots = build([(path, run.header) for path, run in runs.items()])
    out: dict[str, Run] = {}
    names: dict[int | None, str] = {}
    for node in walk(roots):
        s = node.started_by
        above = names.get(s.conversation, "") if s is not None and node.depth else ""
        own = node.agent or f"conversation {node.number}"
        key = f"{above}{ARROW}{own}" if above else own
        n, unique = 1, key
        while unique in out:
            n += 1
            unique = f"{key} #{n}"
        out[unique] = runs[node.path]
        if node.number is not None:
            names[node.number] = unique
    return out


def diff_trees(a: Sequence[str | os.PathLike], b: Sequence[str | os.PathLike], *,
               profile: str = "openai") -> TreeDiff:
    left, right = keyed(a, profile), keyed(b, profile)
    out = TreeDiff()
    for key in [*left, *(k for k in right if k not in left)]:
        x, y = left.get(key), right.get(key)
        out.agents.append(AgentDiff(key, x.path if x else None, y.path if y else None,
                                    diff_runs(x, y) if x is not None and y is not None else None))
    return out


def tree_lines(d: TreeDiff) -> list[tuple[str, str]]:
    """(class, text) lines: each agent's heading, then its diff (or where it is missing)."""
    from agentdbg.i18n import _

    lines: list[tuple[str, str]] = []
    for agent in d.agents:
        if agent.diff is None:
            where = "A" if agent.a is not None else "B"
            lines.append(("bad", _("agent {agent}: only in {side} ({path})").format(
                agent=agent.agent, side=where, path=agent.a or agent.b)))
            continue
        said = (_("agent {agent}: same") if agent.same else _("agent {agent}: differs"))
        lines.append(("ok" if agent.same else "bad", said.format(agent=agent.agent)))
        lines.extend((cls, f"  {text}") for cls, text in diff_lines(agent.diff))
    matched = sum(1 for a in d.agents if a.same)
    lines.append(("", _("{matched} of {n} agent(s) match").format(matched=matched,
                                                                  n=len(d.agents))))
    return lines


def render_tree_diff(d: TreeDiff) -> Any:
    from rich.text import Text

    out = Text()
    for n, (cls, line) in enumerate(tree_lines(d)):
        out.append(("\n" if n else "") + adapter.safe(line), style=STYLES.get(cls, ""))
    return out
