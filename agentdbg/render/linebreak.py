"""Line breaking that reads right in Chinese as in English: ``break_offsets``, ``wrap_plain``.

Rich breaks lines only at spaces (and folds a long word anywhere). Chinese has no spaces,
so a sentence was cut wherever the column ended, and at the one space it had: "应用把完整
历史（3⏎条消息". Here a line may break between any two Chinese characters, and at spaces,
except where the rules of Chinese (and English) typesetting forbid it:

* never before closing punctuation (，。）」 …, and ``?``/``,`` after Chinese) nor after
  opening punctuation (（「《 …); a straight quote (``"``, ``'``) stays with the text it
  quotes, as the quotes of a JSON string: ``"北风 3级"}`` neither ends a line on its
  opening quote nor starts one with its closing quote (a quote closes after a letter or a
  character, and opens after a space or punctuation: ``、'drop N'``);
* never between a number and the measure word after it ("3 条", "2个"), nor inside a word
  of Latin letters or digits (``tool_call_id``, ``ORD-2026-001``) unless it is longer
  than the line.

``render/wrap.py``'s ``CJKText`` wraps Rich text this way. This module imports no more of
Rich than its cell widths: ``--help`` in Chinese folds its lines with ``wrap_plain`` (Rich's
text classes cost more to import than the rest of ``--help``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from rich.cells import cell_len

CLOSING = set("，。、；：？！）」』》】〉’”…%％·．,.;:!?)]}>")
OPENING = set("（「『《【〈‘“([{<")
QUOTES = set("\"'")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _tokens(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end): runs of spaces (``s``), one wide character (``c``), or a run of
    other characters (``w``: a word, a number, ASCII punctuation)."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == " ":
            j = i
            while j < n and text[j] == " ":
                j += 1
            yield "s", i, j
        elif _wide(ch) or (ch in CLOSING | OPENING and not ch.isascii()):
            j = i + 1
            yield "c", i, j
        else:
            j = i
            while j < n and text[j] != " " and not _wide(text[j]) and \
                    (text[j].isascii() or text[j] not in CLOSING | OPENING):
                j += 1
            yield "w", i, j
        i = j


def _may_break(text: str, before: tuple[str, int, int], after: tuple[str, int, int],
               space_before: tuple[str, int, int] | None) -> bool:
    """May a line end between ``before`` and ``after`` (``space_before``: spaces between)?"""
    first, last = text[after[1]], text[before[2] - 1]
    if first in CLOSING or last in OPENING:
        return False
    # a straight quote holds on to the text it quotes: a closing one (after a letter or a
    # character) never starts a line ("东南风 2级⏎"}), an opening one never ends one
    # ("wind": "⏎北风); after punctuation a quote opens, and a line may start with it (、'drop N')
    if space_before is None and ((first in QUOTES and _closes(text, after[1])) or
                                 (last in QUOTES and not _closes(text, before[2] - 1))):
        return False
    # a number and its measure word: "3 条", "2个"
    return not (before[0] == "w" and last.isdigit() and after[0] == "c")


def _closes(text: str, i: int) -> bool:
    """Does the straight quote at ``i`` close what it quotes (it follows a letter, a digit or a
    character, not a space or punctuation)?"""
    before = text[i - 1] if i else " "
    return not (before.isspace() or before in CLOSING or before in OPENING or before in QUOTES)


def atoms(text: str) -> list[tuple[int, int]]:
    """The pieces of ``text`` (one line) that a line may not break inside, as (start, end),
    each with the spaces after it: "（3 条）", "发", "tool_call_id ", "结果。"."""
    out: list[tuple[int, int]] = []
    tokens = list(_tokens(text))
    prev: tuple[str, int, int] | None = None
    spaces: tuple[str, int, int] | None = None
    for tok in tokens:
        if tok[0] == "s":
            spaces = tok
            if out:
                out[-1] = (out[-1][0], tok[2])
            else:
                out.append((tok[1], tok[2]))
            continue
        if prev is not None and not _may_break(text, prev, tok, spaces):
            out[-1] = (out[-1][0], tok[2])
        else:
            out.append((tok[1], tok[2]))
        prev, spaces = tok, None
    return out


def break_offsets(text: str, width: int) -> list[int]:
    """Where lines start (after the first) when ``text`` (one line, no newline) is laid out in
    ``width`` cells: as many pieces (``atoms``) on a line as fit."""
    width = max(1, width)
    offsets: list[int] = []
    used = 0
    for start, end in atoms(text):
        piece = text[start:end]
        size = cell_len(piece.rstrip(" "))
        if used and used + size > width:
            offsets.append(start)
            used = 0
        if size > width:   # longer than a line: folded where the column ends
            for i, ch in enumerate(piece):
                w = cell_len(ch)
                if used + w > width and used and ch != " ":
                    offsets.append(start + i)
                    used = 0
                used += w
            continue
        used += cell_len(piece)
    return offsets


def wrap_plain(text: str, width: int, indent: str = "") -> str:
    """``text`` (plain, one paragraph or several lines) folded at ``width`` cells, each line
    after the first of a paragraph indented like the first: ``help``'s layout."""
    out: list[str] = []
    for line in text.split("\n"):
        lead = indent + line[:len(line) - len(line.lstrip(" "))]
        body = line.strip(" ")
        starts = [0, *break_offsets(body, max(1, width - cell_len(lead)))]
        out.extend(lead + body[a:b].rstrip(" ") for a, b in zip(starts, starts[1:] + [len(body)]))
    return "\n".join(out)


def cell_fold(text: str, limit: int) -> str:
    """The longest start of ``text`` that takes at most ``limit`` cells on screen (all of it
    when it fits); reads at most ``limit`` characters."""
    if len(text) <= limit // 2:
        return text
    used = 0
    for i, ch in enumerate(text[:limit + 1]):
        used += 2 if _wide(ch) else 1
        if used > limit:
            return text[:i]
    return text if len(text) <= limit else text[:limit]
