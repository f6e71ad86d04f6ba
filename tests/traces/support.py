"""What the import tests compare: how a conversation's calls and results pair."""

from __future__ import annotations

import json
from pathlib import Path

from agentdbg.messages import tool_calls_of
from agentdbg.transcript import load_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
CLAUDE = FIXTURES / "claude-code" / "0542af78-77da-41c1-9127-3d76f8fd6efd.jsonl"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
OTLP_JSON = FIXTURES / "otlp" / "agentdbg-export.jsonl"


def pairs(path: Path) -> list[tuple]:
    """Each call of the conversation's final messages with the result that answers it:
    (call id, tool name, arguments as the API reads them, result text)."""
    messages = load_transcript(path).final_messages()
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    out = []
    for m in messages:
        for c in tool_calls_of(m):
            fn = c.get("function") or {}
            args = fn.get("arguments")
            out.append((c.get("id"), fn.get("name"), json.loads(args) if isinstance(args, str) else args,
                        _text(results.get(c.get("id")))))
    return out


def _text(content) -> str | None:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content


def question(path: Path) -> str:
    """The text of the conversation's first user message."""
    first = next(m for m in load_transcript(path).header.initial_messages if m.get("role") == "user")
    return _text(first["content"]) or ""
