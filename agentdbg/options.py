"""What the user chose for a run: how it is shown and recorded, and what 'live' switches to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunOptions:
    """How a run is shown and recorded: one set of options for run, replay and forks."""

    model_desc: Any                        # str, or an i18n.Msg shown in the chosen language
    model: str
    provider_name: str
    base_url: str | None = None
    offline: bool = False
    question: str | None = None
    title: str = "agentdbg run"
    step: bool = False
    json_out: bool = False
    full: bool = False
    debug: bool = False
    save: Path | None = None
    keep_runs: int = 50
    redact: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    profile: str = "openai"
    explain: bool = False
    lang: str = "en"
    parent: dict | None = None
    present: bool = False                  # the presenter view: high contrast, one-line header
    lesson: Any = None                     # a repl.lesson.Lesson to run in step mode
    commands: list[str] = field(default_factory=list)   # -c: run at the start of step mode


@dataclass
class GoLive:
    """What a replay in step mode switches to on 'live' (built only then)."""

    provider: Callable[[], object]                     # the live model
    tools: Callable[[], object] | None = None          # loads the live tools
    tools_path: Path | None = None                     # said before loading
