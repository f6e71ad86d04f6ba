"""``agentdbg runs``: the saved transcripts, newest first, numbered as ``resolve_run`` reads them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.render.runs import RunRow


def list_runs(console: Console, limit: int, json_out: bool = False) -> None:
    import sys
    from dataclasses import asdict

    from agentdbg.messages import utf8_json
    from agentdbg.render.runs import render_runs
    from agentdbg.transcript.runs import run_name, runs_dir, saved_runs

    paths = saved_runs()
    rows = [run_row(n, path, run_name(path)) for n, path in enumerate(paths[:limit], start=1)]
    _nest(rows, paths[:limit])
    if json_out:   # one document: what the listing shows, each run with its path
        runs = [{k: v for k, v in asdict(r).items() if k != "shown_error"} | {"path": str(p)}
                for r, p in zip(rows, paths)]
        sys.stdout.write(utf8_json({"folder": str(runs_dir()), "runs": runs,
                                    "more": max(0, len(paths) - limit)}, indent=2) + "\n")
        return
    for line in render_runs(rows, str(runs_dir()), console.width, more=max(0, len(paths) - limit)):
        console.print(line, soft_wrap=True)


def run_row(number: int, path: Path, name: str) -> RunRow:
    """What the listing shows of one transcript (read to the end: turns and stop)."""
    from agentdbg.render.runs import RunRow
    from agentdbg.transcript import read_transcript
    from agentdbg.transcript.events import AgentNamed, Request, Stop

    row = RunRow(number, name)
    try:
        turns = 0
        header, events = read_transcript(path)
        row.created, row.question = header.created, header.question
        row.kind = "replay" if header.provider == "replay" else "fork" if header.parent else ""
        row.agent, row.conversation = header.agent, header.conversation
        row.started = header.started_by
        for _, event in events:
            if isinstance(event, Request):
                turns += 1
            elif isinstance(event, Stop):
                row.stop = event.reason
            elif isinstance(event, AgentNamed):
                row.agent = event.name
        row.turns = turns
    except InputError as exc:
        from agentdbg.i18n import _, recorded, tr

        row.error = _short_error(exc.message, path)
        said = tr(exc.shown) if not isinstance(exc.shown, str) else recorded(exc.shown)
        line, problem = _located(said, path)
        row.shown_error = problem if line is None else _("line {line}: {problem}").format(
            line=line, problem=problem)
    return row


def _nest(rows: list[RunRow], paths: list[Path]) -> None:
    """Each conversation of a multi-agent run under the one whose call started it: its depth
    and how it started (``handoff from #3``)."""
    from agentdbg.transcript.tree import run_of

    for k, row in enumerate(rows):
        if row.started is None:
            continue
        run = run_of(paths[k])
        for j in range(k - 1, -1, -1):
            other = run_of(paths[j])
            if other is None or run is None or other[0] != run[0]:
                break
            if rows[j].conversation == row.started.conversation:
                row.depth = rows[j].depth + 1
                row.parent = rows[j].number
                break


def _short_error(message: str, path: Path) -> str:
    """``/long/path/x.jsonl:1: not an agentdbg transcript`` as ``line 1: not an …``."""
    line, problem = _located(message, path)
    return problem if line is None else f"line {line}: {problem}"


def _located(message: str, path: Path) -> tuple[str | None, str]:
    """(the line, what is wrong) of an error about ``path`` (its ``:`` or a Chinese ``：``)."""
    rest = message[len(str(path)):] if message.startswith(str(path)) else message
    m = re.match(r":(\d+)(?::\d+)?(?:: |：)(.*)", rest, re.S)
    return (m.group(1), m.group(2)) if m else (None, rest.lstrip(": ："))
