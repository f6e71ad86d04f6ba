"""The message catalog: what agentdbg prints, in the language the user chose (``--lang``).

English is the source text, written in the code. Every other language is one gettext
catalog, ``agentdbg/locale/<lang>.po`` (the standard format translators' tools read and
Babel's ``pybabel extract``/``update`` keep in step with the code); adding a language is
adding one file. Catalogs are read here with a small reader: no compile step, no Babel at
run time, nothing imported until a language other than English is chosen.

``_("text")`` translates now; ``N_("text")`` only marks a text for extraction (a table
translated where it is shown); ``Msg`` keeps a template and its values so the engine can
record English and a renderer can show the chosen language. Protocol words (``tool_calls``,
``tool_call_id``, role names) stay in English in every catalog.
"""

from __future__ import annotations

import ast
import functools
import gettext
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOCALE_DIR = Path(__file__).parent / "locale"
DEFAULT = "en"


class Catalog:
    """One language's translations: msgid (with its context) -> msgstr(s)."""

    def __init__(self, lang: str, entries: dict[tuple[str | None, str], list[str]] | None = None,
                 plural: Callable[[int], int] | None = None):
        self.lang = lang
        self.entries = entries or {}
        self.plural = plural or (lambda n: int(n != 1))

    def gettext(self, text: str, context: str | None = None) -> str:
        found = self.entries.get((context, text))
        return found[0] if found and found[0] else text

    @functools.cached_property
    def _templates(self) -> list[tuple[str, str]]:
        found = []
        for (context, msgid), strs in self.entries.items():
            literal = re.sub(r"\{\w+\}", "", msgid)
            if context is None and strs and strs[0] and "{" in msgid and len(literal) >= 16:
                found.append((msgid.split("{", 1)[0], msgid))
        return sorted(found, key=lambda t: -len(re.sub(r"\{\w+\}", "", t[1])))

    def templates(self) -> list[tuple[str, str]]:
        """(the text before its first placeholder, template) of each translated template with
        placeholders and enough words of its own to be recognised, the most specific first."""
        return self._templates

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        found = self.entries.get((None, singular))
        if found:   # one form in a language without plurals (Chinese: nplurals=1)
            index = self.plural(n)
            if 0 <= index < len(found) and found[index]:
                return found[index]
        return singular if n == 1 else plural


_ENGLISH = Catalog(DEFAULT)
_current: Catalog = _ENGLISH


def languages() -> list[str]:
    """English and every language with a catalog file."""
    found = sorted(p.stem for p in LOCALE_DIR.glob("*.po")) if LOCALE_DIR.is_dir() else []
    return [DEFAULT] + [lang for lang in found if lang != DEFAULT]


def use(lang: str | None) -> None:
    """Print in ``lang`` from now on (English when None or "en")."""
    global _current
    _current = _ENGLISH if not lang or lang == DEFAULT else catalog(lang)


def language() -> str:
    return _current.lang


@functools.lru_cache(maxsize=8)
def catalog(lang: str) -> Catalog:
    """The catalog of ``lang``; ValueError naming the languages there are."""
    if not re.fullmatch(r"[A-Za-z]{2,3}(?:_[A-Za-z0-9]{2,8})?", lang):
        raise ValueError(f"no language {lang!r}; one of {', '.join(languages())}")
    path = LOCALE_DIR / f"{lang}.po"
    if not path.is_file():
        raise ValueError(f"no language {lang!r}; one of {', '.join(languages())}")
    entries = _read_catalog(path)
    header = entries.pop((None, ""), [""])[0]
    return Catalog(lang, entries, _plural_rule(header))


#: the largest cached catalog read (a catalog is a few hundred KB)
_CACHE_MAX = 16 << 20


def _read_catalog(path: Path) -> dict[tuple[str | None, str], list[str]]:
    """``read_po`` of the catalog at ``path``, from a JSON copy in the user's cache folder when
    there is one of these very bytes: reading the Chinese catalog's 6,000 lines took 20 ms of
    ``--help``'s 60, loading the copy 2 ms. A copy that cannot be read or written costs only
    the reading of the catalog."""
    import json
    import os
    import zlib

    data = path.read_bytes()
    name = f"catalog-{path.stem}-{zlib.crc32(data):08x}-{len(data)}.json"
    try:
        xdg = os.environ.get("XDG_CACHE_HOME")
        folder: Path | None = (Path(xdg) if xdg else Path.home() / ".cache") / "agentdbg"
    except RuntimeError:   # no home folder to be found
        folder = None
    try:
        if folder is not None and (folder / name).stat().st_size <= _CACHE_MAX:
            return _entries(json.loads((folder / name).read_bytes()))
    except (OSError, ValueError, TypeError):   # no copy yet, or one that is not ours
        pass
    entries = read_po(data.decode("utf-8"))
    if folder is not None:
        _save_copy(folder, name, json.dumps([[ctx, msgid, strs] for (ctx, msgid), strs in
                                             entries.items()], ensure_ascii=False).encode("utf-8"))
    return entries


