"""Make untrusted text inert before it reaches the terminal.

Rich markup is never interpreted because untrusted text only ever goes into
``rich.text.Text`` objects (never into markup strings). Control characters
(ESC, CSI/OSC sequences, carriage returns, backspaces, BEL ...), bidi overrides
and zero-width characters are replaced by visible escapes such as ``\\x1b`` or
``\\u202e``. Newlines and tabs are kept.
"""

from __future__ import annotations

import re

_INVISIBLE = (
    "\u200b\u200c\u200d\u200e\u200f"   # zero-width space/joiners, LRM/RLM
    "\u202a\u202b\u202c\u202d\u202e"   # bidi embeddings/overrides
    "\u2066\u2067\u2068\u2069"         # bidi isolates
    "\u2060\ufeff\u061c"               # word joiner, BOM, Arabic letter mark
)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _INVISIBLE + "]")


def _escape(match: re.Match) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """Printable form of untrusted text: control/invisible characters made visible."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, s)


def one_line(text: object) -> str:
    """``safe`` text on one line, for an error or warning line."""
    return " ".join(safe(text).split("\n"))
