"""The console every command prints through.

A terminal gets Rich's layout at its width. A pipe or a file gets plain lines: no
trailing spaces padding a line to the width, and a single value (a note, a finding, an
error, a path) is never wrapped, so ``grep`` and copy-paste see it whole. Structured
views (tables, the messages grid, boxes) keep their layout at ``COLUMNS`` (else 80).
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any, cast

from rich.console import Console, Group
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

_TRAILING = re.compile(r" +\n")


class TrimmedLines:
    """A text stream that drops the spaces at the end of every line written through it.

    Spaces at the end of one write are held back until the next write shows whether a
    line end follows them."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self._spaces = ""

    def write(self, text: str) -> int:
        joined = self._spaces + text
        body = joined.rstrip(" ")
        self._spaces = joined[len(body):]
        self.stream.write(_TRAILING.sub("\n", body))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"


#: between two characters of a secret that the layout wrapped: colour codes, and at most one
#: line end with the indentation and box borders around it
_SGR = r"\x1b\[[0-9;]*m"
_GAP = rf"(?:{_SGR})*(?:(?:{_SGR}|[ \t│┃║|])*\n(?:{_SGR}|[ \t│┃║|])*)?"


class ScrubbingConsole(Console):
    """Rich's console, which can be told secrets (``hide``): whatever is about to be written,
    whoever rendered it, has them replaced, also where the layout wrapped one over two lines."""

    _hidden: re.Pattern | None = None
    #: the presenter view: no dim or italic text anywhere (hard to read on a projector)
    plain_styles = False

    def hide(self, secrets: list[str]) -> None:
        values = sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4}, key=len,
                        reverse=True)
        self._hidden = re.compile("|".join(_GAP.join(map(re.escape, v)) for v in values)) \
            if values else None

    def _render_buffer(self, buffer: Any) -> str:
        if self.plain_styles:
            buffer = [Segment(seg.text, _HIGH_CONTRAST.get(seg.style) if seg.style else seg.style,
                              seg.control) for seg in buffer]
        text = super()._render_buffer(buffer)
        if self._hidden is None:
            return text
        return self._hidden.sub(lambda m: "[REDACTED]" + ("\n" if "\n" in m.group() else ""), text)


class _Contrast(dict):
    """style -> the same style with dim and italic turned off (made once per style)."""

    def __missing__(self, style: Style) -> Style:
        plain = style + Style(dim=False, italic=False) if style.dim or style.italic else style
        self[style] = plain
        return plain

    def get(self, style: Any, default: Any = None) -> Any:
        return self[style]


_HIGH_CONTRAST = _Contrast()


class PipedConsole(ScrubbingConsole):
    """A console for output that is not a terminal: single values are printed unwrapped
    (a group of renderables is printed one renderable at a time)."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:
        from agentdbg.render.wrap import Paragraph

        objects = tuple(o.text if isinstance(o, Paragraph) else o for o in objects)
        if soft_wrap is None and len(objects) == 1 and isinstance(objects[0], Group):
            for child in objects[0].renderables:
                self.print(child, **kwargs)
            return
        if soft_wrap is None and objects and all(isinstance(o, (str, Text)) for o in objects):
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **kwargs)


def make_console(stderr: bool = False, present: bool = False) -> Console:
    """Rich's console on a terminal; a ``PipedConsole`` over trimmed lines otherwise.
    ``present``: the presenter view's high contrast (no dim or italic text). ``NO_COLOR``
    is honoured either way (Rich reads it: no colour, styles only)."""
    console = ScrubbingConsole(stderr=stderr, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        stream = sys.stderr if stderr else sys.stdout
        console = PipedConsole(file=cast(IO[str], TrimmedLines(stream)), highlight=False,
                               soft_wrap=False)
    console.plain_styles = present
    return console
