"""What ``proxy -- CMD`` says when the command has ended: the run in a few lines (on stderr,
so the command's own output stays exactly its own), and the report of the run on disk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.i18n import _, ngettext
from agentdbg.report.runpage import Conversation, RunSummary, render_run_report, summarize
from agentdbg.textsafe import one_line
from agentdbg.transcript.tree import Node, link, walk

if TYPE_CHECKING:
    from agentdbg.server.launch.child import Ended


def _requests(n: int) -> str:
    return ngettext("{n} request", "{n} requests", n).format(n=n)


def summary_lines(how: str, summary: RunSummary, report: Path | None, log: Path,
                  notes: list[str], leftovers: int) -> list[str]:
    convs = summary.conversations
    lines = [f"agentdbg proxy: {how}"]
    if not convs:
        lines.append("  " + _("no request reached the proxy: is the command's model client one that "
                              "reads the variables agentdbg sets? (--client NAME forces a kind; "
                              "see the log)"))
    else:
        lines.append("  " + ngettext("{requests} in {n} conversation", "{requests} in {n} conversations",
                                     len(convs)).format(requests=_requests(summary.requests),
                                                        n=len(convs)))
        rules = summary.by_rule()
        errors = sum(n for sev, _rule, n in rules if sev == "error")
        warnings = sum(n for sev, _rule, n in rules if sev != "error")
        lines.append("  " + (_("findings: none") if not rules else _("findings: {errors}, {warnings}").format(
            errors=ngettext("{n} error", "{n} errors", errors).format(n=errors),
            warnings=ngettext("{n} warning", "{n} warnings", warnings).format(n=warnings))))
        lines.extend(f"    {'✗' if sev == 'error' else '!'} {rule} ×{n}" for sev, rule, n in rules)
        lines.extend(_conversation_lines(convs))
    if report is not None:
        lines.append("  " + _("report: {path}").format(path=one_line(str(report))))
    lines.append("  " + _("log: {path}").format(path=one_line(str(log))))
    if leftovers:
        lines.append("  " + ngettext("ended {n} process the command left running",
                                     "ended {n} processes the command left running",
                                     leftovers).format(n=leftovers))
    lines.extend("  " + _("note: {note}").format(note=one_line(n)) for n in notes)
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
        lines.append("  " + _branch(node) + _("{conversation}{how}: {requests} {marks}  {path}").format(
            conversation=_title(c), how=_how(node), requests=_requests(c.requests),
            marks=marks.strip() or "✓", path=one_line(str(c.path))))
    return lines


def _title(c: Conversation) -> str:
    """``conversation 2 (Billing agent)``, in the chosen language (the report's is English)."""
    base = one_line(c.path.name) if c.number is None else _("conversation {n}").format(n=c.number)
    if not c.agent:
        return base
    return _("{conversation} ({agent})").format(conversation=base, agent=one_line(c.agent))


def _branch(node: Node) -> str:
    return f"{'   ' * (node.depth - 1)}└─ " if node.depth else ""


def _how(node: Node) -> str:
    s = node.started_by
    if s is None or not node.depth:   # a root: its starter is not in this run
        return ""
    handoff = s.kind == "handoff"
    if s.call_id:
        text = (_("handoff from conversation {n} (call {call})") if handoff else
                _("subagent from conversation {n} (call {call})"))
    else:
        text = _("handoff from conversation {n}") if handoff else _("subagent from conversation {n}")
    return " ← " + text.format(n=s.conversation, call=one_line(s.call_id or ""))


def ended_text(name: str, ended: Ended) -> str:
    """``python exited with status 0 after 1.2 s``, in the chosen language."""
    seconds = f"{ended.seconds:.1f}"
    if ended.signal is not None:
        return _("{command} was killed by {signal} after {seconds} s").format(
            command=one_line(name), signal=ended.signal, seconds=seconds)
    return _("{command} exited with status {code} after {seconds} s").format(
        command=one_line(name), code=ended.status, seconds=seconds)


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
        notes = [*notes, _("the report could not be written: {error}").format(error=exc)]
        report = None
    for line in summary_lines(ended_text(name, ended), summary, report, log, notes, leftovers):
        print(line, file=sys.stderr)
    sys.stderr.flush()

