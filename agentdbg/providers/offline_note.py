"""The offline model's note, recorded in English, read back in the chosen language (a replay
shows the recorded note). The note is built from pieces: the plan's notes joined by ``; ``,
a call's ``{tool}: {why}`` whose ``why`` joins each parameter's ``{key}={value} ({why})``
with ``, ``. Each piece is read back into its own template, so the translation is a
template per shape, never English words put together; values (tool names, the question's
words, patterns) stay as recorded, and what is not recognised stays English."""

from __future__ import annotations

import re

from agentdbg.i18n import N_, Join, Msg, recorded

#: a call the plan makes (offline_plan) and one parameter's value with why (offline_fill)
CALL = N_("{tool}: {why}")
PARAM = N_("{key}={value} ({why})")

_TOOL = re.compile(r"([A-Za-z0-9_.-]{1,64}): (.+)", re.S)
_PARAM = re.compile(r"""([\w.-]+)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^ ]+) \((.*?)\)(?=, [\w.-]+=|$)""",
                    re.S)
MAX_NOTE = 4000


def read_note(note: str) -> str:
    """``note`` (as the offline model recorded it) in the chosen language."""
    if not note or len(note) > MAX_NOTE:
        return recorded(note)
    return Join(tuple(_piece(p) for p in split(note, "; ")), N_("; ")).tr()


def split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside quoted values (``'a; b'`` is one value); split
    everywhere when a quote is left open (an apostrophe in prose)."""
    if "'" not in text and '"' not in text:   # nothing quoted: the walk below splits as this
        return text.split(sep)
    out, start, i, quote = [], 0, 0, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"" and (i == 0 or not text[i - 1].isalnum()):
            quote = ch
        elif text.startswith(sep, i):
            out.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    return text.split(sep) if quote else out + [text[start:]]


def _piece(piece: str) -> str:
    m = _TOOL.fullmatch(piece)
    params = list(_PARAM.finditer(m.group(2))) if m else []
    if m is None or not params or ", ".join(p.group(0) for p in params) != m.group(2):
        return recorded(piece, nested=True)
    why = Join(tuple(Msg(PARAM, {"key": k, "value": v, "why": recorded(w, nested=True)})
                     for k, v, w in (p.groups() for p in params)))
    return Msg(CALL, {"tool": m.group(1), "why": why}).tr()
