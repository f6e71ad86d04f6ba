"""What ``proxy -- CMD`` says when the command has ended: the run in a few lines (on stderr,
so the command's own output stays exactly its own), and the report of the run on disk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.report.runpage import Conversation, RunSummary, render_run_report, summarize
from agentdbg.textsafe import one_line
from agentdbg.transcript.tree import Node, link, walk

if TYPE_CHECKING:
    from agentdbg.server.launch.child import Ended


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_lines(how: str, summary: RunSummary, report: Path | None, log: Path,
                  notes: list[str], leftovers: int) -> list[str]:
    convs = summary.conversations
    lines = [f"agentdbg proxy: {how}"]
    if not convs:
        lines.append("  no request reached the proxy: is the command's model client one that "
                     "reads the variables agentdbg sets? (--client NAME forces a kind; see the log)")
    else:
        lines.append(f"  {_plural(summary.requests, 'request')} in "
                     f"{_plural(len(convs), 'conversation')}")
        rules = summary.by_rule()
        errors = sum(n for sev, _, n in rules if sev == "error")
        warnings = sum(n for sev, _, n in rules if sev != "error")
        lines.append("  findings: none" if not rules else
                     f"  findings: {_plural(errors, 'error')}, {_plural(warnings, 'warning')}")
        lines.extend(f"    {'✗' if sev == 'error' else '!'} {rule} ×{n}" for sev, rule, n in rules)
        lines.extend(_conversation_lines(convs))
    if report is not None:
        lines.append(f"  report: {one_line(str(report))}")
    lines.append(f"  log: {one_line(str(log))}")
    if leftovers:
        lines.append(f"  ended {_plural(leftovers, 'process')} the command left running")
    lines.extend(f"  note: {one_line(n)}" for n in notes)
    return lines


def _conversation_lines(convs: list[Conversation]) -> list[str]:
    """A line per conversation; a multi-agent run's as a tree, each under the conversation whose
    call started it (``└─ conversation 2 (Billing agent) ← handoff from conversation 1 (call
    call_h): …``)."""
    by_path = {c.path: c for c in convs}
    nodes = link([Node(c.path, c.number, c.agent, c.started_by) for c in convs])
    lines = []
    for node in walk(nodes):
        c = by_path[node.path]
        marks = (f"✗ {c.errors} " if c.errors else "") + (f"! {c.warnings}" if c.warnings else "")
        lines.append(f"  {_branch(node)}{one_line(c.title)}{_how(node)}: "
                     f"{_plural(c.requests, 'request')} {marks.strip() or '✓'}  "
                     f"{one_line(str(c.path))}")
    return lines


def _branch(node: Node) -> str:
    return f"{'   ' * (node.depth - 1)}└─ " if node.depth else ""


def _how(node: Node) -> str:
    s = node.started_by
    if s is None or not node.depth:   # a root: its starter is not in this run
        return ""
    kind = "handoff" if s.kind == "handoff" else "subagent"
    call = f" (call {one_line(s.call_id)})" if s.call_id else ""
    return f" ← {kind} from conversation {s.conversation}{call}"


def report_and_summary(name: str, ended: Ended, paths: list[Path], folder: Path, label: str, log: Path,
                       notes: list[str], leftovers: int, profile: str) -> None:
    """Write the run's report (when a request was recorded) and print the summary."""
    report = None
    summary = RunSummary([])
    try:
        if paths:
            summary = summarize(paths, profile)
            report = folder / f"{label}-report.html"
            report.write_text(render_run_report(paths, label, profile=profile), encoding="utf-8")
    except OSError as exc:
        notes = [*notes, f"the report could not be written: {exc}"]
        report = None
    how = f"{one_line(name)} {ended.how} after {ended.seconds:.1f} s"
    for line in summary_lines(how, summary, report, log, notes, leftovers):
        print(line, file=sys.stderr)
    sys.stderr.flush()

