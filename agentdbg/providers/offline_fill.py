"""Filling one tool's parameters from the question and the results so far.

Each parameter gets its candidate values with the reason for each. Parameters that
draw on the same values in the question (two airports, two dates, two cities) share
them out by the words around each value ("from PEK to SHA", "从北京到上海") and the
parameters' names (origin/destination, check_in/check_out), never one value twice.
A required parameter without a value is recorded with the reason, for the user.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import N_, Join, Msg
from agentdbg.providers import offline_zones
from agentdbg.providers.offline_history import Conversation
from agentdbg.providers.offline_note import PARAM
from agentdbg.providers.offline_phrases import Phrase, is_text_param, phrases, text_score
from agentdbg.providers.offline_schema import Param, ToolDef, out_of_range
from agentdbg.providers.offline_values import (
    MAX_QUESTION,
    SOURCE,
    TARGET,
    Number,
    Value,
    boolean,
    claimed,
    mark,
    number_fits,
    number_score,
    numbers,
    role,
    shaped,
    zone_param,
)

MAX_COMBOS = 8


@dataclass
class Missing:
    tool: str
    param: str
    reason: Any               # an i18n.Msg: the note and the answer each say it in their language
    ambiguous: bool = False   # several results offered a value and the question chose none
    unfit: bool = False       # the question gave a value the schema cannot take (said even when
                              # other calls went ahead)


@dataclass
class Fill:
    tool: ToolDef
    combos: list[tuple[dict, Any]] = field(default_factory=list)  # arguments, why (an i18n.Join)
    spans: list[frozenset[tuple[int, int]]] = field(default_factory=list)  # each combo's question spans
    missing: list[Missing] = field(default_factory=list)
    from_question: int = 0      # parameters with a value from the question
    weak: bool = False          # every value is free text or a lone number: a guess

    @property
    def complete(self) -> bool:
        return bool(self.combos)


class QuestionValues:
    """The question read once for every tool: shaped values first, so that numbers and
    free text never reuse their characters (``2026`` of a date is not a count)."""

    def __init__(self, question: str, tools: list[ToolDef]):
        self.question = question
        self.shaped: dict[tuple[str, str], list[Value]] = {}
        self.problems: dict[tuple[str, str], Any] = {}
        for t in tools:
            for p in t.params:
                values, problem = shaped(p, question)
                self.shaped[(t.name, p.name)] = values
                if problem:
                    self.problems[(t.name, p.name)] = problem
        taken = [span for vs in self.shaped.values() for span in claimed(vs)]
        self.numbers: list[Number] = numbers(question, taken)
        # a place that is a time zone's city ("Paris") is a city as well: free text may take it
        places = {(p.start, p.end) for p in offline_zones.places(question)} if \
            any(zone_param(p) for t in tools for p in t.params) else set()
        self.phrases: list[Phrase] = phrases(question, [s for s in taken if s not in places])


def fill(tool: ToolDef, qv: QuestionValues, conv: Conversation,
         written: dict[str, Value] | None = None) -> Fill:
    """``written``: values the model writes itself for parameters the question leaves open
    (an e-mail's body, from the results)."""
    result = Fill(tool)
    values, weak = _from_question(tool, qv)
    lookups = _from_results(tool, values, qv, conv)
    for name, value in (written or {}).items():
        if name in values and not values[name]:
            values[name] = [value]
    for p in tool.required:
        if not values[p.name] and p.nullable:
            values[p.name] = [Value(None, Msg("null: no value in the question, and the schema allows null"))]
        if not values[p.name]:
            result.missing.append(Missing(tool.name, p.name, _why_missing(tool, p, qv, lookups),
                                          ambiguous=p.name in lookups,
                                          unfit=(tool.name, p.name) in qv.problems))
    result.from_question = sum(1 for p in tool.params if any(v.start >= 0 for v in values[p.name]))
    if not result.missing:
        needs_weak = [p.name in weak for p in tool.needs]
        result.weak = bool(needs_weak) and all(needs_weak)
        result.combos, result.spans = _combos(tool, values)
    return result


def _from_question(tool: ToolDef, qv: QuestionValues) -> tuple[dict[str, list[Value]], set[str]]:
    """Each parameter's values from the question, and which of them are guesses (free text,
    a lone number)."""
    values = {p.name: _without_opposite_role(p, qv.shaped.get((tool.name, p.name), []), qv.question)
              for p in tool.params}
    _one_clause(values, qv.question)
    _share_out(tool, values, qv.question)
    weak = set()
    for name, (number, guess) in _numbers_for(tool, values, qv).items():
        values[name] = [number]
        if guess:
            weak.add(name)
    for name, text in _texts_for(tool, values, qv).items():
        values[name] = [text]
        weak.add(name)
    for p in tool.params:
        if not values[p.name] and p.type == "boolean":
            b = boolean(p, qv.question)
            values[p.name] = [b] if b else []
    return values, weak


def _from_results(tool: ToolDef, values: dict[str, list[Value]], qv: QuestionValues,
                  conv: Conversation) -> dict[str, Any]:
    """Add result fields to required free-form parameters (not an optional one: that would
    only make the same call again; not a number the user gave, even out of range). Returns,
    per parameter, why a list of results left its value open."""
    open_: dict[str, Any] = {}
    rejected = _rejected_numbers(tool, values, qv)
    for p in tool.params:
        if p.closed or not p.required or p.type in ("object", "array") or p.name in rejected:
            continue
        found, ambiguous = conv.lookup(p, qv.question)
        if found is not None and all(v.value != found.value for v in values[p.name]):
            values[p.name] = values[p.name] + [found]
        elif ambiguous:
            open_[p.name] = ambiguous
    return open_


_CLAUSE_END = re.compile(r"[.?!;。？！；\n]+(?:\s|$)|,\s*(?=(?:and|but|then|also|or|plus)\b)|，")


def clauses(question: str) -> list[tuple[int, int]]:
    """The question's clauses: "What time is it in Tokyo, and what is 09:30 Paris time …"."""
    out, start = [], 0
    for m in _CLAUSE_END.finditer(question[:MAX_QUESTION]):
        out.append((start, m.start()))
        start = m.end()
    return out + [(start, max(start, len(question)))]


def _one_clause(values: dict[str, list[Value]], question: str) -> None:
    """A call whose values come from the question: when exactly one clause holds a value for
    every parameter that has some, its values come from that clause ("what time is it in
    Tokyo, and what is 09:30 Paris time in New York": the conversion takes Paris and New
    York, not Tokyo)."""
    holding = [name for name, vs in values.items() if any(v.start >= 0 for v in vs)]
    if len(holding) < 2:
        return
    parts = clauses(question)
    full = [(a, b) for a, b in parts
            if all(any(a <= v.start < b for v in values[name]) for name in holding)]
    if len(full) != 1:
        return
    a, b = full[0]
    for name in holding:
        values[name] = [v for v in values[name] if v.start < 0 or a <= v.start < b]


def _without_opposite_role(p: Param, vs: list[Value], question: str) -> list[Value]:
    r = role(p)
    if r is None:
        return vs
    opposite = TARGET if r == SOURCE else SOURCE
    return [v for v in vs if mark(question, v) != opposite]


def _share_out(tool: ToolDef, values: dict[str, list[Value]], question: str) -> None:
    """Parameters with values in common get distinct values, by role and question order."""
    for group in _groups(tool, values):
        pool: list[Value] = []
        for p in group:
            for v in values[p.name]:
                if all(v.value != u.value for u in pool):
                    pool.append(v)
        pool.sort(key=lambda v: v.start)
        marks = {repr(v.value): _mark_of(question, v.value, values, group) for v in pool}
        assigned: dict[str, list[Value]] = {}
        for p in group:
            r = role(p)
            mine = [v for v in pool if r and marks[repr(v.value)] == r and _offered(p, v, values)]
            assigned[p.name] = mine
        used = {repr(v.value) for vs in assigned.values() for v in vs}
        rank = {SOURCE: 0, None: 1, TARGET: 2}
        for p in sorted(group, key=lambda p: (not p.required, rank[role(p)])):
            if assigned[p.name]:
                continue
            free = [v for v in pool if repr(v.value) not in used and _offered(p, v, values)
                    and marks[repr(v.value)] in (None, role(p))]
            if free:
                assigned[p.name] = free[:1]
                used.add(repr(free[0].value))
        for p in group:
            values[p.name] = assigned[p.name]


def _offered(p: Param, v: Value, values: dict[str, list[Value]]) -> bool:
    return any(u.value == v.value for u in values[p.name])


def _mark_of(question: str, value: Any, values: dict[str, list[Value]], group: list[Param]) -> str | None:
    for p in group:
        for v in values[p.name]:
            if v.value == value:
                m = mark(question, v)
                if m:
                    return m
    return None


def _groups(tool: ToolDef, values: dict[str, list[Value]]) -> list[list[Param]]:
    params = [p for p in tool.params if values[p.name]]
    groups: list[list[Param]] = []
    for p in params:
        mine = {repr(v.value) for v in values[p.name]}
        joined = [g for g in groups if any(mine & {repr(v.value) for v in values[q.name]} for q in g)]
        merged = [p] + [q for g in joined for q in g]
        groups = [g for g in groups if g not in joined] + [merged]
    order = {p.name: i for i, p in enumerate(tool.params)}
    return [sorted(g, key=lambda p: order[p.name]) for g in groups if len(g) > 1]


def _numbers_for(tool: ToolDef, values: dict[str, list[Value]],
                 qv: QuestionValues) -> dict[str, tuple[Value, bool]]:
    """Numbers next to a parameter's words ("2 passengers"); a required number parameter with no
    such word takes the question's only number. -> {param: (value, is_a_guess)}"""
    wanted = [p for p in tool.params if p.type in ("integer", "number") and not values[p.name]]
    out: dict[str, tuple[Value, bool]] = {}
    used: set[int] = set()
    pairs = sorted(((number_score(p, n), i, p, n) for p in wanted for i, n in enumerate(qv.numbers)),
                   key=lambda x: (-x[0], x[1]))
    for score, i, p, n in pairs:
        if score <= 0 or p.name in out or i in used:
            continue
        if p.type == "integer" and not float(n.value).is_integer():
            continue
        used.add(i)
        if number_fits(p, n.value):
            out[p.name] = (Value(n.as_value, Msg("question says {said}", {"said": _quote(qv.question, n)}),
                                 n.start, n.end), False)
    digits = [i for i, n in enumerate(qv.numbers)
              if i not in used and qv.question[n.start:n.start + 1].isdigit()]
    open_required = [p for p in wanted if p.required and p.name not in out]
    if len(digits) == 1 and len(open_required) == 1 and not any(s > 0 for s, *_ in pairs):
        n, p = qv.numbers[digits[0]], open_required[0]
        if number_fits(p, n.value):
            out[p.name] = (Value(n.as_value, Msg("the only number in the question ({said})",
                                                 {"said": _quote(qv.question, n)}), n.start, n.end), True)
    return out


def _rejected_numbers(tool: ToolDef, values: dict[str, list[Value]], qv: QuestionValues) -> set[str]:
    """Number parameters the question gave a value for that does not fit ("45 degrees" with a
    maximum of 30): no other value replaces the user's."""
    return {p.name for p in tool.params if p.type in ("integer", "number") and not values[p.name]
            and any(number_score(p, n) > 0 for n in qv.numbers)}


def _quote(question: str, n: Number) -> str:
    return repr(question[n.start:n.end + 1 + len(n.after)].strip())


def _texts_for(tool: ToolDef, values: dict[str, list[Value]], qv: QuestionValues) -> dict[str, Value]:
    out: dict[str, Value] = {}
    used: set[int] = set()
    wanted = [p for p in tool.params if is_text_param(p) and not values[p.name]]
    for p in sorted(wanted, key=lambda p: not p.required):
        scored = [(text_score(p, ph), -i, ph) for i, ph in enumerate(qv.phrases) if i not in used]
        scored = [s for s in scored if s[0] > 0]
        if scored:
            _score, neg_i, ph = max(scored, key=lambda s: (s[0], s[1]))
            used.add(-neg_i)
            out[p.name] = Value(ph.text, Msg(PHRASE_KINDS.get(ph.kind, "{kind} text in the question"),
                                             {"kind": ph.kind}), ph.start, ph.end)
    return out


PHRASE_KINDS = {"quoted": N_("quoted text in the question"), "title": N_("title text in the question"),
                "about": N_("about text in the question"), "labelled": N_("text the question labels")}


def _why_missing(tool: ToolDef, p: Param, qv: QuestionValues, lookups: dict[str, Any]) -> Any:
    problem = qv.problems.get((tool.name, p.name))
    if problem:
        return problem
    if p.name in lookups:
        return lookups[p.name]
    if p.type in ("integer", "number"):
        near = [n for n in qv.numbers if number_score(p, n) > 0]
        if near and out_of_range(near[0].value, p.schema):
            return out_of_range(near[0].value, p.schema)
    if p.type in ("object", "array"):
        return Msg("it takes an {type}, which the offline model does not build", {"type": p.type})
    if zone_param(p):
        return Msg("no IANA time zone name in the question ({shape}), and no place it names is the "
                   "city of a time zone in {sources}", {"shape": p.describe(),
                                                        "sources": offline_zones.sources(qv.question)})
    if "$unknown" in p.schema:
        return Msg("its schema is a reference the offline model does not follow (remote refs are "
                   "never fetched)")
    if p.closed:
        return Msg("no value for it in the question ({shape})", {"shape": p.describe()})
    return Msg("no value for it in the question or the tool results ({shape})", {"shape": p.describe()})


def _combos(tool: ToolDef, values: dict[str, list[Value]]
            ) -> tuple[list[tuple[dict, Any]], list[frozenset[tuple[int, int]]]]:
    keys, choices = [], []
    for p in tool.params:
        vs = values[p.name]
        if vs:
            keys.append(p.name)
            choices.append(vs if p.required else vs[:1])
    out, spans = [], []
    for combo in itertools.islice(itertools.product(*choices), MAX_COMBOS * 4):
        chosen = [v.value for v in combo]
        if _reuses_a_question_value(combo):
            continue
        args = dict(zip(keys, chosen))
        why = Join(tuple(Msg(PARAM, {"key": k, "value": repr(v.value), "why": v.why})
                         for k, v in zip(keys, combo)))
        out.append((args, why))
        spans.append(frozenset((v.start, v.end) for v in combo if v.start >= 0))
        if len(out) >= MAX_COMBOS:
            break
    return out, spans


def _reuses_a_question_value(combo: tuple[Value, ...]) -> bool:
    """One occurrence in the question fills one parameter (PEK is not both origin and destination)."""
    spans = [(v.start, v.end) for v in combo if v.start >= 0]
    return len(spans) != len(set(spans))
