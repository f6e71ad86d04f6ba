"""``agentdbg tools``: list the tools and lint their definitions."""

from __future__ import annotations

import sys
from pathlib import Path

from agentdbg.checker.lint import lint
from agentdbg.errors import ExitStatus
from agentdbg.messages import utf8_json
from agentdbg.toolspec import load_tools


def run_tools(path: Path | None, *, json_out: bool, console) -> ExitStatus:
    toolset = load_tools(path, resolve=False, lenient=True)
    findings = lint(toolset)
    status = ExitStatus.FINDINGS if any(f.severity == "error" for f in findings) else ExitStatus.OK
    if json_out:
        doc = {"file": str(toolset.path), "ok": status == ExitStatus.OK,
               "tools": [t.openai_tool() | {"side_effects": t.side_effects, "approval": t.approval,
                                            "timeout": t.timeout, "handler": t.handler_kind}
                         for t in toolset.tools],
               "findings": [f.to_dict() for f in findings]}
        sys.stdout.write(utf8_json(doc) + "\n")
        return status
    _show(console, toolset, findings)
    return status


def _show(console, toolset, findings) -> None:
    from rich.text import Text

    from agentdbg.render.safe import safe
    from agentdbg.render.tools import tools_table

    console.print(tools_table(toolset))
    for f in findings:
        where = f"{toolset.path}:{f.line}" if f.line else str(toolset.path)
        style = "bold red" if f.severity == "error" else "bold yellow"
        mark = "✗" if f.severity == "error" else "!"
        console.print(Text.assemble((f"{mark} {f.severity} ", style),
                                    (f"{safe(f.tool)}: " if f.tool else "", "bold"),
                                    safe(f.message), (f"  ({safe(where)})", "dim")))
    errors = sum(f.severity == "error" for f in findings)
    console.print(f"{errors} error(s), {len(findings) - errors} warning(s)")
