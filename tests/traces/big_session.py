"""A long Claude Code session file, generated in the shape Claude Code writes (user and assistant
entries chained by parentUuid, a Bash call and its output each turn, a compaction every few
turns as Claude Code compacts a conversation before it outgrows the model's context): what the
memory test and bench/import_memory.py import."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

OUTPUT = 4096       # bytes of shell output per tool result
TURNS = 150         # turns between compactions (~0.6 MB of results: a full context)
SESSION = "5e55e55e-0000-4000-8000-000000000001"


def entry(kind: str, parent: str | None, message: dict | None = None, **extra) -> tuple[str, str]:
    uid = str(uuid.uuid4())
    value = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work",
             "sessionId": SESSION, "version": "2.1.332", "type": kind, "uuid": uid,
             "timestamp": "2026-12-01T12:00:00.000Z", **extra}
    if message is not None:
        value["message"] = message
    return uid, json.dumps(value) + "\n"


def generate(path: Path, megabytes: float, *, turns: int = TURNS, output: int = OUTPUT) -> int:
    """Write a session of about ``megabytes`` MB, compacted every ``turns`` turns, each tool
    result ``output`` bytes; returns its number of lines."""
    target, lines, turn = int(megabytes * (1 << 20)), 0, 0
    out = "x" * (output - 40)
    with open(path, "w", encoding="utf-8") as fh:
        parent, line = entry("user", None, {"role": "user", "content": "list the files, again and again"})
        fh.write(line)
        while fh.tell() < target:
            turn += 1
            call = f"toolu_{turn:08d}"
            parent, line = entry("assistant", parent, {
                "id": f"msg_{turn:08d}", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                "content": [{"type": "tool_use", "id": call, "name": "Bash",
                             "input": {"command": f"ls -la /work/{turn}", "description": "List files"}}],
                "stop_reason": "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 20}})
            fh.write(line)
            parent, line = entry("user", parent, {"role": "user", "content": [
                {"tool_use_id": call, "type": "tool_result", "content": f"turn {turn}\n{out}", "is_error": False}]})
            fh.write(line)
            lines += 2
            if turn % turns == 0:
                parent, line = entry("system", parent, subtype="compact_boundary", content="Conversation compacted")
                fh.write(line)
                parent, line = entry("user", parent, {"role": "user", "content": f"Summary of turns up to {turn}."},
                                     isCompactSummary=True)
                fh.write(line)
                lines += 2
    return lines + 1
