"""The transcripts in a folder, watched by polling: which runs there are, and what changed.

A *run* is the transcripts one command wrote: the conversations of one proxy run
(``LABEL-conversation-N.jsonl``, grouped by ``LABEL``), or a single transcript of ``run``,
``replay`` or step mode. A scan lists the folder and stats each transcript; one that appeared,
grew or was rewritten gets a new version number, which is all the live page needs to know to
fetch it again. Only agentdbg transcripts count (their first line says so); a name is data,
never a path to follow: the page asks for runs and transcripts by the names a scan found.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

CONVERSATION = re.compile(r"^(?P<run>.+)-conversation-(?P<n>\d{1,9})(?:-\d{1,4})?\.jsonl$")
MAX_TRANSCRIPTS = 10_000      # a scan looks at no more than this many files


@dataclass
class Entry:
    name: str
    path: Path
    run: str                  # the run it belongs to
    number: int               # its conversation number in that run (0: a single transcript)
    size: int
    mtime_ns: int
    version: int


def run_of(name: str) -> tuple[str, int]:
    """The run a transcript's file name belongs to, and its conversation number."""
    m = CONVERSATION.match(name)
    if m is not None:
        return m.group("run"), int(m.group("n"))
    return name[:-len(".jsonl")] if name.endswith(".jsonl") else name, 0


class Folder:
    """A folder's transcripts (``only``: just the run of that label) and their versions."""

    def __init__(self, folder: Path, only: str | None = None):
        self.folder = Path(folder)
        self.only = only
        self.entries: dict[str, Entry] = {}
        self._not_ours: dict[str, int] = {}       # name -> size when it was not a transcript
        self._versions = itertools.count(1)

    def scan(self) -> bool:
        """Look again; True when a transcript appeared, changed or went away."""
        seen: dict[str, os.stat_result] = {}
        try:
            with os.scandir(self.folder) as listing:
                for entry in itertools.islice(listing, MAX_TRANSCRIPTS * 4):
                    if self._wanted(entry.name):
                        try:
                            if entry.is_file(follow_symlinks=False):
                                seen[entry.name] = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
        except OSError:
            seen = {}
        changed = False
        for name in [n for n in self.entries if n not in seen]:
            del self.entries[name]
            changed = True
        for name, st in list(seen.items())[:MAX_TRANSCRIPTS]:
            changed = self._update(name, st) or changed
        return changed

    def _wanted(self, name: str) -> bool:
        if not name.endswith(".jsonl") or name.startswith("."):
            return False
        return self.only is None or run_of(name)[0] == self.only

    def _update(self, name: str, st: os.stat_result) -> bool:
        known = self.entries.get(name)
        if known is not None:
            if (known.size, known.mtime_ns) == (st.st_size, st.st_mtime_ns):
                return False
            known.size, known.mtime_ns, known.version = st.st_size, st.st_mtime_ns, next(self._versions)
            return True
        if self._not_ours.get(name) == st.st_size:
            return False
        from agentdbg.transcript import is_transcript

        path = self.folder / name
        if not is_transcript(path):
            self._not_ours[name] = st.st_size   # looked at again only when it changes
            return False
        self._not_ours.pop(name, None)
        run, number = run_of(name)
        self.entries[name] = Entry(name, path, run, number, st.st_size, st.st_mtime_ns,
                                   next(self._versions))
        return True

    # -- reading ----------------------------------------------------------------------------
    def runs(self) -> dict[str, list[Entry]]:
        """Every run, its transcripts in conversation order; the newest run first."""
        grouped: dict[str, list[Entry]] = {}
        for e in self.entries.values():
            grouped.setdefault(e.run, []).append(e)
        for entries in grouped.values():
            entries.sort(key=lambda e: (e.number, e.name))
        return dict(sorted(grouped.items(), key=lambda kv: -max(e.mtime_ns for e in kv[1])))

    def run(self, key: str) -> list[Entry]:
        return sorted((e for e in self.entries.values() if e.run == key),
                      key=lambda e: (e.number, e.name))

    def entry(self, name: str) -> Entry | None:
        return self.entries.get(name)
