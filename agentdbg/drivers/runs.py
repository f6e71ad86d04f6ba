"""``agentdbg runs``: the saved transcripts, newest first."""

from __future__ import annotations

from agentdbg.errors import InputError


def list_runs(console, limit: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from agentdbg.render.safe import safe
    from agentdbg.transcript import iter_transcript, runs_dir

    folder = runs_dir()
    files = [p for _, p in sorted(_dated(folder), reverse=True)]
    if not files:
        console.print(f"no saved runs in {safe(folder)}", markup=False, highlight=False)
        return
    table = Table(title=Text(f"{safe(folder)} (newest first)"), title_justify="left")
    for col in ("created", "stop", "turns", "question", "file"):
        table.add_column(col, overflow="fold")
    for path in files[:limit]:
        try:
            header: dict = {}
            stop, turns = "(running or cut)", 0
            for n, event in iter_transcript(path):
                if n == 1:
                    header = event
                elif event["type"] == "request":
                    turns += 1
                elif event["type"] == "stop":
                    stop = str(event.get("reason"))
            table.add_row(Text(safe(header.get("created", ""))), Text(safe(stop)), str(turns),
                          Text(safe(str(header.get("question") or ""))[:60]), Text(safe(path.name)))
        except InputError as exc:
            table.add_row("?", "unreadable", "", Text(safe(exc.message)[:60]), Text(safe(path.name)))
    console.print(table)


def _dated(folder):
    """(mtime, path) of each transcript there; a dangling symlink or a file another process
    removed meanwhile is skipped."""
    for path in folder.glob("*.jsonl"):
        try:
            yield path.stat().st_mtime, path
        except OSError:
            continue
