"""The relay's copy of each response, for the analyst: bounded, and decoded only with a cap.

The app gets every byte the upstream sends, as sent. The analyst gets a copy of at most
``COPY_CAP`` bytes of each response, while all copies being filled at once stay under
``COPY_BUDGET`` (a hundred slow giant streams cost the relay at most that). A body the upstream
compressed (``content-encoding: gzip`` or ``deflate``, even though the proxy asks for
``identity``) is inflated on the analyst's side, incrementally and never past ``DECODED_CAP``:
a 510 KB answer that inflates to gigabytes costs the analyst 32 MB. Whatever was cut is said,
in the transcript and on the console.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from agentdbg.i18n import N_, Msg
from agentdbg.server.net import MAX_BODY

COPY_CAP = MAX_BODY            # bytes of one response the analyst gets
COPY_BUDGET = 8 * MAX_BODY     # bytes of all copies being filled at once, in the relay
DECODED_CAP = MAX_BODY         # bytes a compressed copy may inflate to
_STEP = 1 << 20                # inflate this much at a time


class Budget:
    """The bytes all copies in progress hold (the relay's event loop only: no lock)."""

    def __init__(self, limit: int = COPY_BUDGET):
        self.limit, self.used = limit, 0

    def take(self, n: int) -> bool:
        if self.used + n > self.limit:
            return False
        self.used += n
        return True

    def give(self, n: int) -> None:
        self.used -= n


class Copy:
    """What the analyst will get of one response: the first bytes, up to the caps."""

    def __init__(self, budget: Budget, cap: int = COPY_CAP):
        self.budget, self.cap = budget, cap
        self.data = bytearray()
        self.received = 0                  # every byte the upstream sent (and the app got)
        self.cut_by: str | None = None     # why the copy stopped short

    def add(self, chunk: bytes) -> None:
        self.received += len(chunk)
        if self.cut_by is not None:
            return
        room = self.cap - len(self.data)
        part = chunk[:room] if len(chunk) > room else chunk
        if not self.budget.take(len(part)):
            self.cut_by = "budget"
            return
        self.data += part
        if len(part) < len(chunk):
            self.cut_by = "cap"

    def release(self) -> bytes:
        """The copy as bytes; its share of the budget is free again."""
        data = bytes(self.data)
        self.budget.give(len(self.data))
        self.data = bytearray()
        return data


@dataclass
class Cut:
    """How a response's copy was cut (None fields: not cut that way)."""

    received: int                  # bytes the upstream sent
    kept: int                      # bytes the analyst got
    by: str | None = None          # "cap" | "budget"

    def note(self) -> str | None:
        if self.kept >= self.received:
            return None
        why = (N_("the copy of one response is capped at {size}").format(size=size_text(COPY_CAP))
               if self.by == "cap" else
               N_("copies of responses in flight are capped at {size} together").format(
                   size=size_text(COPY_BUDGET)))
        return N_("agentdbg analysed the first {kept} of the {received} the upstream sent ({why}); "
                  "the app got all of it").format(kept=size_text(self.kept),
                                                  received=size_text(self.received), why=why)


def decoded(data: bytes, encoding: str | None, cap: int = DECODED_CAP) -> tuple[bytes | None, str | None]:
    """``data`` without its content encoding, at most ``cap`` bytes of it, and a note when it was
    cut or could not be decoded (then the bytes are None). Identity passes through."""
    name = (encoding or "identity").strip().lower()
    if name in ("", "identity"):
        return data, None
    if name not in ("gzip", "x-gzip", "deflate"):
        return None, N_("the upstream sent a {encoding}-encoded body (the proxy asked for identity), "
                        "which agentdbg does not decode: relayed as sent, not analysed").format(
            encoding=repr(name))
    wbits = 16 + zlib.MAX_WBITS if name != "deflate" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    out = bytearray()
    pending = data
    try:
        while pending and len(out) < cap:
            out += inflater.decompress(pending, min(_STEP, cap - len(out)))
            pending = inflater.unconsumed_tail
    except zlib.error as exc:
        if name == "deflate" and not out:   # "deflate" as raw deflate, as some servers send it
            return decoded_raw(data, cap)
        return None, N_("the upstream's {encoding} body does not decompress ({error}): not "
                        "analysed").format(encoding=name, error=exc)
    if pending:
        return bytes(out), _inflates(name, cap)
    return bytes(out), None


def decoded_raw(data: bytes, cap: int) -> tuple[bytes | None, str | None]:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, cap)
    except zlib.error as exc:
        return None, N_("the upstream's {encoding} body does not decompress ({error}): not "
                        "analysed").format(encoding="deflate", error=exc)
    if inflater.unconsumed_tail:
        return out, _inflates("deflate", cap)
    return out, None


def _inflates(encoding: str, cap: int) -> str:
    return N_("the upstream's {encoding} body inflates past {size}: agentdbg analysed the first "
              "{first} of it; the app got it as sent").format(encoding=encoding, size=size_text(cap),
                                                               first=size_text(cap))


def size_text(n: int) -> str:
    return str(size_said(n))


def size_said(n: int) -> str | Msg:
    """``n`` bytes in KB, MB or GB, or a ``Msg`` of bytes (its word in the chosen language)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return Msg(N_("{n} bytes"), {"n": n})
