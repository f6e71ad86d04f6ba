"""Writing a transcript: one flushed JSON line per event, a file no other run can share.

A file is created exclusively (two runs never write the same file); a ``--save`` path
given twice at once is refused with a clear error, not shared. Every file is held with a
lock while it is written, so retention never removes it. The proxy writes many
conversations at once, so its writers open the file for each event instead of holding a
descriptor per conversation; one ``Claim`` (``transcript.runs``) holds them all.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from agentdbg import __version__
from agentdbg.errors import InputError
from agentdbg.messages import utf8_json
from agentdbg.transcript.redact import Redactor

FORMAT = "agentdbg-transcript"
VERSION = 1


def tools_hash(tools: list) -> str:
    text = json.dumps(tools, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def create_exclusive(path: Path) -> IO[str]:
    """A new file at ``path``; ``FileExistsError`` when one is there already.

    The file is held with an exclusive lock for as long as it is open, so retention (see
    ``finished_transcript``) leaves it alone however it ends, even after a stop event: a step
    session at its prompt may rewind and write more."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    if sys.platform != "win32":
        import fcntl

        # new, so no writer holds it (retention's probe lets go at once); a filesystem
        # without locks refuses, and the file is then written unlocked
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
    return os.fdopen(fd, "w", encoding="utf-8")


def open_locked(path: Path) -> IO[str]:
    """``path`` for writing, held with an exclusive lock for as long as it is open.

    A second agentdbg writing the same path at the same time gets a clear error instead
    of interleaving its lines with ours."""
    import stat

    from agentdbg.transcript.runs import being_written

    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    regular = stat.S_ISREG(os.fstat(fd).st_mode)  # not /dev/null, a pipe or a terminal
    if regular and sys.platform != "win32":
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(f"{path}: another agentdbg is writing this transcript right now; "
                             "choose another --save path") from None
    # the proxy holds its transcripts by a claim, not a lock (ours is held on this file now)
    busy = being_written(path, locks=False) if regular else None
    if busy is not None:
        os.close(fd)
        raise InputError(f"{path}: {busy}; choose another --save path")
    if regular:
        os.ftruncate(fd, 0)
    return os.fdopen(fd, "w", encoding="utf-8")


class Replaced(OSError):
    """The transcript's file is no longer the one this writer created."""


def append_to(path: Path, data: bytes) -> None:
    """Append ``data`` to the file this writer created at ``path`` (the proxy opens it for each
    event): never through a symlink planted in its place, never to a FIFO, a device or a file
    with other names (a hard link), never re-created once removed."""
    import stat

    flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise Replaced(exc.errno, "it was replaced by a symlink; agentdbg does not write "
                                      "through one") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise Replaced(0, "it was replaced by something else than the file agentdbg created "
                              "(a hard link, a device or a pipe); agentdbg does not write to it")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class TranscriptWriter:
    """A session observer appending one flushed JSON line per event.

    ``fh``: an open file to write to (see ``create_exclusive``/``open_locked``); without
    one the path is created exclusively. ``keep_open=False`` closes the file between
    events (the proxy: one transcript per conversation, any number of them)."""

    def __init__(self, path: str | os.PathLike, header: dict, redactor: Redactor | None = None,
                 *, fh: IO[str] | None = None, keep_open: bool = True):
        self.path = Path(path)
        self.redact = redactor or Redactor()
        self.keep_open = keep_open
        if fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = create_exclusive(self.path)
        self.fh: IO[str] | None = fh
        self.seq = 0
        self._last: list = []
        self.error: OSError | None = None
        self._write({"type": "header", "format": FORMAT, "version": VERSION,
                     "agentdbg_version": __version__,
                     "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **header})
        if not keep_open:
            self._close_fh()

    def __call__(self, kind: str, data: dict) -> None:
        if kind == "request":
            data = dict(data)
            current = list(data.pop("messages"))
            prefix = 0
            for a, b in zip(self._last, current):
                if a is not b and a != b:  # the engine keeps objects; a proxy re-parses them
                    break
                prefix += 1
            data["prefix"], data["append"] = prefix, current[prefix:]
            self._last = current
        self._write({"type": kind, **data})

    def _write(self, event: dict) -> None:
        if self.error is not None:
            return
        event = {"seq": self.seq, **event} if event.get("type") != "header" else event
        self.seq += 1
        line = utf8_json(self.redact(event), default=str) + "\n"
        try:
            if self.fh is None:
                if not self.keep_open and event.get("type") != "header":
                    append_to(self.path, line.encode("utf-8"))
                return
            self.fh.write(line)
            self.fh.flush()
        except OSError as exc:  # e.g. a full disk: keep running, report it once
            self.error = exc

    def copy_to(self, target: Path) -> None:
        """A copy of the transcript so far (step mode's 'save')."""
        if self.fh is not None:
            self.fh.flush()
        shutil.copyfile(self.path, target)

    def _close_fh(self) -> None:
        fh, self.fh = self.fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError as exc:
                self.error = exc

    def close(self) -> None:
        self._close_fh()


def start_transcript(session, path: Path | None, *, model: str, provider: str,
                     base_url: str | None, question: str | None, redact: Iterable[str] = (),
                     secrets: Iterable[str] = (), parent: dict | None = None) -> TranscriptWriter:
    """Attach a writer to ``session``: the header now, every event as it happens.

    ``path`` None: a new file in the runs folder, named after the question."""
    from agentdbg.transcript.redact import safe_url, url_secrets
    from agentdbg.transcript.runs import create_run_file

    tools = session.toolset.openai_tools()
    header = {
        "model": model, "provider": provider, "base_url": safe_url(base_url), "question": question,
        "tools": tools, "tools_hash": tools_hash(tools), "tools_file": str(session.toolset.path),
        "options": {k: v for k, v in session.config.__dict__.items()},
        "initial_messages": list(session.messages), "parent": parent,
        "api": getattr(session.provider, "wire", "chat"),  # the wire format the run spoke
        "api_params": getattr(session.provider, "wire_params", {}),  # what it adds to each body
    }
    servers = getattr(session.toolset, "mcp", None)
    if servers is not None:  # each MCP server: how it was started (no secrets), who answered, its tools
        header["mcp_servers"] = servers.records()
    if path is None:
        path, fh = create_run_file(question or "run")
    else:
        path = Path(path)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
        fh = open_locked(path)
    redactor = Redactor(list(redact), [*secrets, *url_secrets(base_url)])
    writer = TranscriptWriter(path, header, redactor, fh=fh)
    session.observers.append(writer)
    return writer
