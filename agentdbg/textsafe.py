"""Make untrusted text inert before it reaches the terminal (``render.safe`` re-exports it).

Rich markup is never interpreted because untrusted text only ever goes into
``rich.text.Text`` objects (never into markup strings). Characters that could act on the
terminal or hide text from the reader (but not from a model) are replaced by visible
escapes such as ``\\x1b``, ``\\u202e`` or ``\\U000e0041``; newlines and tabs are kept:

* C0/C1 controls and DEL: ESC (so every CSI/OSC sequence, OSC 52 included), CR, BS, BEL …
* every format character (Unicode category Cf): bidi embeddings, overrides and isolates,
  zero-width spaces and joiners, word joiner and invisible operators (U+2060–U+2064), the
  soft hyphen U+00AD, U+180E, interlinear annotations U+FFF9–U+FFFB, the BOM, the tag
  characters U+E0000–U+E007F (which spell hidden ASCII), and the rest of Cf;
* the line and paragraph separators U+2028/U+2029 (a line break in some viewers only);
* blank fillers: Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the combining grapheme
  joiner U+034F, Khmer U+17B4/U+17B5, Mongolian variation selectors U+180B–U+180F;
* lone surrogates (valid in JSON text, not printable: they would stop the output);
* variation selectors that carry no glyph: the supplement U+E0100–U+E01EF, and a
  U+FE00–U+FE0F that follows another selector (one after a character is how emoji are
  written; a run of them can smuggle bytes).
"""

from __future__ import annotations

import re

_FORMAT = (  # Unicode category Cf (15.0), Zl and Zp
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"
)
_BLANK = "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\uffa0\U000e0100-\U000e01ef"
_ASCII_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}{_BLANK}\ud800-\udfff\ufe00-\ufe0f]")


def _escape(match: re.Match) -> str:
    code = ord(match.group(0))
    if 0xFE00 <= code <= 0xFE0F:  # kept after a character, escaped after another selector
        before = match.string[match.start() - 1] if match.start() else ""
        if not ("\ufe00" <= before <= "\ufe0f" or "\U000e0100" <= before <= "\U000e01ef"):
            return match.group(0)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def safe(text: object) -> str:
    """Printable form of untrusted text: control/invisible characters made visible."""
    s = text if isinstance(text, str) else str(text)
    return (_ASCII_UNSAFE if s.isascii() else _UNSAFE).sub(_escape, s)


def one_line(text: object) -> str:
    """``safe`` text on one line, for an error or warning line."""
    return " ".join(safe(text).split("\n"))
