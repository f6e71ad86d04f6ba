"""``agentdbg tools``: list the tools and lint them, reading the file only: nothing is imported
(handlers are linted from their source) and nothing is started. ``--connect`` starts the MCP
servers the file names to list and lint their tools too — a file agentdbg found by itself
only when it is trusted (``agentdbg.trust``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.checker.lint import lint
from agentdbg.drivers.launch import close_servers, open_servers
from agentdbg.errors import ExitStatus
from agentdbg.i18n import N_, Msg, tr
from agentdbg.messages import utf8_json
from agentdbg.toolspec import default_tools_path, load_tools

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.checker.lint_finding import LintFinding
    from agentdbg.toolspec import ToolSet, ToolSpec


def run_tools(path: Path | None, *, json_out: bool, console: Console, debug: bool = False,
              connect: bool = False, ask: Callable | None = None) -> ExitStatus:
    toolset = load_tools(path, resolve=False, lenient=True)
    notes = []
    if toolset.servers and not connect:
        notes.append(Msg(N_("{n} MCP server(s) not started: their tools are not listed "
                            "(--connect starts them)"), {"n": len(toolset.servers)}))
    elif toolset.servers and path is None and not _may_start(default_tools_path(), ask):
        notes.append(Msg(N_("{path} is not trusted: its MCP servers were not started; to trust "
                            "it: agentdbg trust {path}"), {"path": toolset.path}))
    else:
        connect = connect and bool(toolset.servers)
    try:
        if connect and not notes:
            open_servers(toolset, console, lenient=True, quiet=True, debug=debug)
        return _report(toolset, json_out, console, notes)
    finally:
        close_servers(toolset)


def _may_start(found: Path, ask: Callable | None) -> bool:
    """A found file's servers start when it is agentdbg's sample or trusted (or the person
    at the terminal says so, which records it)."""
    from agentdbg import trust

    if trust.standing(found) != "untrusted":
        return True
    if ask is not None and ask(found, trust.runs(found)):
        trust.record_trust(found)
        return True
    return False


def _report(toolset: ToolSet, json_out: bool, console: Console, notes: list[Msg]) -> ExitStatus:
    findings = lint(toolset)
    status = ExitStatus.FINDINGS if any(f.severity == "error" for f in findings) else ExitStatus.OK
    if json_out:
        doc = {"file": str(toolset.path), "ok": status == ExitStatus.OK,
               "tools": [_tool_json(t) for t in toolset.tools],
               "findings": [f.to_dict() for f in findings]}
        if toolset.mcp is not None:
            doc["mcp_servers"] = toolset.mcp.records()
        elif toolset.servers:
            doc["mcp_servers_not_started"] = [s.public_dict() for s in toolset.servers]
        if notes:
            doc["notes"] = [str(note) for note in notes]   # English, as all of --json
        sys.stdout.write(utf8_json(doc) + "\n")
        return status
    _show(console, toolset, findings)
    for note in notes:
        from rich.text import Text

        from agentdbg.i18n import _
        from agentdbg.render.safe import safe

        console.print(Text(_("note: {note}").format(note=safe(tr(note))), style="yellow"),
                      soft_wrap=True)
    return status


def _tool_json(t: ToolSpec) -> dict:
    out = t.openai_tool() | {"side_effects": t.side_effects, "approval": t.approval,
                             "timeout": t.timeout, "handler": t.handler_kind}
    if t.handler_kind == "mcp":
        out |= {"server": t.handler.server, "remote_name": t.handler.remote_name,
                "annotations": t.handler.annotations, "policy_reason": t.handler.policy_reason}
    return out


def _show(console: Console, toolset: ToolSet, findings: list[LintFinding]) -> None:
    from rich.text import Text

    from agentdbg.i18n import _, language
    from agentdbg.render.safe import safe
    from agentdbg.render.tools import render_servers, tools_table
    from agentdbg.render.view import severity_word
    from agentdbg.render.wrap import Paragraph

    console.print(tools_table(toolset))
    if toolset.mcp is not None:
        console.print(render_servers(toolset.mcp.records()), soft_wrap=True)
    for f in findings:
        where = f"{toolset.path}:{f.line}" if f.line else str(toolset.path)
        style = "bold red" if f.severity == "error" else "bold yellow"
        mark = "✗" if f.severity == "error" else "!"
        tool = _(" (tool {name})").format(name=safe(f.tool)) if f.tool else ""
        line = Text.assemble((f"{mark} {severity_word(f.severity)} {f.rule}", style),
                             (tool, "bold"), _(": {message}").format(
                                 message=safe(tr(f.shown if f.shown is not None else f.message))),
                             (f"  ({safe(where)})", "dim"))
        console.print(line if language() == "en" else Paragraph(line))   # Chinese: per character
    errors = sum(f.severity == "error" for f in findings)
    console.print(_("{errors} error(s), {warnings} warning(s)").format(
        errors=errors, warnings=len(findings) - errors))
