"""The tools as a table (name, parameters, handler, policy), the MCP servers behind them, and
the JSON-RPC exchange of one MCP call."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agentdbg.render.safe import safe

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table

    from agentdbg.toolspec import ToolSet

HINTS = (("readOnlyHint", "read-only"), ("destructiveHint", "destructive"),
         ("idempotentHint", "idempotent"), ("openWorldHint", "open-world"))


def tools_table(toolset: ToolSet) -> Table:
    from rich.table import Table
    from rich.text import Text

    from agentdbg.i18n import _

    table = Table(title=Text(_("{path}: {n} tool(s)").format(path=safe(toolset.path),
                                                             n=len(toolset.tools))),
                  title_justify="left")
    for col in (_("tool"), _("parameters (* required)"), _("handler"), _("policy")):
        table.add_column(col, overflow="fold")
    for t in toolset.tools:
        required, props = t.parameters.get("required"), t.parameters.get("properties")
        req = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
        params = ", ".join(f"{p}{'*' if p in req else ''}" for p in   # a broken schema: none
                           (props if isinstance(props, dict) else {}))
        policy = [_("timeout {seconds}s").format(seconds=f"{t.timeout:g}"),
                  _("max {n} chars").format(n=t.max_result_chars)]
        if t.side_effects:
            policy.insert(0, _("side effects"))
        if t.approval == "always":
            policy.insert(0, _("approval"))
        handler = t.handler_kind
        if t.handler_kind == "mcp":  # the annotations, and what they decided
            handler = f"mcp {t.handler.server}"
            decided = ", ".join(policy[:-2]) or "parallel"
            policy = [f"{annotations_text(t.handler.annotations)} → {decided}", *policy[-2:]]
        table.add_row(Text(safe(t.name)), Text(safe(params)), Text(safe(handler)),
                      Text(safe(", ".join(policy))))
    return table


def annotations_text(annotations: dict) -> str:
    """The hints that say something (``read-only, idempotent``; ``not read-only,
    destructive``), from the wire names; ``no annotations`` when none does."""
    said = []
    for key, word in HINTS:
        value = annotations.get(key)
        if key == "destructiveHint" and annotations.get("readOnlyHint") is True:
            continue  # a read-only tool's destructiveHint means nothing (the spec says so)
        if value is True:
            said.append(word)
        elif value is False and key in ("readOnlyHint", "destructiveHint"):
            said.append(f"not {word}")
    return ", ".join(said) or "no annotations"


def render_servers(records: list[dict]) -> Group:
    """One line per MCP server: who answered, how it was started, which tools are used."""
    from rich.console import Group
    from rich.text import Text

    lines = []
    for r in records:
        info = r.get("server_info")
        info = info if isinstance(info, dict) else {}
        who = " ".join(str(info[k]) for k in ("name", "version") if info.get(k)) or "unnamed server"
        how = r.get("url") if r.get("transport") == "http" else \
            " ".join(str(a) for a in [r.get("command"), *(r.get("args") or [])])
        used, listed = r.get("used") or [], r.get("tools") or []
        lines.append(Text.assemble(("MCP server ", "bold"), (safe(repr(r.get("name"))), "bold"),
                                   f": {safe(who)} over {safe(r.get('transport'))} ({safe(how)}); "
                                   f"{len(used)} of {len(listed)} tool(s) used: "
                                   f"{safe(', '.join(used)) or 'none'}"))
    return Group(*lines)


def render_exchange(call_id: str, name: str, mcp: dict, *, pretty: bool = False) -> Group:
    """The JSON-RPC messages of one MCP call, oldest first (→ sent to the server, ← received)."""
    from rich.console import Group
    from rich.text import Text

    exchange = mcp.get("exchange") or []
    lines = [Text.assemble(("JSON-RPC exchange of ", "bold"), (safe(f"{call_id} {name}"), "bold"),
                           f" (MCP server {safe(repr(mcp.get('server')))}, tool "
                           f"{safe(repr(mcp.get('tool')))}): {len(exchange)} message(s)")]
    for entry in exchange:
        arrow = "→" if entry.get("dir") == "send" else "←"
        body = json.dumps(entry.get("message"), ensure_ascii=False, indent=2 if pretty else None)
        lines.append(Text.assemble((f"  {arrow} {float(entry.get('t') or 0):9.3f}s ", "dim"), safe(body)))
    if mcp.get("dropped"):
        lines.append(Text(f"  … {mcp['dropped']} more message(s) not kept", style="dim"))
    return Group(*lines)
