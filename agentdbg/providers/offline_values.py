"""Values for tool parameters, read from the user's question.

Each value remembers where it was found (``start``/``end`` in the question) and why,
so the planner can tell "from PEK" from "to SHA" and explain its choice. Sources:
a parameter's ``pattern``, ``enum``, ``const``, ``examples`` or ``format`` (closed or
shaped values, found anywhere as whole tokens; also those its description states in words,
``offline_prose``), words shaped like the examples, the time zones of places
(``offline_zones``); numbers next to a word of the
parameter ("2 passengers", "3 nights"); booleans only when stated ("turn on");
free text only when it stands out (quoted, a Title Like This, "about …").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from agentdbg.i18n import N_, Msg
from agentdbg.providers import offline_patterns, offline_zones
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
    found.extend(_like_examples(param, q))
    if isinstance(s.get("const"), str):
        for start, end in occurrences(q, s["const"]):
            found.append(Value(s["const"], Msg("question mentions the const value"), start, end))
    return _fitting(found, param), problem


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


# -- free text ------------------------------------------------------------------

#: parameter name words that take free text found in the question
TEXT_PARAM_WORDS = wordset("""
query q search keyword keywords term terms text title name topic phrase book movie film song
product item author subject summary city location place country
""")
_QUOTED = re.compile(r"(?:^|(?<=[\s(:,\u3400-\u9fff，：（、]))[\"'“‘«]([^\"'“”‘’«»\n]{2,200})[\"'”’»]"
                     r"(?=$|[\s?.!,;:)\u3400-\u9fff，。！？；：、）])|[《「『]([^》」』\n]{1,200})[》」』]")
#: words that label the text after them: "主题是“发货通知”", "subject: Shipping update"
LABELS = {"subject": ("subject", "title", "主题", "标题"),
          "body": ("body", "content", "message", "text", "正文", "内容")}
_LABEL_BEFORE = re.compile(r"(主题|标题|正文|内容|subject|title|body|content|message|text)\s*"
                           r"(?:是|为|叫|:|：|=|is|of|reads|says)?\s*$", re.I)
_LABELLED = re.compile(r"(主题|标题|正文|内容)(?:是|为|叫|：|:)\s*([^，。,；;！？!?\n“”\"'「」]{1,60})|"
                       r"\b(subject|title|body)\s*:\s*([^,;.!?\n\"']{1,80})", re.I)
_CAP = re.compile(r"[A-Z][a-z][A-Za-z'’\-]*|[A-Z]\b(?!')")
_CONNECTORS = frozenset({"of", "the", "and", "in", "on", "at", "for", "to", "a", "an", "de", "la",
                         "von", "van", "y", "&"})
_LEADING = wordset("""
can could would will is are was do does did what where when which who how please find search
show get book reserve add create delete remove set turn send tell list give check any hi hello
i my me we you there look borrow buy order schedule cancel update flights flight let
""")
_ABOUT = re.compile(r"\b(?:about|called|titled|named|on the topic of)\s+([^?.!,;\n]{2,120})", re.I)
_ZH_ABOUT = re.compile(r"关于([^，。？！、\s]{1,40}?)的")


@dataclass(frozen=True)
class Phrase:
    text: str
    start: int
    end: int
    kind: str  # quoted | title | about | labelled
    label: str = ""   # "subject" | "body": what the question called it (LABELS)


def phrases(question: str, taken: list[tuple[int, int]]) -> list[Phrase]:
    q = question[:MAX_QUESTION]
    out = []
    for m in _QUOTED.finditer(q):
        g = 1 if m.group(1) is not None else 2
        out.append(Phrase(m.group(g).strip(), m.start(g), m.end(g), "quoted",
                          _label(q[max(0, m.start() - 16):m.start()])))
    for m in _LABELLED.finditer(q):
        g = 2 if m.group(2) is not None else 4
        text = m.group(g).strip()
        if text and not any(p.start <= m.start(g) < p.end for p in out):
            out.append(Phrase(text, m.start(g), m.start(g) + len(text), "labelled",
                              _label(m.group(g - 1))))
    if not out:
        out.extend(_title_phrases(q))
    for m in list(_ABOUT.finditer(q)) + list(_ZH_ABOUT.finditer(q)):
        text = re.split(r"\s+(?:by|for|on|at|from|in)\s+", m.group(1).strip())[0]
        if text and not any(p.start <= m.start(1) < p.end for p in out):
            out.append(Phrase(text, m.start(1), m.start(1) + len(text), "about"))
    return [p for p in out if p.text and not _inside(p.start, p.end, taken)]


def _label(before: str) -> str:
    m = _LABEL_BEFORE.search(before)
    word = m.group(1).lower() if m else ""
    return next((name for name, words in LABELS.items() if word in words), "")


def _title_phrases(q: str) -> list[Phrase]:
    tokens = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"[A-Za-z][A-Za-z'’\-]*|\S", q)]
    out: list[Phrase] = []
    run: list[tuple[int, int, str]] = []
    for tok in tokens + [(len(q), len(q), ".")]:
        text = tok[2]
        if _CAP.fullmatch(text) or (run and text.lower() in _CONNECTORS):
            run.append(tok)
            continue
        out.extend(_close_run(q, run))
        run = []
    return out


def _close_run(q: str, run: list) -> list[Phrase]:
    """A run of capitalised words, without a command or question word opening the sentence
    ("Can I borrow …"), a lone sentence-initial word ("Flights from …") or connectors at its ends."""
    while run and run[-1][2].lower() in _CONNECTORS:
        run = run[:-1]
    while run and (run[0][2].lower() in ("i", "my") or
                   (run[0][2].lower() in _LEADING and _sentence_start(q, run[0][0])) or
                   (len(run) > 1 and _sentence_start(q, run[0][0]) and run[1][2].islower()) or
                   (run[0][2].islower() and run[0][2] in _CONNECTORS)):
        run = run[1:]  # "Weather in Shenzhen": capitalised only because it opens the sentence
    if not run or all(t[2].lower() in _CONNECTORS | STOPWORDS for t in run):
        return []
    if len(run) == 1 and _sentence_start(q, run[0][0]):
        return []
    return [Phrase(q[run[0][0]:run[-1][1]], run[0][0], run[-1][1], "title")]


def _sentence_start(q: str, i: int) -> bool:
    before = q[:i].rstrip()
    return not before or before[-1] in ".?!:;\"'“(\n"


def is_text_param(param: Param) -> bool:
    s = param.schema
    return param.type in ("string", "any") and not param.closed and "pattern" not in s and \
        "format" not in s


def text_score(param: Param, phrase: Phrase) -> int:
    """0: this phrase should not fill this parameter; higher is a better fit."""
    tokens = set(name_tokens(param.name))
    if phrase.label:   # the question says what it is: only a parameter that is that takes it
        words = LABELS[phrase.label]
        described = param.description[:200].lower()
        return 6 if tokens & set(words) or any(w in described for w in words) else 0
    if tokens & TEXT_PARAM_WORDS:
        return 3 if phrase.kind != "about" or tokens & {"query", "q", "search", "topic", "subject"} else 2
    return 1 if phrase.kind == "quoted" else 0


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
