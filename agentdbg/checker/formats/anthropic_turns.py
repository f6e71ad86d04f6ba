"""Anthropic turns: consecutive messages of one role, as the Messages API combines them (the
format's own rules read them beside the one pairing analysis)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentdbg.conversation import Loc


@dataclass
class Turn:
    """Consecutive messages of one role, as the API combines them."""

    role: str
    msgs: list[int]
    blocks: list[tuple[Loc, dict]]   # (location, block); a string content is one text block at (i,)


def turns_of(messages: list) -> list[Turn]:
    """Consecutive same-role messages combined, as the API does; ``system`` messages inside
    ``messages`` are skipped (accepted, and they neither call nor answer)."""
    turns: list[Turn] = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "system":
            continue
        blocks = _content_blocks(i, m.get("content") if isinstance(m, dict) else None)
        if turns and role in ("user", "assistant") and turns[-1].role == role:
            turns[-1].msgs.append(i)
            turns[-1].blocks.extend(blocks)
        else:
            turns.append(Turn(role if isinstance(role, str) else "", [i], blocks))
    return turns


def _content_blocks(i: int, content: Any) -> list[tuple[Loc, dict]]:
    if isinstance(content, str):
        return [((i,), {"type": "text", "text": content})]
    if isinstance(content, list):
        return [((i, j), b if isinstance(b, dict) else {}) for j, b in enumerate(content)]
    return []
