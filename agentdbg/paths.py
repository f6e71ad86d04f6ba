"""Where agentdbg keeps its own files (REPL history, saved runs)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$AGENTDBG_HOME``, else ``$XDG_DATA_HOME/agentdbg``, else ``~/.local/share/agentdbg``."""
    home = os.environ.get("AGENTDBG_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "agentdbg"


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """``a`` and ``b`` name one file: the same path spelt otherwise, a symlink, a hard link.
    A path to nothing yet is the same only as itself (resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one names no file yet (or one that cannot be looked at)
        return Path(a).resolve() == Path(b).resolve()
