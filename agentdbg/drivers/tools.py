"""``agentdbg tools``: list the tools (also those of the MCP servers the file names) and lint them."""

from __future__ import annotations

import sys
from pathlib import Path

from agentdbg.checker.lint import lint
from agentdbg.drivers.launch import close_servers, open_servers
from agentdbg.errors import ExitStatus
from agentdbg.messages import utf8_json
from agentdbg.toolspec import load_tools


def run_tools(path: Path | None, *, json_out: bool, console, debug: bool = False) -> ExitStatus:
    toolset = load_tools(path, resolve=False, lenient=True)
    try:
        open_servers(toolset, console, lenient=True, quiet=True, debug=debug)
        return _report(toolset, json_out, console)
    finally:
        close_servers(toolset)


def _report(toolset, json_out: bool, console) -> ExitStatus:
    findings = lint(toolset)
    status = ExitStatus.FINDINGS if any(f.severity == "error" for f in findings) else ExitStatus.OK
    if json_out:
        doc = {"file": str(toolset.path), "ok": status == ExitStatus.OK,
               "tools": [_tool_json(t) for t in toolset.tools],
               "findings": [f.to_dict() for f in findings]}
        if toolset.mcp is not None:
            doc["mcp_servers"] = toolset.mcp.records()
        sys.stdout.write(utf8_json(doc) + "\n")
        return status
    _show(console, toolset, findings)
    return status


def _tool_json(t) -> dict:
    out = t.openai_tool() | {"side_effects": t.side_effects, "approval": t.approval,
                             "timeout": t.timeout, "handler": t.handler_kind}
    if t.handler_kind == "mcp":
        out |= {"server": t.handler.server, "remote_name": t.handler.remote_name,
                "annotations": t.handler.annotations, "policy_reason": t.handler.policy_reason}
    return out


def _show(console, toolset, findings) -> None:
    from rich.text import Text

    from agentdbg.render.safe import safe
    from agentdbg.render.tools import render_servers, tools_table

    console.print(tools_table(toolset))
    if toolset.mcp is not None:
        console.print(render_servers(toolset.mcp.records()), soft_wrap=True)
    for f in findings:
        where = f"{toolset.path}:{f.line}" if f.line else str(toolset.path)
        style = "bold red" if f.severity == "error" else "bold yellow"
        mark = "✗" if f.severity == "error" else "!"
        console.print(Text.assemble((f"{mark} {f.severity} {f.rule}", style),
                                    (f" (tool {safe(f.tool)})" if f.tool else "", "bold"),
                                    f": {safe(f.message)}", (f"  ({safe(where)})", "dim")))
    errors = sum(f.severity == "error" for f in findings)
    console.print(f"{errors} error(s), {len(findings) - errors} warning(s)")
