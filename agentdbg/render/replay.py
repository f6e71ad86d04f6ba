"""--live-tools: the recorded and the current result of each call, side by side or as a diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentdbg.render.safe import safe

if TYPE_CHECKING:
    from agentdbg.engine.replaying import ToolComparison


def render_live_tools(results: list[ToolComparison]) -> RenderableType:
    parts: list[RenderableType] = []
    same = sum(1 for r in results if r.now is not None and not r.differs)
    differ = [r for r in results if r.differs]
    skipped = [r for r in results if r.now is None]
    parts.append(Text(f"live tools: {len(results)} recorded call(s): {same} same, "
                      f"{len(differ)} different, {len(skipped)} not re-run",
                      style="bold red" if differ else "bold green"))
    for r in skipped:
        parts.append(Text(f"  - {safe(r.call_id)} {safe(r.name)}: {safe(r.reason)}", style="dim"))
    for r in differ:
        parts.append(Text(f"  ✗ {safe(r.call_id)} {safe(r.name)} differs:", style="bold red"))
        if len(r.recorded) <= 60 and len(r.now or "") <= 60:
            table = Table("recorded", "now", box=None, padding=(0, 2))
            table.add_row(Text(safe(r.recorded)), Text(safe(r.now or "")))
            parts.append(table)
        else:
            parts.append(Text(safe(r.diff())))
    return Group(*parts)
