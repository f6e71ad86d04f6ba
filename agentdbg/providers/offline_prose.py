"""What a parameter's description says in prose about its values, for the offline model.

Many servers (MCP ones especially) describe a parameter only in words: "IANA timezone
name (e.g., 'America/New_York', 'Europe/London')", "Time to convert in 24-hour format
(HH:MM)". Two things are read from such text, never anything else:

- examples: values quoted after "e.g." / "for example" / "such as" / "例如" (or, unquoted,
  a single token of a distinctive shape, "例如 ORD-2026-001"). They act as the schema's
  ``examples``; ``Shape`` then finds question words of the same shape (``Asia/Tokyo``
  shaped like ``America/New_York``).
- a format: a date/time template (``HH:MM``, ``YYYY-MM-DD``, ``DD/MM/YYYY``) or "24-hour"
  becomes a ``pattern``; ``times`` reads the times a question states ("9:30 pm") in it.

Everything is bounded: descriptions are read up to ``MAX_DESCRIPTION`` characters, at most
``MAX_EXAMPLES`` examples, and the regular expressions built here are made of character
classes separated by literal punctuation (no nested ambiguity to backtrack on).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

MAX_DESCRIPTION = 2000
MAX_EXAMPLES = 8
MAX_EXAMPLE = 100

_CUE = re.compile(r"(?<![A-Za-z])(?:e\.\s?g\b\.?|eg\.|for example|for instance|such as)|例如|比如|譬如",
                  re.I)
_SCOPE_END = re.compile(r"[)）;；。\n]|\.\s|\.$")
_QUOTED = re.compile(r"'([^'\n]{1,100})'|\"([^\"\n]{1,100})\"|`([^`\n]{1,100})`|“([^”\n]{1,100})”|"
                     r"‘([^’\n]{1,100})’|「([^」\n]{1,100})」")
_UNQUOTED_SPLIT = re.compile(r"\s*(?:,|、|，|\bor\b|或)\s*")


@dataclass(frozen=True)
class Prose:
    examples: tuple[str, ...] = ()
    pattern: str | None = None       # from a stated format
    format_label: str = ""           # the format as the description states it: "HH:MM", "24-hour"
    time_template: str = ""          # a time template (HH:MM), for reading times in questions


@functools.lru_cache(maxsize=2048)
def read(description: str) -> Prose:
    text = description[:MAX_DESCRIPTION]
    pattern, label, time_template = _format(text)
    return Prose(_examples(text), pattern, label, time_template)


# -- examples -------------------------------------------------------------------

def _examples(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for cue in _CUE.finditer(text):
        rest = text[cue.end():cue.end() + 400]
        end = _SCOPE_END.search(rest)
        scope = rest[:end.start()] if end else rest
        quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(scope)]
        found = quoted or [t for t in _UNQUOTED_SPLIT.split(scope.strip(" :：,，"))
                           if t and not re.search(r"\s", t) and Shape.distinctive([t])]
        for value in found:
            value = value.strip()
            if value and len(value) <= MAX_EXAMPLE and value not in out:
                out.append(value)
    return tuple(out[:MAX_EXAMPLES])


# -- formats --------------------------------------------------------------------

_TOKEN = r"YYYY|yyyy|YY|yy|MM|mm|DD|dd|HH|hh|SS|ss"
_TEMPLATE = re.compile(rf"(?<![A-Za-z])((?:{_TOKEN})(?:[-:/.T ]?(?:{_TOKEN})){{1,5}})(?![A-Za-z])")
_TWENTY_FOUR = re.compile(r"24[- ]?(?:hour|hr|h)\b|24小时", re.I)
_HOUR, _MINUTE, _SECOND = r"(?:[01]\d|2[0-3])", r"[0-5]\d", r"[0-5]\d"
_PIECES = {"YYYY": r"\d{4}", "YY": r"\d{2}", "DD": r"(?:0[1-9]|[12]\d|3[01])", "HH": _HOUR,
           "SS": _SECOND}
_MONTH = r"(?:0[1-9]|1[0-2])"
_ANY_TIME = r"^(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?$"


def _format(text: str) -> tuple[str | None, str, str]:
    """(pattern, label, time template) for the first template the description states."""
    for m in _TEMPLATE.finditer(text):
        template = m.group(1)
        pieces = re.findall(rf"{_TOKEN}|.", template)
        if sum(1 for p in pieces if re.fullmatch(_TOKEN, p)) < 2:
            continue
        regex, seen_hour = [], False
        for p in pieces:
            up = p.upper()
            if up == "HH":
                seen_hour = True
            if up == "MM":
                regex.append(_MINUTE if seen_hour else _MONTH)
            elif up in _PIECES:
                regex.append(_PIECES[up])
            else:
                regex.append(re.escape(p))
        is_time = seen_hour and not any(p.upper() in ("YYYY", "YY", "DD") for p in pieces)
        return "^" + "".join(regex) + "$", template, template.upper() if is_time else ""
    if _TWENTY_FOUR.search(text):
        return _ANY_TIME, "24-hour", "24-HOUR"
    return None, "", ""


_TIME_IN_TEXT = re.compile(r"(?<![\d:.])([01]?\d|2[0-3])(?::([0-5]\d))?(?::([0-5]\d))?(?![\d:])"
                           r"(\s?(?:[ap]\.?m\.?)(?![A-Za-z]))?", re.I)


def times(question: str, template: str) -> list[tuple[int, int, str, str]]:
    """The times ``question`` states, written in ``template`` (HH:MM, HH:MM:SS, 24-HOUR):
    (start, end, value, what the question said). "9:30" -> "09:30", "9:30 pm" -> "21:30";
    a bare number counts only with am/pm ("9pm"). A time the template cannot hold (seconds
    for HH:MM) comes with the value ''."""
    out = []
    for m in _TIME_IN_TEXT.finditer(question):
        hour, minute, second, half = m.group(1), m.group(2), m.group(3), m.group(4)
        if minute is None and half is None:
            continue
        h = int(hour)
        if half:
            if not 1 <= h <= 12:
                continue
            pm = half.strip().lower().startswith("p")
            h = (h % 12) + (12 if pm else 0)
        if second and "SS" not in template and template != "24-HOUR":
            out.append((m.start(), m.end(), "", m.group(0).strip()))  # cutting the seconds would change it
            continue
        mi, se = int(minute or 0), int(second or 0)
        if template == "24-HOUR":
            value = f"{h}:{mi:02d}" if not half and len(hour) == 1 else f"{h:02d}:{mi:02d}"
            value += f":{se:02d}" if second else ""
        else:
            value = template.replace("HH", f"{h:02d}").replace("MM", f"{mi:02d}").replace("SS", f"{se:02d}")
        out.append((m.start(), m.end(), value, m.group(0).strip()))
    return out


# -- shapes ---------------------------------------------------------------------

_RUN = re.compile(r"[A-Z]+|[a-z]+|[0-9]+|[\u3400-\u9fff]+|\s+|.", re.S)
_WORDISH = "A-Za-z0-9\u3400-\u9fff"


def _classes(text: str) -> list[tuple[str, str]]:
    """``America/New_York`` -> [('A','A'), ('a','merica'), ('/','/'), …]: each run's class
    (A upper, a lower, 9 digits, C Chinese, else the character itself) and its text."""
    out = []
    for run in _RUN.findall(text):
        c = run[0]
        kind = ("A" if "A" <= c <= "Z" else "a" if "a" <= c <= "z" else "9" if "0" <= c <= "9" else
                "C" if "\u3400" <= c <= "\u9fff" else " " if c.isspace() else c)
        out.append((kind, run))
    return out


def _punct(kind: str) -> bool:
    return kind not in ("A", "a", "9", "C")


@dataclass(frozen=True)
class Shape:
    """The shape the examples share: segments between separators that every example has
    (``keys``), each segment units joined by other punctuation (``conns``); a unit is its
    run of classes (``Aa`` a capitalised word, ``9`` digits, ``A9`` letters then digits).
    Matching splits a candidate the same way and compares the pieces: no backtracking."""
    keys: frozenset[str]
    conns: frozenset[str]
    positions: tuple[frozenset[str], ...] | None   # units allowed at each segment, when fixed
    units: frozenset[str]
    counts: tuple[int, int]
    digits: tuple[int, int]

    @staticmethod
    def distinctive(examples: list[str] | tuple[str, ...]) -> bool:
        """A shape worth matching: a separator every example has (``/``, ``-``, ``@``), or
        letters and digits mixed (``SF123456``). A plain word ("celsius", "London") is not."""
        return Shape.of(tuple(examples)) is not None

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def of(examples: tuple[str, ...]) -> Shape | None:
        runs = [_classes(e) for e in examples[:MAX_EXAMPLES] if e and len(e) <= MAX_EXAMPLE]
        if not runs or any(k == " " for r in runs for k, _ in r):
            return None   # words with spaces are matched as they are written, not by shape
        keys = frozenset.intersection(*(frozenset(k for k, _ in r if _punct(k)) for r in runs))
        mixed = all(any(k.isalpha() for k, _ in r) and any(k == "9" for k, _ in r) for r in runs)
        if not keys and not mixed:
            return None
        segments = [_segments(r, keys) for r in runs]
        counts = sorted({len(seg) for seg in segments})
        digits = [len(t) for r in runs for k, t in r if k == "9"] or [0]
        same = len(counts) == 1
        positions = tuple(frozenset(u for seg in segments for u in seg[i]) for i in range(counts[0])) \
            if same else None
        return Shape(keys, frozenset(k for r in runs for k, _ in r if _punct(k) and k not in keys),
                     positions, frozenset(u for seg in segments for part in seg for u in part),
                     (counts[0], counts[-1]), (min(digits), max(digits)))

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Where words of this shape occur in ``text``: (start, end, word)."""
        allowed = _WORDISH + "".join(re.escape(c) for c in sorted(self.keys | self.conns))
        trim = "".join(self.keys | self.conns)
        out = []
        for m in re.finditer(f"[{allowed}]+", text):
            word = m.group(0).rstrip(trim)
            if word and self._fits(word):
                out.append((m.start(), m.start() + len(word), word))
            if len(out) >= 50:
                break
        return out

    def _fits(self, word: str) -> bool:
        runs = _classes(word)
        if any(k == "9" and not self.digits[0] <= len(t) <= self.digits[1] for k, t in runs):
            return False
        segments = _segments(runs, self.keys)
        if not self.counts[0] <= len(segments) <= self.counts[1] or any(not seg for seg in segments):
            return False
        allowed = self.positions or (self.units,) * len(segments)
        return all(seg and set(seg) <= ok for seg, ok in zip(segments, allowed))


def _segments(runs: list[tuple[str, str]], keys: frozenset[str]) -> list[list[str]]:
    """Each segment between key separators as its units (class strings between connectors);
    an empty unit (two separators in a row) is kept as '' so it never fits."""
    segments: list[list[str]] = [[]]
    unit = ""
    for kind, _text in runs:
        if _punct(kind):
            segments[-1].append(unit)
            unit = ""
            if kind in keys:
                segments.append([])
        else:
            unit += kind
    segments[-1].append(unit)
    return segments