def _entries(rows: Any) -> dict[tuple[str | None, str], list[str]]:
    """The catalog a cached copy holds; ValueError when it holds anything else."""
    entries: dict[tuple[str | None, str], list[str]] = {}
    for ctx, msgid, strs in rows:
        if type(msgid) is not str or type(strs) is not list or not (ctx is None or type(ctx) is str):
            raise ValueError("not a catalog")
        for text in strs:
            if type(text) is not str:
                raise ValueError("not a catalog")
        entries[(ctx, msgid)] = strs
    return entries


def _save_copy(folder: Path, name: str, data: bytes) -> None:
    """Write the copy atomically, and drop the copies of the catalog's earlier versions."""
    import os
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, folder / name)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return
    lang = name.split("-")[1]
    for old in folder.glob(f"catalog-{lang}-*.json"):
        if old.name != name:
            old.unlink(missing_ok=True)


def _(text: str) -> str:
    """``text`` in the chosen language."""
    return _current.gettext(text)


def pgettext(context: str, text: str) -> str:
    """``text`` in the chosen language, where the same English means other things."""
    return _current.gettext(text, context)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _current.ngettext(singular, plural, n)


def N_(text: str) -> str:
    """Mark ``text`` for the catalog without translating it yet."""
    return text


class _Frozen:
    """A read-only value compared by its fields (what ``@dataclass(frozen=True)`` gives, written
    out: every command imports this module, and creating a dataclass costs a millisecond)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:   # pickled to the analyst process
        return type(self), self._fields()

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"


class Msg(_Frozen):
    """A text to show later in the chosen language: a template (marked with ``N_``) and its
    values. ``str()`` is the English text (what transcripts record); ``tr()`` the chosen
    language's."""

    __slots__ = ("template", "values")
    template: str
    values: dict[str, Any]

    def __init__(self, template: str, values: dict[str, Any] | None = None) -> None:
        super().__init__(template, {} if values is None else values)

    def __str__(self) -> str:
        return self.template.format(**self.values)

    def tr(self, lang: str | None = None) -> str:
        """In the chosen language, or in ``lang`` (the offline model answers in the question's)."""
        book = _current if lang is None else in_language(lang)
        return book.gettext(self.template).format(**{k: tr(v, lang) for k, v in self.values.items()})

    @classmethod
    def parse(cls, template: str, text: str) -> Msg | None:
        """The ``Msg`` whose English is ``text`` (None when ``text`` is not ``template`` filled
        in): a recording keeps English, and a replay shows it in the chosen language. The
        values come back as text; the last placeholder takes the rest of ``text``. A template's
        ``{{``/``}}`` are its literal braces (a finding that quotes a JSON message)."""
        tokens = re.split(r"(\{\{|\}\}|\{\w+\})", template)
        names = [t[1:-1] for t in tokens[1::2] if t not in ("{{", "}}")]
        if len(set(names)) != len(names):
            return None
        last = max((i for i, t in enumerate(tokens) if i % 2 and t not in ("{{", "}}")), default=-1)
        pattern = "".join(re.escape(t) if i % 2 == 0 else re.escape(t[0]) if t in ("{{", "}}")
                          else f"(?P<{t[1:-1]}>.*{'' if i == last else '?'})"
                          for i, t in enumerate(tokens))
        m = re.fullmatch(pattern, text, re.DOTALL)
        return cls(template, m.groupdict()) if m else None


class Join(_Frozen):
    """Texts to show joined (each a ``Msg`` or plain), with a separator from the catalog."""

    __slots__ = ("parts", "sep")
    parts: tuple[Any, ...]
    sep: str

    def __init__(self, parts: tuple[Any, ...], sep: str = ", ") -> None:
        super().__init__(parts, sep)

    def __str__(self) -> str:
        return self.sep.join(str(p) for p in self.parts)

    def tr(self, lang: str | None = None) -> str:
        book = _current if lang is None else in_language(lang)
        return book.gettext(self.sep).join(tr(p, lang) for p in self.parts)


def tr(value: Any, lang: str | None = None) -> str:
    """A ``Msg`` (or ``Join``) translated into ``lang``, else the chosen language; anything else
    as text."""
    return value.tr(lang) if isinstance(value, (Msg, Join)) else str(value)


#: where Python's JSON parser stopped (``str(json.JSONDecodeError)``), and what it says there
JSON_AT = N_("{problem}: line {line} column {column} (char {char})")
JSON_PROBLEMS = frozenset((
    N_("Expecting value"), N_("Expecting ',' delimiter"), N_("Expecting ':' delimiter"),
    N_("Expecting property name enclosed in double quotes"), N_("Unterminated string starting at"),
    N_("Invalid control character at"), N_("Invalid \\escape"), N_("Invalid \\uXXXX escape"),
    N_("Extra data"), N_("Illegal trailing comma before end of object"),
    N_("Illegal trailing comma before end of array")))


