"""``agentdbg check``: findings as a view (or one JSON document) and an exit status."""

from __future__ import annotations

import sys
from pathlib import Path

from agentdbg.checker import check, has_errors, summary
from agentdbg.checker.inputs import load_check_input
from agentdbg.checker.profiles import get_profile
from agentdbg.checker.request import MISSING
from agentdbg.errors import ExitStatus
from agentdbg.messages import utf8_json


def run_check(file: str, tools: Path | None, profile: str, *, json_out: bool, full: bool,
              console_factory) -> ExitStatus:
    get_profile(profile)
    items = load_check_input(file)
    definitions = None
    if tools is not None:
        from agentdbg.toolspec import load_tools

        definitions = load_tools(tools, resolve=False).openai_tools()
    results = []
    for item in items:
        if definitions is not None and item.request.tools is MISSING:
            item.request.tools = definitions
        findings = check(item.request, profile)
        for f in findings:
            f.line = item.line
        results.append((item, findings))
    every = [f for _, fs in results for f in fs]
    if json_out:
        doc = {"ok": not has_errors(every), "findings": [f.to_dict() for f in every]}
        sys.stdout.write(utf8_json(doc) + "\n")
    else:
        _show(console_factory(), results, profile, full)
    return ExitStatus.FINDINGS if has_errors(every) else ExitStatus.OK


def _show(console, results, profile: str, full: bool) -> None:
    from rich.rule import Rule
    from rich.text import Text

    from agentdbg.render.view import render_messages

    for item, findings in results:
        if item.line is not None:
            console.print(Rule(f"line {item.line}: {summary(findings)}", align="left", style="dim"))
        console.print(render_messages(item.request.messages, findings=findings, full=full))
    every = [f for _, fs in results for f in fs]
    style = "bold red" if has_errors(every) else "bold yellow" if every else "bold green"
    mark = "✗" if has_errors(every) else "!" if every else "✓"
    console.print(Text(f"{mark} {summary(every)} (profile {profile})", style=style))
