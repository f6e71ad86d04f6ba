"""What tool results say, in sentences: the offline model's answer and the text it writes.

``describe`` turns one result into a sentence about what was asked for, in the question's
language: ``ORD-2026-001: status is shipped, tracking_no is SF123456.`` /
``北京：temperature 为 24，condition 为 晴。`` Field names and values are data and stay as the
tool wrote them; the sentence around them is the catalog's. Everything is bounded: at most
``MAX_FIELDS`` fields, ``MAX_ITEMS`` items of a list, values cut at ``MAX_VALUE`` characters.
"""

from __future__ import annotations

import json
from typing import Any

from agentdbg.i18n import Msg, tr
from agentdbg.providers.offline_history import Result, json_object

MAX_FIELDS = 12
MAX_ITEMS = 3
MAX_VALUE = 80


def subject_of(r: Result) -> str:
    """What the call was about: its arguments' values (``北京``, ``ORD-2026-001``), else the
    tool's name."""
    args = json_object(r.arguments) or {}
    shown = [v if isinstance(v, str) else _short(v, 40) for v in args.values()
             if v not in (None, "", [], {}) and not (isinstance(v, str) and (len(v) > 40 or "\n" in v))]
    return "/".join(shown[:2]) or r.name


def describe(r: Result, lang: str) -> str:
    """One result as a sentence in ``lang``."""
    args = json_object(r.arguments) or {}
    said = {json.dumps(v, ensure_ascii=False, sort_keys=True) for v in args.values()}
    return tr(Msg("{subject}: {facts}.", {"subject": subject_of(r),
                                         "facts": facts(r.value, lang, said)}), lang)


def facts(value: Any, lang: str, said: frozenset[str] | set[str] = frozenset(), depth: int = 0) -> str:
    """The fields of a result (less those repeating what was asked) as a phrase in ``lang``."""
    def tell(template: str, **values: Any) -> str:
        return tr(Msg(template, values), lang)

    if isinstance(value, dict):
        parts = [tell("{key} is {value}", key=k, value=_field(v, lang, depth))
                 for k, v in list(value.items())[:MAX_FIELDS]
                 if json.dumps(v, ensure_ascii=False, sort_keys=True, default=str) not in said]
        if len(value) > MAX_FIELDS:
            parts.append(tell("{n} more fields", n=len(value) - MAX_FIELDS))
        return tell(", ").join(parts) if parts else tell("nothing more than what was asked")
    if isinstance(value, list):
        if not value:
            return tell("no results")
        items = [facts(x, lang, said, depth + 1) if isinstance(x, (dict, list)) and depth < 1
                 else _short(x) for x in value[:MAX_ITEMS]]
        head = tell("{n} result(s)", n=len(value))
        more = tell("and {n} more", n=len(value) - MAX_ITEMS) if len(value) > MAX_ITEMS else ""
        return tell("{head}: {items}", head=head, items=tell("; ").join(items + ([more] if more else [])))
    text = str(value)
    return text if len(text) <= 200 else tell("{start}… ({n} characters)", start=text[:200], n=len(text))


def _field(v: Any, lang: str, depth: int) -> str:
    if isinstance(v, (dict, list)) and depth < 1 and v:
        return f"({facts(v, lang, set(), depth + 1)})"
    return _short(v)


def _short(v: Any, limit: int = MAX_VALUE) -> str:
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def compose(results: list[Result], lang: str) -> str:
    """A text written from the results (an e-mail's body the question did not dictate)."""
    good = [r for r in results if r.error is None]
    return "\n".join(describe(r, lang) for r in good)