def json_problem(error: object) -> Msg | str:
    """Python's JSON parser's error (the exception or its text) as a ``Msg`` whose English is
    the parser's own words (what is recorded) and which a screen says in the chosen language;
    any other text as it is."""
    text = str(error)
    found = Msg.parse(JSON_AT, text) if text.endswith(")") else None
    if found is None or not all(found.values[k].isdigit() for k in ("line", "column", "char")):
        return text
    problem = found.values["problem"]
    return Msg(JSON_AT, {**found.values,
                         "problem": Msg(problem) if problem in JSON_PROBLEMS else problem})


def recorded(text: str, nested: bool = False) -> str:
    """A text recorded in English (a transcript's stop detail, a model error) in the chosen
    language when the catalog has the template it was made from (its values as recorded: an
    API's own words stay verbatim); else as recorded. ``nested``: a value that is itself
    prose made from a template (a note built from pieces) is read back too, two levels deep;
    a value that looks like data (JSON, a quoted value, a word without spaces) stays."""
    if _current is _ENGLISH or not text:
        return text
    return _recorded(text, 2 if nested else 0)


def _recorded(text: str, depth: int) -> str:
    exact = _current.gettext(text)
    if exact != text:
        return exact
    for first, template in _current.templates():
        if text.startswith(first):
            found = Msg.parse(template, text)
            if found is not None:
                if depth:
                    found = Msg(template, {k: _recorded(v, depth - 1) if _prose(v) else v
                                           for k, v in found.values.items()})
                return found.tr()
    return text


def _prose(value: object) -> bool:
    return isinstance(value, str) and (" " in value or value[:1] == "(") \
        and value[:1] not in ("{", "[", '"', "'")


def in_language(lang: str) -> Catalog:
    """The catalog of ``lang`` (English when there is none)."""
    if lang == DEFAULT:
        return _ENGLISH
    try:
        return catalog(lang)
    except ValueError:
        return _ENGLISH


# -- the .po reader ------------------------------------------------------------------------

@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    """The reader's regular expressions, compiled when a catalog is first read (not when
    ``--help`` in English imports this module)."""
    return re.compile({
        "keyword": r"^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(\".*\")\s*$",
        "quoted": r'"((?:[^"\\]|\\.)*)"',
    }[name])


def read_po(text: str) -> dict[tuple[str | None, str], list[str]]:
    """The entries of a PO file: (context, msgid) -> [msgstr, msgstr[1] …]. Fuzzy and obsolete
    entries are left out, as gettext's own tools leave them out of a compiled catalog."""
    entries: dict[tuple[str | None, str], list[str]] = {}
    entry: dict[str, Any] = {}
    last: tuple[str, int] | None = None
    fuzzy = False
    keyword = _pattern("keyword")

    def flush() -> None:
        nonlocal entry, fuzzy, last
        if "msgid" in entry and not fuzzy:
            strs = entry.get("msgstr", {})
            entries[(entry.get("msgctxt"), entry["msgid"])] = [strs[i] for i in sorted(strs)]
        entry, fuzzy, last = {}, False, None

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            flush()
            continue
        if line.startswith("#"):
            if line.startswith("#,") and "fuzzy" in line:
                if "msgid" in entry:
                    flush()
                fuzzy = True
            continue
        m = keyword.match(line)
        if m:
            key, index, value = m.group(1), m.group(2), _unquote(m.group(3), number)
            if key in ("msgctxt", "msgid") and "msgstr" in entry:
                flush()   # no blank line between two entries
            if key.startswith("msgstr"):
                slot = int(index) if index is not None else 0
                entry.setdefault("msgstr", {})[slot] = value
                last = ("msgstr", slot)
            else:
                entry[key] = value
                last = (key, -1)
        elif line.startswith('"') and last is not None:
            value = _unquote(line, number)
            if last[0] == "msgstr":
                entry["msgstr"][last[1]] += value
            else:
                entry[last[0]] += value
        else:
            raise ValueError(f"line {number}: not PO syntax: {line[:60]!r}")
    flush()
    return entries


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v"}


def _unquote(quoted: str, number: int) -> str:
    inner = quoted[1:-1]
    if len(quoted) >= 2 and quoted[-1] == '"' and "\\" not in inner and '"' not in inner:
        return inner                  # most strings: no escape (the regex goes per character)
    m = _pattern("quoted").fullmatch(quoted)  # the common escapes: parsing each as Python is slow
    if m and not re.search(r"\\[^ntr\"\\abfv]", m.group(1)):
        return re.sub(r"\\(.)", lambda e: _ESCAPES[e.group(1)], m.group(1))
    try:
        value = ast.literal_eval(quoted)
    except (ValueError, SyntaxError):
        raise ValueError(f"line {number}: a string that is not closed: {quoted[:60]!r}") from None
    if not isinstance(value, str):
        raise ValueError(f"line {number}: not a string: {quoted[:60]!r}")
    return value


def _plural_rule(header: str) -> Callable[[int], int]:
    m = re.search(r"plural=([^;\n]+)", header)
    if not m:
        return lambda n: int(n != 1)
    try:
        return gettext.c2py(m.group(1).strip())
    except (ValueError, SyntaxError):
        return lambda n: int(n != 1)
