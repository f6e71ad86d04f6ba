"""Where two messages arrays (or any JSON values) first differ, said the way a person reads it.

By default two histories are compared as the API reads them, so a request an app
re-serialised is the same request:

* ``arguments`` strings compare as parsed JSON (``{"a":1}`` equals ``{"a": 1}``);
* fields client libraries add and the API ignores are skipped: ``index``, ``parsed``,
  ``parsed_arguments`` (stream helpers and parsers), ``name`` on a tool message;
* ``refusal``, ``audio``, ``annotations`` and ``function_call`` that are null or empty
  equal an absent key; an absent key equals null everywhere;
* ``content`` as a string equals the same text as a list of text parts;
* an assistant's ``reasoning_content`` the recording (``a``) has not got is not a difference
  (recordings made before agentdbg showed Anthropic thinking that way lack it).

``strict=True`` compares exactly (byte for byte, as parsed JSON values).
"""

from __future__ import annotations

import json
import marshal
from typing import Any

from agentdbg.i18n import N_
from agentdbg.messages import loads_json

CLIENT_FIELDS = frozenset({"index", "parsed", "parsed_arguments"})
EMPTY_MEANS_ABSENT = frozenset({"refusal", "audio", "annotations", "function_call"})
#: what agentdbg's chat form carries that recordings made before it did not: absent from the
#: recorded side (``a``), it is not a difference (Anthropic thinking as ``reasoning_content``)
RECORDED_SINCE = frozenset({"reasoning_content"})


def first_difference(a: Any, b: Any, path: str = "messages", *,
                     strict: bool = False) -> tuple[str, Any, Any] | None:
    """The first path where ``a`` and ``b`` differ, with both values; None when equal."""
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, dict):
        for key in [*a, *(k for k in b if k not in a)] if len(a) != len(b) or a.keys() != b.keys() \
                else a:
            if not strict and key in _SPECIAL and _ignored(a, b, key):
                continue
            va, vb = a.get(key), b.get(key)
            if type(va) is type(vb) and type(va) in _SCALARS and va == vb:
                continue   # the same text or number (NaN is never equal): nothing to walk
            if not strict and key in EMPTY_MEANS_ABSENT:
                va, vb = va or None, vb or None
            if va is None or vb is None:  # an absent key and null mean the same in a message
                if va is not vb:
                    return f"{path}.{key}", _shown(a, key), _shown(b, key)
                continue
            if not strict and _same_meaning(key, va, vb):
                continue
            found = first_difference(va, vb, f"{path}.{key}", strict=strict)
            if found:
                return found
        return None
    if isinstance(a, list):
        return first_difference_from(a, b, 0, path, strict=strict)
    return None if a == b else (path, a, b)


#: the keys ``_ignored`` may skip; the values compared at once when equal and of one type
_SPECIAL = CLIENT_FIELDS | RECORDED_SINCE | {"name"}
_SCALARS = (str, int, float, bool)


def _ignored(a: dict, b: dict, key: str) -> bool:
    if key in CLIENT_FIELDS:
        return True
    if key in RECORDED_SINCE and key not in a and a.get("role") == "assistant":
        return True
    return key == "name" and a.get("role") == "tool" and b.get("role") == "tool"


def _same_meaning(key: str, va: Any, vb: Any) -> bool:
    if key == "arguments" and isinstance(va, str) and isinstance(vb, str) and va != vb:
        try:
            return loads_json(va) == loads_json(vb)
        except ValueError:
            return False
    if key == "content" and type(va) is not type(vb):
        ta, tb = _text(va), _text(vb)
        return ta is not None and ta == tb
    return False


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    return None


def common_prefix(a: list, b: list, *, strict: bool = False) -> int:
    """How many leading messages ``a`` and ``b`` share (compared as the API reads them)."""
    n = 0
    for x, y in zip(a, b):
        if x != y and first_difference(x, y, strict=strict) is not None:
            break
        n += 1
    return n


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def _shown(d: dict, key: str) -> Any:
    return d.get(key, ABSENT)


def first_difference_from(a: list, b: list, start: int, path: str = "messages", *,
                          strict: bool = False) -> tuple[str, Any, Any] | None:
    """``first_difference`` of two lists, looking only at index ``start`` and after."""
    for i in range(start, min(len(a), len(b))):
        x, y = a[i], b[i]
        if _same_exactly(x, y):   # a replayed message, the recorded one's equal: no walk
            continue
        found = first_difference(x, y, f"{path}[{i}]", strict=strict)
        if found:
            return found
    if len(a) != len(b):
        n = min(len(a), len(b))
        return f"{path}[{n}]", a[n] if n < len(a) else None, b[n] if n < len(b) else None
    return None


def _same_exactly(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same value of the same types all the way down, so that
    ``first_difference`` (strict or not) finds nothing: written alike by ``marshal``
    (format 0, in C), which writes each type apart (``1``, ``1.0`` and ``True``) and
    refuses any other type than the built-in ones (a subclass: the walk decides). A float
    written ``nan`` is never equal to itself for the walk: then it decides too. The messages
    a replay compares are equal, none the same object: this is about half the walk's time."""
    if type(a) is not dict or type(b) is not dict:
        return False
    try:
        data = marshal.dumps(a, 0)
        return data == marshal.dumps(b, 0) and data.find(b"nan") < 0   # (``in`` tries an int first)
    except (ValueError, RecursionError):   # another type than JSON's, or nested too deep
        return False


def describe_difference(diff: tuple[str, Any, Any]) -> str:
    path, recorded, now = diff

    def show(value: Any) -> str:
        return N_("(absent)") if value is ABSENT else json.dumps(value, ensure_ascii=False)[:200]
    return N_("first difference at {path}: recorded {recorded}, now {now}").format(
        path=path, recorded=show(recorded), now=show(now))
