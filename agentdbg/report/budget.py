"""Context budget of a recorded run: the budget of its last request (or of request N).

The counting and the terminal view live in ``agentdbg.render.budget`` (step mode's
``usage`` shows them too); this module reads them off a transcript.
"""

from __future__ import annotations

from typing import Any

from agentdbg.render.budget import (
    NAMED_RESULTS,
    Budget,
    Counter,
    Part,
    budget_of_request,
    render_budget,
)
from agentdbg.report.timeline import Run


def budget_of_run(run: Run) -> Budget | None:
    """The budget of the run's last request (None: the run made no request)."""
    if not run.turns:
        return None
    last = run.turns[-1]
    shown = next((c.in_history for h in reversed(run.histories) for c in reversed(h.cards)
                  if c.kind == "turn" and c.request and c.in_history is not None), last.turn)
    return budget_of_request(run.last_request, _counted(run), model=run.model,
                             usage=last.usage, turn=shown)   # the turn as the history counts it


def _counted(run: Run) -> list:
    """The tools a request carried, for counting: hosted and namespaced ones too when the
    transcript recorded them (what the chat tools leave out is sent all the same)."""
    extra = [d for d in run.definitions if d.get("kind") not in ("function", "custom")
             or d.get("namespace")]
    return [*run.tools, *extra]


def budget_of(source: Any, *, turn: int | None = None) -> Budget | None:
    """A transcript's budget: of its last request, or of request ``turn``."""
    from agentdbg.report.timeline import read_run

    run = read_run(source, findings=False)
    if turn is None:
        return budget_of_run(run)
    for h in run.histories:
        for card in h.cards:
            if card.kind == "turn" and card.turn == turn and card.request:
                info = next((t for t in run.turns if t.turn == turn), None)
                return budget_of_request(h.messages[:card.request["messages"]], _counted(run),
                                         model=run.model, usage=info.usage if info else None,
                                         turn=turn)
    return None


__all__ = ["NAMED_RESULTS", "Budget", "Counter", "Part", "budget_of", "budget_of_request",
           "budget_of_run", "render_budget"]
