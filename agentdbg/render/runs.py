"""``agentdbg runs``: the saved runs as lines that fit 80 columns.

Each run takes two lines: its number, creation time, stop reason, turns and question
(cut with … to fit), then its name on a line of its own. The name is never wrapped or
cut: it is what you pass back (``agentdbg replay NAME``), as is the number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from agentdbg.i18n import N_, _
from agentdbg.render.safe import safe

CREATED = re.compile(r"^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)")
HEAD = ("#", N_("created"), N_("stop"), N_("turns"), N_("question"))
GAP = "  "


@dataclass
class RunRow:
    """One saved run as listed: ``error`` set when its file cannot be read."""

    number: int
    name: str
    created: str | None = None
    stop: str | None = None
    turns: int | None = None
    question: str | None = None
    error: str | None = None
    kind: str = ""                  # "replay" / "fork": not a run of the question itself
    agent: str | None = None        # a multi-agent run: the conversation's agent …
    conversation: int | None = None
    started: Any = None             # … the call that started it (``StartedBy``) …
    depth: int = 0                  # … and how deep under its run's first conversation
    shown_error: str | None = None  # ``error`` in the chosen language (not in --json)
    parent: int | None = None       # the # of the row whose call started it


def created_text(created: object) -> str:
    """``2026-11-30T04:15:07+0000`` as ``2026-11-30 04:15:07`` (the header's local time)."""
    if not isinstance(created, str):
        return "?"
    m = CREATED.match(created)
    return f"{m.group(1)} {m.group(2)}" if m else safe(created)[:19]


def cut(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` terminal cells, ending in … when cut (wide characters
    count two)."""
    if cell_len(text) <= cells:
        return text
    out, used = [], 0
    for ch in text:
        w = cell_len(ch)
        if used + w > cells - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def _cells(row: RunRow) -> tuple[str, str, str, str, str]:
    if row.error is not None:
        return str(row.number), "?", _("unreadable"), "", row.shown_error or row.error
    from agentdbg.render.run import stop_label

    stop = stop_label(row.stop) if row.stop is not None else _("(no stop)")
    turns = "" if row.turns is None else str(row.turns)
    question = " ".join(safe(row.question or "").split())
    if row.kind:
        question = f"({row.kind}) {question}"
    if row.agent or row.started is not None:
        question = _agent_cell(row) + ("" if row.started is not None else f" {question}")
    return str(row.number), created_text(row.created), safe(stop), turns, question


def _agent_cell(row: RunRow) -> str:
    """``└─ Order agent ← handoff from #3 (call call_h1)``: a conversation under its starter."""
    agent = safe(row.agent or "agent")
    if row.started is None:
        return f"[{agent}]"
    how = "handoff" if row.started.kind == "handoff" else "subagent"
    where = f"#{row.parent}" if row.parent is not None else \
        f"conversation {row.started.conversation}" if row.started.conversation is not None else \
        "another conversation"
    call = f" (call {safe(row.started.call_id)})" if row.started.call_id else ""
    return f"{'  ' * max(0, row.depth - 1)}└─ {agent} ← {how} from {where}{call}"


def render_runs(rows: list[RunRow], folder: str, width: int, *, more: int = 0) -> list[Text]:
    """The listing as lines; print each with ``soft_wrap=True`` (nothing is wrapped: the
    question is cut to ``width``, a name longer than the line runs past it whole)."""
    lines = [Text(_("saved runs in {folder}, newest first").format(folder=safe(folder)))]
    if not rows:
        lines.append(Text(_("(none yet: agentdbg run \"question\" saves one here)")))
        return lines
    cells = [_cells(r) for r in rows]
    head = tuple(_(h) for h in HEAD)
    widths = [max(cell_len(c[i]) for c in [head, *cells]) for i in range(4)]
    indent = " " * (widths[0] + len(GAP))

    def line(c: tuple[str, ...], style: str = "") -> Text:
        head = GAP.join([c[0].rjust(widths[0]), c[1].ljust(widths[1]), c[2].ljust(widths[2]),
                         c[3].rjust(widths[3])])
        text = Text(head + GAP, style=style)
        text.append(cut(c[4], max(1, width - cell_len(head + GAP))))
        return text

    lines.append(line(head, "bold"))
    lines.append(Text(indent + _("name (give it, or the #, to replay, report, diff, export)"),
                      style="bold"))
    for row, c in zip(rows, cells):
        lines.append(line(c, "red" if row.error is not None else ""))
        lines.append(Text(indent + safe(row.name), style="cyan"))
    if more:
        lines.append(Text(_("… and {n} older (--limit)").format(n=more), style="dim"))
    lines.append(Text(_("'last' is #1; a path works too"), style="dim"))
    lines.append(Text(_("each run keeps the newest --keep-runs (default 50) here, removing older "
                        "ones"), style="dim"))
    return lines
