"""A model's note as recorded in English, read back in the chosen language where it is shown
(step mode, the run view, the report): the offline model's, a proxy recording's stream shape,
and a replay's around the note it replays.

The offline model's note is built from pieces: the plan's notes joined by ``; ``, a call's
``{tool}: {why}`` whose ``why`` joins each parameter's ``{key}={value} ({why})`` with ``, ``;
the proxy joins a stream's shape lines with ``; `` too; a replay wraps the recorded note in
``replayed turn {turn}; recorded note: {note}`` (a replay of a replay, twice). Each piece is
read back into its own template, so the translation is a template per shape, never English
words put together; values (tool names, the question's words, patterns, ids) stay as
recorded, and what is not recognised stays as it is."""

from __future__ import annotations

import re

from agentdbg.i18n import DEFAULT, N_, Join, Msg, language, recorded

#: a call the plan makes (offline_plan) and one parameter's value with why (offline_fill)
CALL = N_("{tool}: {why}")
PARAM = N_("{key}={value} ({why})")

_TOOL = re.compile(r"([A-Za-z0-9_.-]{1,64}): (.+)", re.S)
_PARAM = re.compile(r"""([\w.-]+)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^ ]+) \((.*?)\)(?=, [\w.-]+=|$)""",
                    re.S)
MAX_NOTE = 4000
#: a replayed turn's note (``providers.replay``), the longest first: what the recording said
#: of that turn is the last value
REPLAYED = (N_("replayed turn {turn} (request {request} of the recording); recorded note: {note}"),
            N_("replayed turn {turn}; recorded note: {note}"),
            N_("replayed turn {turn} (request {request} of the recording)"),
            N_("replayed turn {turn}"))


def read_note(note: str) -> str:
    """``note`` (as a model's note is recorded: English) in the chosen language; a note already
    in it (a recording made before notes were recorded in English) as it is."""
    if not note or language() == DEFAULT:
        return note
    if len(note) > MAX_NOTE:
        return recorded(note)
    return _replayed(note) or Join(tuple(_piece(p) for p in split(note, "; ")), N_("; ")).tr()


def _replayed(note: str) -> str | None:
    """A replay's note in the chosen language, the note it replays read back too (a replay of
    a replay's recording wraps it again; ``MAX_NOTE`` bounds how deep)."""
    for template in REPLAYED:
        found = Msg.parse(template, note)
        if found is None or not all(found.values[k].isdigit() for k in ("turn", "request")
                                    if k in found.values):
            continue
        values = dict(found.values)
        if "note" in values:
            values["note"] = read_note(values["note"])
        return Msg(template, values).tr()
    return None


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
        from agentdbg.wire.common import stream_note  # a stream's shape: short ones too

        return stream_note(piece)
    why = Join(tuple(Msg(PARAM, {"key": k, "value": v, "why": recorded(w, nested=True)})
                     for k, v, w in (p.groups() for p in params)))
    return Msg(CALL, {"tool": m.group(1), "why": why}).tr()
