"""``agentdbg import``: other tools' records of runs written as agentdbg transcripts.

A FILE is read as what its content is (a Claude Code session, a Codex CLI rollout, OTLP
traces); a DIR is searched for such files (a Claude Code session's subagent files, and the
rollouts of the agents a Codex rollout spawned, are read with their session, not on their
own). Each conversation becomes one transcript in the output folder (default: the runs
folder); what a source does not record is said once per file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.errors import InputError
from agentdbg.i18n import N_, Msg

if TYPE_CHECKING:
    from agentdbg.transcript.imported import Written

MAX_FILES = 10_000     # files looked at under a folder


@dataclass
class Imported:
    path: Path
    source: str
    written: list[Written] = field(default_factory=list)


def sources_under(path: Path) -> list[tuple[Path, str]]:
    """The files to import: ``path`` itself, or what a folder holds (by content)."""
    from agentdbg.transcript import foreign

    if not path.exists():
        raise InputError(Msg(N_("{path}: no such file or folder"), {"path": path}))
    if not path.is_dir():
        source = foreign(path)
        if source is None:
            raise InputError(Msg(N_("{path}: not a file agentdbg can import (a Claude Code "
                                    "session, a Codex CLI rollout or OpenTelemetry traces in OTLP "
                                    "JSON or protobuf)"), {"path": path}))
        return [(path, source)]
    found: list[tuple[Path, str]] = []
    seen = 0
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            seen += 1
            if seen > MAX_FILES:
                raise InputError(Msg(N_("{path}: more than {limit} files; import a smaller folder"),
                                     {"path": path, "limit": MAX_FILES}))
            file = Path(root) / name
            if name.endswith(".meta.json") or a_sessions_subagent(file) or a_spawned_rollout(file):
                continue
            source = foreign(file)
            if source is not None:
                found.append((file, source))
    if not found:
        raise InputError(Msg(N_("{path}: holds no file agentdbg can import (Claude Code sessions, "
                                "Codex CLI rollouts, OpenTelemetry traces)"), {"path": path}))
    return found


def a_sessions_subagent(file: Path) -> bool:
    """``<session>/subagents/agent-*.jsonl`` beside ``<session>.jsonl``: read with its session."""
    return file.parent.name == "subagents" and \
        file.parent.parent.with_suffix(".jsonl").is_file()


def a_spawned_rollout(file: Path) -> bool:
    """A Codex agent's rollout beside its parent's: read with its parent's."""
    from agentdbg.traces.codex import read_with_parent

    return file.name.startswith("rollout-") and file.suffix == ".jsonl" and read_with_parent(file)


def import_all(path: Path, out: Path | None) -> list[Imported]:
    from agentdbg.transcript.imported import import_file
    from agentdbg.transcript.runs import runs_dir

    folder = out or runs_dir()
    done = []
    for file, source in sources_under(path):
        done.append(Imported(file, source, import_file(file, folder)))
    return done


def summary(done: list[Imported]) -> list[str]:
    """What the import says: per file, each conversation written, and what was not recorded."""
    lines = []
    for item in done:
        lines.append(f"{item.path} ({_names[item.source]}): {len(item.written)} conversation"
                     f"{'s' if len(item.written) != 1 else ''}")
        said: set[str] = set()
        for w in item.written:
            agent = f" · {w.thread.agent}" if w.thread.agent else ""
            parent = ""
            if w.thread.parent is not None:
                call = f", call {w.thread.parent.call_id}" if w.thread.parent.call_id else ""
                parent = f" · started by conversation {_number_of(item, w.thread.parent.thread)}{call}"
            lines.append(f"  conversation {w.number}{agent}{parent}: {w.requests} request"
                         f"{'s' if w.requests != 1 else ''}  {w.path}")
            note = w.thread.missing_text()
            if note and note not in said:
                said.add(note)
        lines.extend(f"  note: {n}" for n in sorted(said))
    return lines


_names = {"claude-code": "a Claude Code session", "codex": "a Codex CLI rollout",
          "otlp": "OpenTelemetry traces"}


def _number_of(item: Imported, key: str) -> str:
    return next((str(w.number) for w in item.written if w.thread.key == key), "?")
