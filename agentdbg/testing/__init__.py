"""Helpers for your own tests: keep transcripts as regression tests.

    from agentdbg.testing import assert_replays

    def test_order_lookup_still_replays():
        assert_replays("transcripts/order.jsonl")                 # recorded tool results
        assert_replays("transcripts/order.jsonl", live_tools=True,  # and today's tools
                       tools="tools.yaml")

Or collect a whole folder with the pytest plugin: ``pytest --agentdbg-replay transcripts/``.

A multi-agent run (the proxy's ``RUN-conversation-N.jsonl`` files) replays as one tree:

    from agentdbg.testing import assert_run_replays

    def test_the_team_still_replays():
        assert_run_replays("transcripts/run-conversation-1.jsonl")   # every agent's conversation

Trajectory assertions check what a run did (a failure shows the messages concerned):

    from agentdbg.testing import assert_tool_sequence, assert_tool_args, assert_max_turns

    def test_order_lookup_calls_the_tools_in_order():
        run = "transcripts/order.jsonl"
        assert_tool_sequence(run, ["query_order", "query_logistics"])
        assert_tool_args(run, "query_order", {"order_id": "ORD-2026-001"})
        assert_max_turns(run, 3)

With the pytest plugin installed, the ``agentdbg_trajectory`` fixture loads one
(``agentdbg_trajectory("last")`` takes what ``agentdbg runs`` shows, too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.errors import AgentdbgError
from agentdbg.report.trajectory import (
    Trajectory,
    TrajectoryError,
    assert_max_tool_calls,
    assert_max_turns,
    assert_no_findings,
    assert_stop_reason,
    assert_tool_args,
    assert_tool_not_used,
    assert_tool_sequence,
    assert_tool_used,
)
from agentdbg.textsafe import one_line
from agentdbg.transcript.events import Message

__all__ = [  # the trajectory assertions come from agentdbg.report.trajectory
    "ReplayMismatch",
    "ReplayResult",
    "Trajectory",
    "TrajectoryError",
    "assert_max_tool_calls",
    "assert_max_turns",
    "assert_no_findings",
    "assert_replays",
    "assert_run_replays",
    "assert_stop_reason",
    "assert_tool_args",
    "assert_tool_not_used",
    "assert_tool_sequence",
    "assert_tool_used",
    "replay_run",
    "replay_transcript",
]


class ReplayMismatch(AssertionError):
    """The replay diverged, ended differently, or the history breaks the protocol."""


@dataclass
class ReplayResult:
    path: Path
    stop_reason: str | None
    messages: list[Message]
    problems: list[str] = field(default_factory=list)


def replay_transcript(path: str | os.PathLike[str], *, live_tools: bool = False,
                      tools: str | os.PathLike[str] | None = None, profile: str = "openai",
                      strict: bool = False) -> ReplayResult:
    """Replay ``path`` as ``agentdbg replay`` does and judge it the same way."""
    from contextlib import nullcontext

    from agentdbg.engine.replaying import (
        LiveTools,
        Replay,
        replay_problems,
        replay_session,
        with_live_tools,
    )
    from agentdbg.toolspec import load_tools, running

    if live_tools and tools is None:   # never ./tools.yaml by itself (see agentdbg.trust)
        raise AgentdbgError("live_tools needs tools=PATH: the tools to re-run the calls with")
    session, model = replay_session(path)
    live = None
    # live tools from MCP servers run with their servers started, and stopped at the end
    with running(load_tools(tools)) if live_tools else nullcontext() as toolset:
        if toolset is not None:
            live = LiveTools(toolset)
            with_live_tools(session, model, live)
        for _ in Replay(session, model).steps():
            pass
    result = ReplayResult(Path(path), session.stop_reason.value if session.stop_reason else None,
                          session.messages)
    result.problems = replay_problems(path, session, model, profile=profile, live=live,
                                      strict=strict)
    return result


def assert_replays(path: str | os.PathLike[str], *, live_tools: bool = False,
                   tools: str | os.PathLike[str] | None = None, profile: str = "openai",
                   strict: bool = False) -> ReplayResult:
    """Replay ``path``; raise ``ReplayMismatch`` listing every problem found."""
    result = replay_transcript(path, live_tools=live_tools, tools=tools, profile=profile,
                               strict=strict)
    if result.problems:   # the problems quote the recording: escaped for the terminal
        raise ReplayMismatch(f"{one_line(path)}:\n  " + "\n  ".join(map(one_line, result.problems)))
    return result


def replay_run(path: str | os.PathLike[str], *, profile: str = "openai") -> dict[str, ReplayResult]:
    """Replay every conversation of the multi-agent run ``path`` belongs to, parents first:
    each result under its agent's label (``conversation 2 (Billing agent)``)."""
    from agentdbg.transcript import read_transcript
    from agentdbg.transcript.tree import build, named, siblings, walk

    headers = []
    for p in siblings(Path(path)):
        header, events = read_transcript(p)
        headers.append((p, named(header, (e for _, e in events))))
    return {node.label: replay_transcript(node.path, profile=profile)
            for node in walk(build(headers))}


def assert_run_replays(path: str | os.PathLike[str], *, profile: str = "openai") -> dict[str, ReplayResult]:
    """Replay the whole run ``path`` belongs to; raise ``ReplayMismatch`` naming each agent whose
    conversation did not replay, with its problems."""
    results = replay_run(path, profile=profile)
    failed = [f"{label} ({r.path.name}):\n    " + "\n    ".join(r.problems)
              for label, r in results.items() if r.problems]
    if failed:
        raise ReplayMismatch(f"{path}: {len(failed)} of {len(results)} conversation(s) did not "
                             "replay:\n  " + "\n  ".join(failed))
    return results
