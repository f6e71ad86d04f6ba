"""A comparison question answered with the winner: "北京和上海今天哪个更热?" ->
``上海更热：29°C，北京 24°C。``

The question's comparative (``更热``, ``warmer``, ``cheaper``) says which way counts; the
number compared is the one numeric field every result of one tool has, or, when there are
several, the one whose name the comparative's hint words match (``temp`` for hotter). Only
the comparative words of the language are known here, never a tool's fields: with no
comparative, or no single field to compare, nothing is said (the answer then gives each
field's highest and lowest).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentdbg.i18n import N_
from agentdbg.providers.offline_history import Result
from agentdbg.providers.offline_labels import say
from agentdbg.providers.offline_report import units, with_unit

#: comparatives: (words, higher wins, hint words a field's name may contain)
_COMPARATIVES: tuple[tuple[tuple[str, ...], bool, tuple[str, ...]], ...] = (
    (("热", "暖", "hotter", "warmer"), True, ("temp", "celsius", "fahrenheit", "heat")),
    (("冷", "凉", "colder", "cooler"), False, ("temp", "celsius", "fahrenheit", "heat")),
    (("贵", "pricier", "expensive", "dearer"), True, ("price", "cost", "fare", "amount")),
    (("便宜", "cheaper"), False, ("price", "cost", "fare", "amount")),
    (("高", "higher", "taller"), True, ("height", "level", "high")),
    (("低", "lower", "shorter"), False, ("height", "level", "low")),
    (("多", "大", "more", "bigger", "larger", "greater"), True, ("count", "total", "size", "stock")),
    (("少", "小", "fewer", "less", "smaller"), False, ("count", "total", "size", "stock")),
    (("快", "faster", "quicker"), True, ("speed",)),
    (("慢", "slower"), False, ("speed",)),
    (("远", "farther", "further"), True, ("distance",)),
    (("近", "nearer", "closer"), False, ("distance",)),
    (("湿", "humid", "wetter"), True, ("humid", "rain", "precip")),
    (("干", "drier"), False, ("humid", "rain", "precip")),
)
_ZH = re.compile(r"(?:哪|谁)[^?？。！!]{0,12}?(?:更|比较|较|最)([\u4e00-\u9fff]{1,2})")
_EN = re.compile(r"\bwhich\b([^?.!]{0,80})", re.I)
_EN_WORD = re.compile(r"\b(?:(?:more|less)\s+[a-z]+|[a-z]+)\b", re.I)


@dataclass(frozen=True)
class Asked:
    word: str            # the comparative as the question says it: 热, warmer
    higher: bool
    hints: tuple[str, ...]


def asked(question: str) -> Asked | None:
    """The comparison the question asks for, when it asks one."""
    q = question[:500]
    zh = _ZH.search(q)
    if zh is not None:
        return _known(zh.group(1), prefix=True)
    en = _EN.search(q)
    for w in _EN_WORD.finditer(en.group(1) if en else ""):
        said = w.group(0).lower()
        more = re.fullmatch(r"(more|less)\s+([a-z]+)", said)
        plain = _known(more.group(2), prefix=False) if more else None
        if more and plain is not None:    # "more humid": humid, and "less" turns it round
            return Asked(said, plain.higher == (more.group(1) == "more"), plain.hints)
        found = _known(said, prefix=False)
        if found is not None:
            return found
    return None


def _known(said: str, prefix: bool) -> Asked | None:
    """The comparative ``said`` is (``热`` also as the start of ``热些``)."""
    for words, higher, hints in _COMPARATIVES:
        word = next((w for w in words if said == w or (prefix and said.startswith(w))), None)
        if word is not None:
            return Asked(word, higher, hints)
    return None


def verdict(question: str, good: list[Result], subject: Any, lang: str) -> str:
    """The winner, as a sentence in ``lang`` (``上海更热：29°C，北京 24°C。``); '' when the
    question compares nothing, or the results give no one number to compare."""
    a = asked(question)
    rows = _rows(good)
    key = _key(rows, a) if a is not None else None
    if a is None or key is None:
        return ""
    ranked = sorted(rows, key=lambda r: r.value[key], reverse=a.higher)
    best, rest = ranked[0], ranked[1:]
    if all(r.value[key] == best.value[key] for r in rest):
        return say(lang, N_("{subjects} are the same: {value} each."),
                   subjects=say(lang, N_(", ")).join(subject(r) for r in ranked), value=measured(best, key))
    others = say(lang, N_(", ")).join(say(lang, N_("{subject} {value}"), subject=subject(r),
                                          value=measured(r, key)) for r in rest)
    template = N_("{winner} is {word}: {value}, {others}.") if len(rest) == 1 else \
        N_("{winner} is {word} than the others: {value}, then {others}.")
    return say(lang, template, winner=subject(best), word=a.word, value=measured(best, key), others=others)


def _rows(good: list[Result]) -> list[Result]:
    """The results of the one tool called for two or more subjects."""
    by_tool: dict[str, list[Result]] = {}
    for r in good:
        if isinstance(r.value, dict):
            by_tool.setdefault(r.name, []).append(r)
    groups = [rows for rows in by_tool.values() if len(rows) >= 2]
    return groups[0] if len(groups) == 1 else []


def _key(rows: list[Result], a: Asked) -> str | None:
    if not rows:
        return None
    numeric = [k for k, v in rows[0].value.items() if number(v) and all(number(r.value.get(k)) for r in rows)]
    if len(numeric) == 1:
        return numeric[0]
    hinted = [k for k in numeric if any(h in k.lower() for h in a.hints)]
    return hinted[0] if len(hinted) == 1 else None


def measured(r: Result, key: str) -> str:
    """A result's number with the unit the result states for it: ``29°C``."""
    return with_unit(r.value[key], units(r.value).get(key, ""))


def number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


__all__ = ["Asked", "asked", "measured", "number", "verdict"]
