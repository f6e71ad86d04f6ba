"""The run as one JSON document: what ``run --json`` prints and ``run --save`` writes."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentdbg import __version__
from agentdbg.messages import utf8_json

# the conversation model is not needed to write a run (its dataclasses: 20 ms of a replay's start)
if TYPE_CHECKING:
    from agentdbg.conversation import JSON, JsonObject
    from agentdbg.toolspec import ToolSet

FORMAT = "agentdbg-run"
FORMAT_VERSION = 1


class _Record(Protocol):
    def to_dict(self) -> JsonObject: ...


class _Reason(Protocol):
    @property
    def value(self) -> str: ...


class Finished(Protocol):
    """What ``run_document`` reads of a session (``engine.Session``, a layer above); ``marks``,
    ``actions`` and ``cut_turns`` are read when the session has them."""

    @property
    def toolset(self) -> ToolSet: ...
    @property
    def config(self) -> object: ...
    @property
    def messages(self) -> Sequence[JSON]: ...
    @property
    def stop_reason(self) -> _Reason | None: ...
    @property
    def stop_detail(self) -> str: ...
    @property
    def usage(self) -> JsonObject: ...
    @property
    def turns(self) -> Sequence[_Record]: ...
    @property
    def outcomes(self) -> Sequence[_Record]: ...
    def answer(self) -> str | None: ...
    def elapsed(self) -> float: ...


def run_document(session: Finished, *, model: str, base_url: str | None = None,
                 created: float | None = None) -> JsonObject:
    """Everything needed to read the run back: messages, stop, usage, per-turn records."""
    tools: list[JSON] = list(session.toolset.openai_tools())
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "agentdbg_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(created or time.time())),
        "model": model,
        "base_url": base_url,
        "tools_file": str(session.toolset.path),
        "tools": tools,
        "options": {k: v for k, v in session.config.__dict__.items()},
        "messages": list(session.messages),
        "stop_reason": session.stop_reason.value if session.stop_reason else None,
        "stop_detail": session.stop_detail,
        "answer": session.answer(),
        "usage": session.usage,
        "turns": [t.to_dict() for t in sorted([*session.turns, *getattr(session, "cut_turns", [])],
                                              key=lambda t: getattr(t, "request", 0))],
        "tool_calls": [o.to_dict() for o in session.outcomes],
        "marks": {str(k): sorted(v) for k, v in getattr(session, "marks", {}).items()},
        "actions": getattr(session, "actions", []),
        "elapsed_ms": round(session.elapsed() * 1000, 3),
    }


def write_json(path: str | Path, doc: JsonObject) -> None:
    """Write atomically: a crash mid-write never leaves a half file in place of a good one."""
    import tempfile

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(utf8_json(doc, indent=2))
            fh.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
