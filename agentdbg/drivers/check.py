"""``agentdbg check``: findings as a view (or one JSON document) and an exit status.

Each document is judged in its own wire format (Chat Completions, the Responses API, the
Anthropic Messages API). A transcript is judged by the requests it recorded: each request is
checked, a finding is reported once (at the first request that shows it), and the model's
final reply is not a request, so a run that legitimately ends on a call is clean.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdbg import schemas
from agentdbg.checker import has_errors, summary
from agentdbg.checker.inputs import load_check_input
from agentdbg.checker.judge import Judged, judge_all
from agentdbg.checker.profiles import get_profile
from agentdbg.errors import ExitStatus
from agentdbg.i18n import N_, _
from agentdbg.messages import utf8_json

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from agentdbg.checker.findings import Finding

SKIPPED = N_("tool checks skipped: the input sends no tool definitions, so calls were not checked "
             "against names and schemas (pass --tools tools.yaml)")


def _note(note: str) -> str:
    """A note in the chosen language: a skipped check's reason read back into its template
    (the tool's name as recorded); another note through the catalog."""
    return schemas.skip_text(note)


def run_check(file: str, tools: Path | None, profile: str, *, json_out: bool, full: bool,
              console_factory: Callable[[], Console], fmt: str | None = None,
              lang: str | None = None) -> ExitStatus:
    """Judge ``file``; the view (not the JSON document) in ``lang``."""
    from agentdbg import i18n

    get_profile(profile)
    i18n.use(lang)
    definitions = None
    if tools is not None:
        from agentdbg.toolspec import load_tools

        definitions = load_tools(tools, resolve=False).openai_tools()
    with collector_paused():
        items = load_check_input(file, fmt)
        with schemas.noting_skips() as skips:
            results = judge_all(items, definitions, profile)
    every = [f for r in results for f in r.findings]
    notes = [SKIPPED] if any(r.skipped_tools for r in results) else []
    notes += skips.take()
    if json_out:
        doc: dict[str, Any] = {"ok": not has_errors(every),
                               "findings": [_as_dict(r, f) for r in results for f in r.findings]}
        if notes:
            doc["notes"] = notes
        sys.stdout.write(utf8_json(doc) + "\n")
    else:
        _show(console_factory(), results, profile, full, notes)
    return ExitStatus.FINDINGS if has_errors(every) else ExitStatus.OK


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the input is parsed and judged.

    A 100k-message history is a million objects holding no reference cycles, and judging it
    allocates as many again; every full collection walks all of them (profiled at 100k
    messages: 1.0 s of the collector's time in a 1.1 s check). A parse makes no cycles and the
    judging next to none, so what waits for the collector is bounded by the input, and it
    runs again as soon as the check is done."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # what was allocated meanwhile joins the oldest generation unscanned (moved there
        # as a list, via the permanent one); re-enabled as it was, the collector would walk
        # all of it at its next young collection (0.25 s at 100k messages)
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def _as_dict(result: Judged, finding: Finding) -> dict:
    d = finding.to_dict()
    if result.item.turn is not None:
        d["request"] = result.item.turn
    return d


# -- the view -----------------------------------------------------------------------------

def _show(console: Console, results: list[Judged], profile: str, full: bool, notes: list[str]) -> None:
    from rich.rule import Rule
    from rich.text import Text

    transcript = bool(results) and results[0].item.turn is not None
    shown = 0
    for r in results:
        if transcript and not r.findings:
            continue
        if r.item.line is not None:
            console.print(Rule(_("line {line}: {summary}").format(line=r.item.line,
                                                                   summary=summary(r.findings)),
                               align="left", style="dim"))
        elif transcript:
            console.print(Rule(_("request {n}: {summary}").format(n=r.item.turn,
                                                                  summary=summary(r.findings)),
                               align="left", style="dim"))
        if full:   # the request's tools, with their definitions
            console.print(_tools(r))
        console.print(_view(r, full))
        shown += 1
    if transcript and not shown:
        console.print(_final_view(results[-1], full))
    every = [f for r in results for f in r.findings]
    for note in notes:
        console.print(Text(_("note: {note}").format(note=_note(note)), style="yellow"), soft_wrap=True)
    style = "bold red" if has_errors(every) else "bold yellow" if every else "bold green"
    mark = "✗" if has_errors(every) else "!" if every else "✓"
    said = _("{summary} ({n} recorded request(s), profile {profile})") if transcript else \
        _("{summary} (profile {profile})")
    console.print(Text(f"{mark} " + said.format(summary=summary(every), n=len(results), profile=profile),
                       style=style))


def _tools(r: Judged) -> RenderableType:
    from agentdbg.render.view import render_tools
    from agentdbg.wire import codec

    tools = r.item.request.tools if isinstance(r.item.request.tools, list) else None
    body = r.item.native if r.item.native is not None else {"tools": tools}
    body = body if isinstance(body, dict) else {}
    return render_tools([d.to_dict() for d in codec.get(r.item.format).tools(body)], full=True)


def _view(r: Judged, full: bool) -> RenderableType:
    from agentdbg.render.view import render_conversation
    from agentdbg.wire import codec

    wire = codec.get(r.item.format)
    if wire.chat_native:
        return render_conversation(wire, r.item.request.messages, findings=r.findings, full=full)
    body = r.item.native if isinstance(r.item.native, dict) else {wire.key: r.item.native}
    return render_conversation(wire, body, r.pairing, findings=r.findings, full=full,
                               notes=r.notes)


def _final_view(r: Judged, full: bool) -> RenderableType:
    """A clean transcript: how it ended (its last reply's calls, if any, shown as pending)."""
    from agentdbg.wire import codec

    if not codec.get(r.item.format).chat_native:
        return _view(r, full)
    from agentdbg.messages import tool_calls_of
    from agentdbg.render.view import render_messages

    final = r.item.final or r.item.request.messages
    ends_on_call = bool(final) and isinstance(final[-1], dict) and final[-1].get("role") == \
        "assistant" and bool(tool_calls_of(final[-1]))
    return render_messages(final, full=full, in_progress=ends_on_call)
