"""Breakpoints for ``continue``: plain data, evaluated against the session's state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentdbg.engine.phases import Phase
from agentdbg.i18n import N_, Msg, _
from agentdbg.messages import call_name

if TYPE_CHECKING:
    from agentdbg.checker.findings import Finding
    from agentdbg.engine.session import Event, Session
    from agentdbg.toolspec import ToolSet

KINDS = ("tool", "turn", "error", "finding")


@dataclass
class Breakpoint:
    id: int
    kind: str              # tool | turn | error | finding
    value: str | None = None
    hits: int = 0
    note: str = ""         # a lesson's note, shown when it is hit

    def describe(self) -> str:
        return {"tool": _("before a call of {value}"), "turn": _("before model turn {value}"),
                "error": _("after a tool result that is an error"),
                "finding": _("when the checker has a finding")}[self.kind].format(value=self.value)

    def to_data(self) -> dict | str:
        """As a lesson file writes it: ``{"tool": "get_weather"}``, ``"error"``."""
        return {self.kind: self.value} if self.value is not None else self.kind


@dataclass
class Breakpoints:
    items: list[Breakpoint] = field(default_factory=list)
    _next: int = 1

    def add(self, kind: str, value: str | None, note: str = "") -> Breakpoint:
        bp = Breakpoint(self._next, kind, value, note=note)
        self._next += 1
        self.items.append(bp)
        return bp

    def add_checked(self, kind: str, value: str | None, toolset: ToolSet, note: str = "") -> Breakpoint:
        """``add`` after checking ``kind`` and ``value``; ValueError (a ``Msg``) when wrong."""
        if kind not in KINDS:
            raise ValueError(Msg("usage: {usage}", {"usage": Msg(N_(
                "break tool NAME | break turn N | break error | break finding"))}))
        if kind in ("tool", "turn") and value is None:
            usage = N_("break tool NAME") if kind == "tool" else N_("break turn N")
            raise ValueError(Msg("usage: {usage}", {"usage": Msg(usage)}))
        if kind == "tool" and toolset.get(str(value)) is None:
            raise ValueError(Msg("no tool {name}; tools: {tools}",
                                 {"name": repr(value), "tools": ", ".join(toolset.names())}))
        if kind == "turn" and not str(value).isdigit():
            raise ValueError(Msg("turn must be a number, got {value}", {"value": repr(value)}))
        return self.add(kind, None if value is None else str(value), note)

    def clear(self, ident: str | None) -> int:
        if ident is None:
            n = len(self.items)
            self.items.clear()
            return n
        keep = [b for b in self.items if str(b.id) != ident]
        if len(keep) == len(self.items):
            raise KeyError(Msg("no breakpoint {id}", {"id": ident}))
        self.items = keep
        return 1

    def hit(self, session: Session, last_event: Event | None, findings: list[Finding]) -> Breakpoint | None:
        """The first breakpoint the current pause point matches (counted as a hit)."""
        from agentdbg.engine.session import ToolsExecuted

        for bp in self.items:
            if (
                (bp.kind == "turn" and session.phase is Phase.MODEL
                 and str(len(session.turns) + 1) == bp.value)
                or (bp.kind == "tool" and session.phase is Phase.TOOLS
                    and any(call_name(c) == bp.value for c in session.pending))
                or (bp.kind == "error" and isinstance(last_event, ToolsExecuted)
                    and any(not o.ok for o in last_event.outcomes))
                or (bp.kind == "finding" and findings)
            ):
                bp.hits += 1
                return bp
        return None
