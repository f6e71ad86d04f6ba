"""Where two messages arrays (or any JSON values) first differ, said the way a person reads it."""

from __future__ import annotations

import json
from typing import Any


def first_difference(a: Any, b: Any, path: str = "messages") -> tuple[str, Any, Any] | None:
    """The first path where ``a`` and ``b`` differ, with both values; None when equal."""
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            # an absent key and null mean the same in a message (e.g. content on a tool-call turn)
            va, vb = a.get(key), b.get(key)
            if va is None or vb is None:
                if va is not vb:
                    return f"{path}.{key}", _shown(a, key), _shown(b, key)
                continue
            found = first_difference(va, vb, f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        return first_difference_from(a, b, 0, path)
    return None if a == b else (path, a, b)


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def _shown(d: dict, key: str):
    return d.get(key, ABSENT)


def first_difference_from(a: list, b: list, start: int,
                          path: str = "messages") -> tuple[str, Any, Any] | None:
    """``first_difference`` of two lists, looking only at index ``start`` and after."""
    for i in range(start, min(len(a), len(b))):
        found = first_difference(a[i], b[i], f"{path}[{i}]")
        if found:
            return found
    if len(a) != len(b):
        n = min(len(a), len(b))
        return f"{path}[{n}]", a[n] if n < len(a) else None, b[n] if n < len(b) else None
    return None


def describe_difference(diff: tuple[str, Any, Any]) -> str:
    path, recorded, now = diff

    def show(value) -> str:
        return "(absent)" if value is ABSENT else json.dumps(value, ensure_ascii=False)[:200]
    return f"first difference at {path}: recorded {show(recorded)}, now {show(now)}"
