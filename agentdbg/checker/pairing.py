"""Which tool message answers which tool call. Shared by the checker and the view.

A *tool block* is the run of ``role: "tool"`` messages directly after an
assistant message with a non-empty ``tool_calls``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

from agentdbg.messages import tool_calls_of


@dataclass
class Pairing:
    labels: dict[str, str] = field(default_factory=dict)             # call id -> "A", "B" ...
    answer_of: dict[tuple[int, int], int] = field(default_factory=dict)  # (asst, pos) -> tool idx
    call_of: dict[int, tuple[int, int]] = field(default_factory=dict)    # tool idx -> (asst, pos)
    # tool idx -> ok | orphan | mismatch | duplicate | missing_id
    status: dict[int, str] = field(default_factory=dict)
    block_of: dict[int, int] = field(default_factory=dict)  # tool idx -> its assistant idx

    def label(self, call_id: object) -> str | None:
        return self.labels.get(call_id) if isinstance(call_id, str) else None


def _label(n: int) -> str:
    letters = string.ascii_uppercase
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = letters[r] + out
    return out


def pair(messages: list) -> Pairing:
    p = Pairing()
    i = 0
    while i < len(messages):
        calls = tool_calls_of(messages[i])
        if not calls:
            if _is_tool(messages[i]):
                p.status[i] = "orphan"
            i += 1
            continue
        ids = []
        for call in calls:
            cid = call.get("id") if isinstance(call, dict) else None
            ids.append(cid if isinstance(cid, str) and cid else None)
            if ids[-1] and ids[-1] not in p.labels:
                p.labels[ids[-1]] = _label(len(p.labels))
        asst, i = i, i + 1
        answered: set[int] = set()
        while i < len(messages) and _is_tool(messages[i]):
            p.block_of[i] = asst
            tid = messages[i].get("tool_call_id")
            if not isinstance(tid, str) or not tid:
                p.status[i] = "missing_id"
            elif tid not in ids:
                p.status[i] = "mismatch"
            else:
                pos = next((k for k, c in enumerate(ids) if c == tid and k not in answered), None)
                if pos is None:
                    p.status[i] = "duplicate"
                else:
                    answered.add(pos)
                    p.status[i] = "ok"
                    p.answer_of[(asst, pos)] = i
                    p.call_of[i] = (asst, pos)
            i += 1
    return p


def _is_tool(m: object) -> bool:
    return isinstance(m, dict) and m.get("role") == "tool"
