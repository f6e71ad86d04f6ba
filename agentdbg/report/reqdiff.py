"""What changed from one request of a conversation to the next: the request diff.

A transcript's request event already says it: the first ``prefix`` messages are the previous
request's, then come ``append``. A request that only appends goes on with the history; one
that keeps fewer messages than the previous request carried rewrote it from there (an app
that trims, edits or reorders its history). Messages are compared as the API reads them
(``transcript.compare``): an app that re-serialised a message did not change it. The params
(model, temperature, tool_choice …) and, where the request body was recorded (Responses,
Anthropic), the tool list are compared too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentdbg.report.timeline import as_dict
from agentdbg.transcript.compare import common_prefix, describe_difference, first_difference
from agentdbg.transcript.events import AnyEvent, Request

PREVIEW = 60


@dataclass
class RequestDiff:
    turn: int
    size: int                                   # messages this request carried
    previous: int | None                        # messages the previous request carried
    kept: int                                   # leading messages unchanged since then
    added: list[tuple[int, Any]] = field(default_factory=list)    # (index, message) from kept on
    removed: list[tuple[int, Any]] = field(default_factory=list)  # the previous request's, from kept on
    changed_at: str | None = None               # the first difference inside message [kept]
    params: list[tuple[str, Any, Any]] = field(default_factory=list)  # (key, before, after)
    tools_added: list[str] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    tools_changed: list[str] = field(default_factory=list)

    @property
    def first(self) -> bool:
        return self.previous is None

    @property
    def rewritten(self) -> bool:
        return self.previous is not None and self.kept < self.previous


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def request_diffs(events: Iterable[AnyEvent]) -> dict[int, RequestDiff]:
    """Each request's diff against the one before it, keyed by its turn number (the reader
    has rebuilt each request's whole messages and body)."""
    out: dict[int, RequestDiff] = {}
    messages: list = []
    params: dict | None = None
    tools: dict | None = None
    for e in events:
        if not isinstance(e, Request):
            continue
        now = list(e.messages or [])
        now_params = as_dict(e.params)
        now_tools = _tools(e.body)
        turn = e.turn if e.turn is not None else len(out) + 1
        out[turn] = _diff(turn, messages if params is not None else None, now,
                          params, now_params, tools, now_tools)
        messages, params, tools = now, now_params, now_tools
    return out


def _diff(turn: int, before: list | None, now: list, params: dict | None, now_params: dict,
          tools: dict | None, now_tools: dict | None) -> RequestDiff:
    if before is None:
        return RequestDiff(turn, len(now), None, 0, list(enumerate(now)))
    kept = common_prefix(before, now)
    d = RequestDiff(turn, len(now), len(before), kept,
                    [(i, now[i]) for i in range(kept, len(now))],
                    [(i, before[i]) for i in range(kept, len(before))] if kept < len(before) else [])
    if kept < len(before) and kept < len(now):
        found = first_difference(before[kept], now[kept], f"messages[{kept}]")
        d.changed_at = describe_difference(found) if found else None
    d.params = [(k, (params or {}).get(k, ABSENT), now_params.get(k, ABSENT))
                for k in sorted(set(params or {}) | set(now_params))
                if (params or {}).get(k, ABSENT) != now_params.get(k, ABSENT)]
    if tools is not None and now_tools is not None:
        d.tools_added = [n for n in now_tools if n not in tools]
        d.tools_removed = [n for n in tools if n not in now_tools]
        d.tools_changed = [n for n in now_tools if n in tools and tools[n] != now_tools[n]]
    return d


def _tools(body: Any) -> dict | None:
    """The tools of a recorded request body, by name (None: the body was not recorded)."""
    if not isinstance(body, dict):
        return None
    out: dict = {}
    for t in _list(body.get("tools")):
        fn = t.get("function") if isinstance(t, dict) and isinstance(t.get("function"), dict) else t
        name = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(name, str):
            out[name] = t
    return out


# -- in words ----------------------------------------------------------------------------------

def message_label(index: int, message: Any) -> str:
    """``[3] assistant → query_order, query_logistics`` / ``[2] user "订单 ORD-…"``."""
    if not isinstance(message, dict):
        return f"[{index}] (not an object)"
    role = message.get("role") if isinstance(message.get("role"), str) else "?"
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = [c["function"].get("name") for c in calls if isinstance(c, dict)
                 and isinstance(c.get("function"), dict)]
        return f"[{index}] {role} → " + ", ".join(str(n) for n in names)
    content = message.get("content")
    text = content if isinstance(content, str) else "" if content is None else \
        json.dumps(content, ensure_ascii=False)
    text = " ".join(text.split())
    preview = text if len(text) <= PREVIEW else text[:PREVIEW - 1] + "…"
    return f"[{index}] {role}" + (f' "{preview}"' if preview else "")


def describe(d: RequestDiff) -> list[str]:
    """The diff as lines a person reads (the HTML page shows the same words)."""
    if d.first:
        return [f"first request of the conversation: {d.size} message(s)"]
    lines = []
    if d.rewritten:
        lines.append(f"history rewritten from [{d.kept}]: the previous request had "
                     f"{len(d.removed)} message(s) from there, this one has {len(d.added)}")
        if d.changed_at:
            lines.append(d.changed_at)
        lines.extend(f"− {message_label(i, m)}" for i, m in d.removed)
    elif not d.added:
        lines.append("the same messages as the previous request")
    lines.extend(f"+ {message_label(i, m)}" for i, m in d.added)
    for key, before, after in d.params:
        lines.append(f"{key}: {_value(before)} → {_value(after)}")
    for word, names in (("tool added", d.tools_added), ("tool removed", d.tools_removed),
                        ("tool definition changed", d.tools_changed)):
        if names:
            lines.append(f"{word}: {', '.join(names)}")
    return lines


def _value(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def _list(value: Any) -> list:
    return list(value) if isinstance(value, list) else []
