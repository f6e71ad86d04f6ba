"""Free text for tool parameters, read from the user's question: a query, a title, a subject.

Free text fills a parameter only when it stands out: quoted ("…", “…”, 《…》), a Title Like
This, "about …"/"关于…的", or labelled ("主题是“发货通知”", "subject: …": only the parameter
that is what the label says takes it). Spans the question's shaped values already claim
are left out (``2026`` of a date is not a title).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentdbg.providers.offline_schema import Param
from agentdbg.providers.offline_text import STOPWORDS, name_tokens, wordset

MAX_QUESTION = 4000


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


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


def dictated(question: str) -> list[tuple[int, int]]:
    """Where the question quotes or labels text (``内容是“您的订单已发货”``): the user's words
    for a text parameter, not words that choose a value of another one."""
    return [m.span() for rx in (_QUOTED, _LABELLED) for m in rx.finditer(question)]


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
