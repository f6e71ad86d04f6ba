"""``CJKText``: a ``rich.text.Text`` that breaks its lines as ``render/linebreak.py`` says
(between Chinese characters, at spaces, never where the rules of Chinese and English
typesetting forbid it), wherever Rich lays it out (a table cell, a panel, the console's
width); everything else about it is Rich's."""

from __future__ import annotations

from typing import Any

from rich.containers import Lines
from rich.text import Text

from agentdbg.render.linebreak import CLOSING, OPENING, break_offsets, cell_fold, wrap_plain

__all__ = ["CLOSING", "OPENING", "CJKText", "Paragraph", "break_offsets", "cell_fold", "cjk",
           "wrap_plain"]


class CJKText(Text):
    """Rich text that breaks its lines with ``break_offsets``, wherever it is printed."""

    def __rich__(self) -> Paragraph:
        # ``console.print`` merges the bare ``Text`` objects it is given into one plain Rich
        # text, folded at spaces ("…assistant⏎消息"); as a renderable of its own it stays this
        return Paragraph(self)

    def wrap(self, console: Any, width: int, *, justify: Any = None, overflow: Any = None,
             tab_size: int = 8, no_wrap: bool | None = None) -> Lines:
        wrap_overflow = overflow or self.overflow or "fold"
        if no_wrap or self.no_wrap or overflow == "ignore":
            return super().wrap(console, width, justify=justify, overflow=overflow,
                                tab_size=tab_size, no_wrap=no_wrap)
        lines = Lines()
        for line in self.split(allow_blank=True):
            if "\t" in line:
                line.expand_tabs(tab_size)
            new_lines = line.divide(break_offsets(line.plain, width))
            for part in new_lines:
                part.rstrip_end(width)
                part.truncate(width, overflow=wrap_overflow)
            lines.extend(new_lines)
        return lines


def cjk(text: Text | str, style: str = "") -> CJKText:
    """``text`` (a plain string, or Rich text with its styles) as ``CJKText``."""
    if isinstance(text, str):
        return CJKText(text, style=style)
    out = CJKText(text.plain, style=text.style, justify=text.justify, overflow=text.overflow,
                  no_wrap=text.no_wrap, end=text.end)
    out.spans = list(text.spans)
    return out


class Paragraph:
    """``CJKText`` to print on its own (``console.print`` would merge a bare ``Text`` with its
    neighbours into plain Rich text, and wrap that Rich's way): what a ``CJKText`` printed
    becomes, and a way to print a plain string or ``Text`` folded as Chinese."""

    def __init__(self, text: Text | str, style: str = ""):
        self.text = text if isinstance(text, CJKText) and not style else cjk(text, style)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        return self.text.__rich_console__(console, options)

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        return self.text.__rich_measure__(console, options)
