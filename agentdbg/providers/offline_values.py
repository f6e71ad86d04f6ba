"""Values for tool parameters, read from the user's question.

Each value remembers where it was found (``start``/``end`` in the question) and why,
so the planner can tell "from PEK" from "to SHA" and explain its choice. Sources:
a parameter's ``pattern``, ``enum``, ``const``, ``examples`` or ``format`` (closed or
shaped values, found anywhere as whole tokens; also those its description states in words,
``offline_prose``), words shaped like the examples, the time zones of places
(``offline_zones``), also for a parameter that says it takes a time zone; numbers next to
a word of the parameter ("2 passengers", "3 nights"); booleans only when stated ("turn
on"). Free text (quoted, a Title Like This, "about …", labelled) is ``offline_phrases``'.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from agentdbg.i18n import N_, Msg
from agentdbg.providers import offline_patterns, offline_zones
from agentdbg.providers.offline_phrases import dictated
from agentdbg.providers.offline_prose import MAX_EXAMPLES, Prose, Shape, times
from agentdbg.providers.offline_schema import Param, fits
from agentdbg.providers.offline_text import (
    STOPWORDS,
    cjk_bigrams,
    name_tokens,
    occurrences,
    stem,
    text_after,
    text_before,
    whole_token,
    word_after,
    word_before,
    words,
    wordset,
)

MAX_QUESTION = 4000  # characters of the question read for values
MAX_NUMBERS = 40     # numbers of the question considered


@dataclass(frozen=True)
class Value:
    value: Any
    why: Any                 # an i18n.Msg: notes show it in the chosen language
    start: int = -1          # position in the question; -1 for a value from a tool result
    end: int = -1


# -- shaped and closed values ---------------------------------------------------

_FORMATS = {
    "date": re.compile(r"\d{4}-\d{2}-\d{2}(?![\d:T])"),
    "date-time": re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})?"),
    "time": re.compile(r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:])"),
    "email": re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,255}\.[A-Za-z]{2,63}"),
    "uri": re.compile(r"https?://[^\s\"'<>]{1,2000}"),
}
_FORMAT_NAMES = {"date": N_("a date"), "date-time": N_("a date and time"), "time": N_("a time"),
                 "email": N_("an e-mail address"), "uri": N_("a URL")}


def shaped(param: Param, question: str) -> tuple[list[Value], str]:
    """Values the schema itself recognises in the question, in question order, and a reason
    when the schema could not be used (an uncheckable pattern)."""
    s, q = param.schema, question[:MAX_QUESTION]
    found: list[Value] = []
    problem: Any = ""
    pattern = s.get("pattern")
    prose = param.prose if param.from_prose else None
    if isinstance(pattern, str) and param.type in ("string", "any"):
        if prose is not None and "pattern" in param.from_prose:
            stated, problem = _stated_format(param, prose, q)
            found.extend(stated)
        else:
            spans = offline_patterns.find_all(pattern, q)
            if spans is None:
                problem = Msg("its pattern {pattern} cannot be checked safely, so it was not used",
                              {"pattern": repr(pattern[:60])})
            for start, end, text in spans or []:
                if whole_token(q, start, end):
                    found.append(Value(text, Msg("question matches pattern {pattern}",
                                                 {"pattern": pattern}), start, end))
    fmt = s.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS and not isinstance(pattern, str):
        for m in _FORMATS[fmt].finditer(q):
            found.append(Value(m.group(0), Msg("question has {what}", {"what": Msg(_FORMAT_NAMES[fmt])}),
                               m.start(), m.end()))
    for key in ("enum", "examples"):
        options = s.get(key)
        for opt in options[:200] if isinstance(options, list) else []:
            if isinstance(opt, str) and opt.strip():
                spoken = {opt, opt.replace("_", " ").replace("-", " ")}  # living_room: "living room"
                for start, end in (span for form in spoken for span in occurrences(q, form)):
                    found.append(Value(opt, Msg("question mentions {key} value {value}",
                                                {"key": key, "value": repr(opt)}), start, end))
    found.extend(_said_in_words(param, q))
    found.extend(_like_examples(param, q))
    if isinstance(s.get("const"), str):
        for start, end in occurrences(q, s["const"]):
            found.append(Value(s["const"], Msg("question mentions the const value"), start, end))
    return _fitting(found, param), problem


# -- a closed value said in its words -------------------------------------------------

_SEGMENT = re.compile(r"[,，;；、\n]")
_TRIM = " \t=:：()（）[]【】\"'“”‘’-–—>→.。"
_SYNONYMS = re.compile(r"\s*(?:/|\||或|\bor\b)\s*")
_CONJUNCTION = re.compile(r"^(?:或者|或|和|及|or\b|and\b)|(?:或者|或|和|及|\bor|\band)$", re.I)
_NEGATION = ("没有", "没", "未", "不", "无", "非", "not ", "no ")
MAX_WORDS = 24       # characters of one value's words


def choice_words(param: Param) -> list[tuple[Any, list[str]]]:
    """The words a tool author gives each value of a closed parameter: a titled ``const``
    branch (``oneOf: [{const: shipped, title: 已发货}]``), or the description naming each value
    with its words (``pending 待处理，shipped 已发货/已经发货`` or ``已发货（shipped）``)."""
    out: list[tuple[Any, list[str]]] = [(v, _synonyms(w)) for v, w in param.titled_choices if w]
    options = [o for o in param.choices if isinstance(o, str) and o.strip()]
    for segment in _SEGMENT.split(param.description[:1000]) if options else []:
        spans = sorted((span, o) for o in options for span in occurrences(segment, o)[:1])
        bracketed = bool(spans) and all(segment[:start].rstrip().endswith(("(", "（"))
                                        for (start, _end), _o in spans)
        for i, ((start, end), option) in enumerate(spans):
            if bracketed:      # 打开中（open）或已关闭（closed）
                said = segment[spans[i - 1][0][1] if i else 0:start]
                said = re.split(r"[:：]", said)[-1]
            else:              # pending 待处理 / shipped: 已发货
                said = segment[end:spans[i + 1][0][0] if i + 1 < len(spans) else len(segment)]
            out.append((option, _synonyms(_CONJUNCTION.sub("", said.strip(_TRIM)).strip(_TRIM))))
    return [(v, ws) for v, ws in out if ws]


def _synonyms(text: str) -> list[str]:
    words_ = (w.strip(_TRIM) for w in _SYNONYMS.split(text[:MAX_WORDS * 4]))
    return [w for w in words_ if w and len(w) <= MAX_WORDS and w.lower() not in STOPWORDS]


def _said_in_words(param: Param, q: str) -> list[Value]:
    """A closed value the question says in the words the schema gives it: ``已发货`` for
    ``shipped``; a Chinese word's perfective ``已`` may also be said ``已经`` or as a ``了``
    after the verb (``已经发货``, ``发货了``), and a negated word (``还没发货``) says nothing."""
    found: list[Value] = []
    quoted = dictated(q)
    for option, said_words in choice_words(param):
        for word in said_words:
            forms = {word}
            if word.startswith("已") and len(word) > 2:
                forms |= {"已经" + word[1:], word[1:] + "了"}
            for start, end in (span for form in forms for span in occurrences(q, form)):
                if (start > 0 and q[max(0, start - 3):start].lower().endswith(_NEGATION)) or \
                        _inside(start, end, quoted):
                    continue
                found.append(Value(option, Msg("question says {said}, which the schema gives as "
                                               "{value}", {"said": repr(q[start:end]),
                                                           "value": repr(option)}), start, end))
    return found


def _stated_format(param: Param, prose: Prose, q: str) -> tuple[list[Value], Any]:
    """Values in the format the description states ("in 24-hour format (HH:MM)"), and what
    the question said that the format cannot hold ("12:00:30" for HH:MM)."""
    label = Msg("the {format} format its description states", {"format": prose.format_label})
    if prose.time_template:
        found = times(q, prose.time_template)
        unfit = next((said for _s, _e, value, said in found if not value), "")
        return [Value(value, Msg("question says {said}", {"said": repr(said)}) if value == said else
                      Msg("question says {said}, {value} in {label}",
                          {"said": repr(said), "value": value, "label": label}),
                      start, end) for start, end, value, said in found if value], \
            (Msg("the question says {said}, which {label} cannot hold",
                 {"said": repr(unfit), "label": label}) if unfit else "")
    spans = offline_patterns.find_all(param.schema["pattern"], q) or []
    return [Value(text, Msg("question has {text}, in {label}", {"text": repr(text), "label": label}),
                  start, end)
            for start, end, text in spans if whole_token(q, start, end)], ""


def _like_examples(param: Param, q: str) -> list[Value]:
    """Question words shaped like the parameter's examples (``Asia/Tokyo`` like
    ``America/New_York``), and, when the examples are IANA time zones, the zones of the
    places the question names."""
    examples = param.schema.get("examples")
    if param.closed or param.type not in ("string", "any"):
        return []
    if not isinstance(examples, list):
        return [Value(p.zone, p.why, p.start, p.end) for p in offline_zones.places(q)] \
            if zone_param(param) else []
    texts = tuple(e for e in examples[:MAX_EXAMPLES] if isinstance(e, str) and e)
    prose = "examples" in param.from_prose
    out: list[Value] = []
    shape = Shape.of(texts) if texts else None
    for start, end, text in shape.find(q) if shape is not None else []:
        said = {"text": repr(text), "example": repr(texts[0])}
        why = Msg("question has {text}, shaped like the example {example} in its description",
                  said) if prose else Msg("question has {text}, shaped like the example {example}", said)
        out.append(Value(text, why, start, end))
    if offline_zones.is_zone_list(texts):
        out.extend(Value(p.zone, p.why, p.start, p.end) for p in offline_zones.places(q))
    return out


_ZONE_NAMES = frozenset({"tz", "timezone", "zone"})


def zone_param(param: Param) -> bool:
    """A parameter that takes an IANA time zone: its examples are zones, or (with no examples)
    its name or description says so (``tz``, ``timezone``, "IANA time zone", "时区")."""
    if offline_zones.is_zone_list(param.schema.get("examples")):
        return True
    if "pattern" in param.schema or "format" in param.schema or "examples" in param.schema:
        return False
    tokens = set(name_tokens(param.name))
    text = param.description[:300].lower()
    return bool(tokens & _ZONE_NAMES) or "time zone" in text or "timezone" in text or "时区" in text


def _fitting(found: list[Value], param: Param) -> list[Value]:
    out, seen = [], set()
    for v in sorted(found, key=lambda v: v.start):
        key = (repr(v.value), v.start)
        if key not in seen and fits(v.value, param.schema, param.root):
            seen.add(key)
            out.append(v)
    return out


def claimed(values: list[Value]) -> list[tuple[int, int]]:
    return [(v.start, v.end) for v in values if v.start >= 0]


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


# -- numbers --------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-:/#])(\d{1,9}(?:\.\d+)?)(?![A-Za-z0-9_\-:/]|\.\d)")
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2}
_ZH_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
               "九": 9, "十": 10}
_ZH_COUNTERS = "位个名张晚天间次人小分度"
_ZH_NUMBER = re.compile(f"([一两二三四五六七八九十])(?=[{_ZH_COUNTERS}])")
_UNITS = {"%": ("percent", "percentage", "brightness", "level"),
          "°": ("temperature", "degree", "celsius", "fahrenheit")}


@dataclass(frozen=True)
class Number:
    value: float
    start: int
    end: int
    after: str      # the word (or symbol, or CJK character) right after the number
    before: list[str]

    @property
    def as_value(self) -> int | float:
        return int(self.value) if float(self.value).is_integer() else self.value


def numbers(question: str, taken: list[tuple[int, int]]) -> list[Number]:
    q = question[:MAX_QUESTION]
    out: list[Number] = []
    for m in _NUMBER.finditer(q):
        if not _inside(m.start(), m.end(), taken):
            out.append(_number(q, float(m.group(1)), m.start(), m.end()))
    low = q.lower()
    for word, n in _WORD_NUMBERS.items():
        for m in re.finditer(rf"\b{word}\b", low):
            if not _inside(m.start(), m.end(), taken):
                out.append(_number(q, n, m.start(), m.end()))
    for m in _ZH_NUMBER.finditer(q):
        if not _inside(m.start(), m.end(), taken):
            out.append(_number(q, _ZH_NUMBERS[m.group(1)], m.start(), m.end()))
    return sorted(out, key=lambda n: n.start)[:MAX_NUMBERS]


def _number(q: str, value: float, start: int, end: int) -> Number:
    rest = q[end:end + 12].lstrip()
    if rest[:1] in _UNITS:
        after = rest[:1]
    elif rest and not rest[0].isascii():
        after = rest[:3]       # Chinese: 2位乘客 -> "位乘客"
    else:
        after = word_after(q, end)
    return Number(value, start, end, after, word_before(q, start, 3))


def number_score(param: Param, n: Number) -> int:
    """How strongly the words around ``n`` tie it to ``param`` (0: not at all)."""
    vocab = _vocab(param)
    score = 0
    if n.after in _UNITS:
        score += 3 if any(u in vocab for u in _UNITS[n.after]) else 0
    elif n.after and not n.after[0].isascii():
        score += 3 if cjk_bigrams(n.after) & cjk_bigrams(param.description) or \
            n.after[0] in param.description else 0
    elif n.after and stem(n.after) in vocab:
        score += 3
    near = [w for w in n.before if w not in ("to", "at", "of", "for", "is", "be", "the", "a")]
    if near and stem(near[-1]) in vocab:
        score += 2
    return score


def _vocab(param: Param) -> frozenset[str]:
    return _vocab_of(param.name, param.description[:500])


@functools.lru_cache(maxsize=4096)
def _vocab_of(name: str, description: str) -> frozenset[str]:
    tokens = [t for t in name_tokens(name) + words(description) if t not in STOPWORDS]
    return frozenset({stem(t) for t in tokens} | set(tokens))


def number_fits(param: Param, value: float) -> bool:
    v: Any = int(value) if float(value).is_integer() else value
    return fits(v, param.schema, param.root)


# -- booleans -------------------------------------------------------------------

_ON = ("turn on", "switch on", "power on", "打开", "开启", "开灯", "turn it on", "switch it on")
_OFF = ("turn off", "switch off", "power off", "关闭", "关掉", "关灯", "turn it off", "switch it off")
_ON_PARAMS = {"on", "enabled", "enable", "power", "active", "state", "switch", "powered", "is_on"}
_TRUE_CUES = ("only ", "include ", "including ", "with ", "show ", "just ", "只要", "包括", "包含")
_FALSE_CUES = ("not ", "no ", "non-", "non ", "without ", "exclude ", "excluding ", "不要", "不含", "不包括")


def boolean(param: Param, question: str) -> Value | None:
    """A boolean only when the question states it: "turn on"/"关闭" for an on/off switch,
    or the parameter's own words ("include cancelled" -> include_cancelled=true,
    "not refundable" -> refundable=false)."""
    q = question[:MAX_QUESTION].lower()
    tokens = name_tokens(param.name)
    if set(tokens) & _ON_PARAMS or param.name.lower() in _ON_PARAMS:
        on = _first_at(q, _ON)
        off = _first_at(q, _OFF)
        if on and not off:
            return Value(True, Msg("question says {said}", {"said": repr(on[1])}), on[0], on[0] + len(on[1]))
        if off and not on:
            return Value(False, Msg("question says {said}", {"said": repr(off[1])}), off[0],
                         off[0] + len(off[1]))
        return None
    meaningful = [t for t in tokens if t not in STOPWORDS and t not in ("is", "has", "include", "with")]
    if not meaningful:
        return None
    phrase = " ".join(meaningful)
    for start, end in occurrences(q, phrase):
        before = q[max(0, start - 12):start]
        cue = next((c for c in _TRUE_CUES + _FALSE_CUES if before.endswith(c)), None)
        if cue is not None:  # "only refundable", "without stops", "non-refundable"
            return Value(cue in _TRUE_CUES, Msg("question says {said}",
                                                {"said": repr(before[-len(cue):] + q[start:end])}),
                         start, end)
    return None


def _first_at(q: str, phrases: tuple[str, ...]) -> tuple[int, str] | None:
    hits = [(q.find(p), p) for p in phrases if q.find(p) >= 0]
    return min(hits) if hits else None


# -- roles: which end of a route a value is ------------------------------------

SOURCE, TARGET = "source", "target"
#: words of a parameter's name that make it one end of a route (or of a stay)
_ROLE_NAMES = {
    SOURCE: wordset("origin from source src departure depart departing start begin checkin "
                    "outbound leave"),
    TARGET: wordset("destination dest to target dst arrival arrive arriving end finish checkout "
                    "return inbound"),
}
#: the same in descriptions, where "to"/"from"/"start"/"end" are too common to count
_ROLE_DESCRIPTIONS = {
    SOURCE: ("origin", "departure", "departing", "check-in", "出发", "起点", "始发", "起飞"),
    TARGET: ("destination", "arrival", "arriving", "check-out", "目的", "到达", "终点", "抵达"),
}
_BEFORE_WORDS = {SOURCE: ("from", "leaving", "departing", "between"),
                 TARGET: ("to", "into", "towards", "until", "till", "arriving")}
_ZH_BEFORE = {SOURCE: ("从", "由", "自"), TARGET: ("到", "至", "去", "往", "飞往", "前往", "抵达")}
_SOURCE_AFTER = ("to ", "->", "→", "-", "–", "—", "到", "至", "飞", "出发")


def role(param: Param) -> str | None:
    """``source``/``target`` from the parameter's name, else from its description."""
    tokens = set(name_tokens(param.name))
    for r, names in _ROLE_NAMES.items():
        if tokens & names or param.name.lower().replace("_", "") in names:
            return r
    text = param.description.lower()
    hits = [(text.find(w), r) for r, ws in _ROLE_DESCRIPTIONS.items() for w in ws if w in text]
    return min(hits)[1] if hits else None


def mark(question: str, v: Value) -> str | None:
    """Whether the words around a value make it the start or the end of a route:
    "from PEK", "to SHA", "PEK to SHA", "PEK-SHA", "从北京", "到上海"; or of a conversion:
    "09:30 Paris time" (the source), "in Tokyo time" (the target)."""
    if v.start < 0:
        return None
    before = word_before(question, v.start, 1)
    gap = question[max(0, v.start - 12):v.start]
    for r, ws in _BEFORE_WORDS.items():
        if before and before[0] in ws and gap.rstrip().lower().endswith(before[0]):
            return r
    zh = text_before(question, v.start, 2)
    for r, marks in _ZH_BEFORE.items():
        if any(zh.endswith(m) for m in marks):
            return r
    if re.match(r"\s+time\b", text_after(question, v.end, 8), re.I):
        # "09:30 Paris time" is where a time is given; "in Paris time", where it is wanted
        return TARGET if before and before[0] in ("in", "into") else SOURCE
    after = text_after(question, v.end, 4).lstrip()
    return SOURCE if any(after.startswith(m) for m in _SOURCE_AFTER) else None
