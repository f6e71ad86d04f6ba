"""The tools as a table: name, parameters, handler, policy."""

from __future__ import annotations

from agentdbg.render.safe import safe


def tools_table(toolset):
    from rich.table import Table
    from rich.text import Text


    table = Table(title=Text(f"{safe(toolset.path)}: {len(toolset.tools)} tool(s)"),
                  title_justify="left")
    for col in ("tool", "parameters (* required)", "handler", "policy"):
        table.add_column(col, overflow="fold")
    for t in toolset.tools:
        req = set(t.parameters.get("required") or [])
        params = ", ".join(f"{p}{'*' if p in req else ''}" for p in t.parameters.get("properties") or {})
        policy = [f"timeout {t.timeout:g}s", f"max {t.max_result_chars} chars"]
        if t.side_effects:
            policy.insert(0, "side effects")
        if t.approval == "always":
            policy.insert(0, "approval")
        table.add_row(Text(safe(t.name)), Text(safe(params)), t.handler_kind, ", ".join(policy))
    return table


