"""Breakpoints for ``continue``: plain data, evaluated against the session's state."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentdbg.engine.phases import Phase
from agentdbg.messages import call_name


@dataclass
class Breakpoint:
    id: int
    kind: str              # tool | turn | error | finding
    value: str | None = None
    hits: int = 0

    def describe(self) -> str:
        return {"tool": f"before a call of {self.value}", "turn": f"before model turn {self.value}",
                "error": "after a tool result that is an error",
                "finding": "when the checker has a finding"}[self.kind]


@dataclass
class Breakpoints:
    items: list[Breakpoint] = field(default_factory=list)
    _next: int = 1

    def add(self, kind: str, value: str | None) -> Breakpoint:
        bp = Breakpoint(self._next, kind, value)
        self._next += 1
        self.items.append(bp)
        return bp

    def clear(self, ident: str | None) -> int:
        if ident is None:
            n = len(self.items)
            self.items.clear()
            return n
        keep = [b for b in self.items if str(b.id) != ident]
        if len(keep) == len(self.items):
            raise KeyError(f"no breakpoint {ident}")
        self.items = keep
        return 1

    def hit(self, session, last_event, findings) -> Breakpoint | None:
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
