"""Words for the offline model: tokens, stems, mentions, in English and Chinese.

No language model here: lower-cased ASCII words with a crude stem, and CJK text
matched as substrings (Chinese has no spaces to split on).
"""

from __future__ import annotations

import re

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*|[0-9]+")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_SPLIT_NAME = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_ALNUM = re.compile(r"[A-Za-z0-9]")

def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = wordset("""
a an the and or but of to in on at by for from with without into onto is are was were be been
am do does did done can could would should will shall may might must have has had i me my mine
we our you your it its this that these those there here what which who whom whose when where why
how please any some all no not yes if then than so as just also about up down out over only very
too more most less least much many get got let tell show give want need like know see
""")


def has_cjk(text: str) -> bool:
    return bool(CJK.search(text))


def language_of(question: str) -> str:
    """The language the offline model answers in: Chinese for a question with Chinese
    characters, else English."""
    return "zh" if has_cjk(question) else "en"


def stem(word: str) -> str:
    """A crude English stem: enough for flights/flight, booked/book, reserving/reserve."""
    w = word.lower().strip("'")
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: len(w) - len(suffix)] + keep
            break
    return w.rstrip("e") if len(w) > 4 else w


def words(text: str) -> list[str]:
    """ASCII words in order, lower-cased (digits kept as words)."""
    return [w.lower() for w in _WORD.findall(text)]


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry meaning (no stopwords, at least 3 letters)."""
    return {stem(w) for w in words(text) if len(w) >= 3 and w not in STOPWORDS and not w.isdigit()}


def name_tokens(name: str) -> list[str]:
    """``reserveBook`` / ``reserve_book`` / ``reserve-book`` -> ["reserve", "book"]."""
    return [t.lower() for t in _SPLIT_NAME.findall(name)]


def cjk_bigrams(text: str) -> set[str]:
    out: set[str] = set()
    for run in _CJK_RUN.findall(text):
        out.update(run[i:i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            out.add(run)
    return out


def overlap(question: str, text: str) -> int:
    """How many meaning-carrying words (or Chinese bigrams) ``text`` shares with ``question``."""
    return len(content_stems(question) & content_stems(text)) + \
        len(cjk_bigrams(question) & cjk_bigrams(text))


def occurrences(text: str, value: str) -> list[tuple[int, int]]:
    """Where ``value`` occurs in ``text`` (case-insensitive), as a whole word when it starts or
    ends with a letter or digit: ``en`` is not found in ``often``, ``SHA`` not in ``SHANGHAI``."""
    if not value:
        return []
    low, needle = text.lower(), value.lower()
    out: list[tuple[int, int]] = []
    i = low.find(needle)
    while i >= 0 and len(out) < 50:
        end = i + len(needle)
        before_ok = i == 0 or not (_ALNUM.match(needle[0]) and _ALNUM.match(low[i - 1]))
        after_ok = end >= len(low) or not (_ALNUM.match(needle[-1]) and _ALNUM.match(low[end]))
        if before_ok and after_ok:
            out.append((i, end))
        i = low.find(needle, i + 1)
    return out


def whole_token(text: str, start: int, end: int) -> bool:
    """True when text[start:end] is not cut out of a longer ASCII word or number."""
    if start > 0 and _ALNUM.match(text[start]) and _ALNUM.match(text[start - 1]):
        return False
    return not (end < len(text) and _ALNUM.match(text[end - 1]) and _ALNUM.match(text[end]))


def word_before(text: str, start: int, n: int = 1) -> list[str]:
    """The ``n`` ASCII words just before ``start`` (lower-cased), nearest last."""
    return words(text[max(0, start - 60):start])[-n:]


def word_after(text: str, end: int) -> str:
    w = words(text[end:end + 40])
    return w[0] if w else ""


def text_before(text: str, start: int, n: int = 4) -> str:
    return text[max(0, start - n):start]


def text_after(text: str, end: int, n: int = 4) -> str:
    return text[end:end + n]
