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
