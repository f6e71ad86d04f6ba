"""IANA time zones for the places a question names, from offline sources only.

A parameter whose examples are IANA names (``America/New_York``) takes a zone for a place
the question names, matched by the zone's last component in the standard library's
``zoneinfo.available_timezones()``: "Tokyo" -> Asia/Tokyo, "New York" -> America/New_York,
"São Paulo" -> America/Sao_Paulo (a capitalised name, not part of a longer IANA name).
Names in Chinese, Japanese or Korean come from CLDR's exemplar city names when the
``babel`` package is installed ("东京" -> Asia/Tokyo); without it they are not matched and
``unmatched_script`` says why. No table of names is kept here.

Only the geographic areas count (Africa … Pacific; not ``Etc/`` or ``US/`` aliases, nor
Antarctica's research stations, which are mostly named after people). A name
shared by several zones that keep the same clock (links such as Asia/Istanbul and
Europe/Istanbul) gives the first in order, and the reason says so; one shared by zones
with different clocks gives none.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from agentdbg.i18n import Msg

AREAS = frozenset({"Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia",
                   "Europe", "Indian", "Pacific"})
#: areas whose zone names are not places a question names: Antarctica's are research
#: stations, mostly named after people (Casey, Davis, Palmer, Mawson)
_NOT_PLACES = frozenset({"Antarctica"})
MAX_WORDS = 4          # words in one place name ("Port of Spain", "Dar es Salaam")
MAX_PLACES = 20
_WORD = re.compile(r"[^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
# instants (UTC, seconds) at which links must agree to count as one clock: four seasons a year
_SAMPLES = tuple(946_684_800 + d * 86_400 for d in range(0, 365 * 31, 91))


@dataclass(frozen=True)
class Place:
    start: int
    end: int
    text: str
    zone: str
    why: Msg


@functools.lru_cache(maxsize=1)
def zone_names() -> frozenset[str]:
    try:
        import zoneinfo

        return frozenset(zoneinfo.available_timezones())
    except Exception:  # noqa: BLE001 - no time zone data on this machine: nothing matches
        return frozenset()


def is_zone_list(values: Any) -> bool:
    """Examples that are IANA time zone names: each an ``Area/Place`` of a geographic area,
    at least one of them a zone this machine knows (a server's own examples may name a zone
    that does not exist, such as America/San_Francisco)."""
    if not isinstance(values, (list, tuple)) or not values or \
            not all(isinstance(v, str) and "/" in v and v.split("/")[0] in AREAS for v in values):
        return False
    return any(v in zone_names() for v in values)


def places(question: str) -> list[Place]:
    """The places ``question`` names that are the city of a zone, in question order."""
    found = _english(question)
    if _HAN.search(question) or _KANA.search(question) or _HANGUL.search(question):
        taken = [(p.start, p.end) for p in found]
        found += [p for p in _cldr(question) if not any(s < p.end and p.start < e for s, e in taken)]
    return sorted(found, key=lambda p: p.start)[:MAX_PLACES]


def sources(question: str) -> Msg:
    """Where the names of places were looked up for this question, for the user."""
    if not (_HAN.search(question) or _KANA.search(question) or _HANGUL.search(question)):
        return Msg("zoneinfo's city names (written with a capital, as in 'Tokyo')")
    if _babel() is None:
        return Msg("zoneinfo's city names; names in Chinese, Japanese or Korean need CLDR's city "
                   "names from the babel package, which is not installed")
    return Msg("zoneinfo's city names and CLDR's (babel)")


# -- English names from zoneinfo -------------------------------------------------

def _key(text: str) -> str:
    """'São Paulo' / 'Sao_Paulo' -> 'sao paulo'; "St. John's" -> 'st johns'."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    plain = plain.replace("_", " ").replace("’", "").replace("'", "").replace(".", "")
    return " ".join(plain.lower().split())


@functools.lru_cache(maxsize=1)
def _english_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for zone in sorted(zone_names()):
        if zone.split("/")[0] in AREAS - _NOT_PLACES and "/" in zone:
            index.setdefault(_key(zone.rsplit("/", 1)[1]), []).append(zone)
    return {k: tuple(v) for k, v in index.items()}


def _english(question: str) -> list[Place]:
    index = _english_index()
    tokens = [(m.start(), m.end()) for m in _WORD.finditer(question)]
    out: list[Place] = []
    i = 0
    while i < len(tokens):
        hit = None
        if question[tokens[i][0]].isupper() and not _glued(question, tokens[i][0] - 1):
            for n in range(min(MAX_WORDS, len(tokens) - i), 0, -1):
                start, end = tokens[i][0], tokens[i + n - 1][1]
                text = question[start:end].rstrip(".")
                if n > 1 and not _spaced(question, tokens[i:i + n]):
                    continue
                zones = index.get(_key(text))
                if zones and not _glued(question, start + len(text)):
                    hit = (n, _place(start, start + len(text), text, zones, Msg("zoneinfo")))
                    break
        if hit and hit[1] is not None:
            out.append(hit[1])
            i += hit[0]
        else:
            i += 1
    return out


def _glued(question: str, i: int) -> bool:
    """A '/' or '_' at ``i``: the word is part of an IANA name written out (Asia/Tokyo)."""
    return 0 <= i < len(question) and question[i] in "/_"


def _spaced(question: str, tokens: list[tuple[int, int]]) -> bool:
    return all(question[a[1]:b[0]] == " " for a, b in itertools.pairwise(tokens))


# -- other scripts from CLDR (babel) ---------------------------------------------

@functools.lru_cache(maxsize=1)
def _babel() -> Any:
    try:
        import babel  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return babel


def _locales(question: str) -> tuple[str, ...]:
    out: tuple[str, ...] = ()
    if _HAN.search(question):
        out += ("zh", "zh_Hant", "ja")
    if _KANA.search(question) and "ja" not in out:
        out += ("ja",)
    if _HANGUL.search(question):
        out += ("ko",)
    return out


@functools.lru_cache(maxsize=8)
def _cldr_index(locale: str) -> dict[str, tuple[str, ...]]:
    babel = _babel()
    if babel is None:
        return {}
    try:
        zones = babel.Locale.parse(locale).time_zones
        cities = [(z, zones[z].get("city")) for z in zones]
    except Exception:  # noqa: BLE001 - missing or broken locale data: no names
        return {}
    names = zone_names()
    index: dict[str, list[str]] = {}
    for zone, city in sorted(cities):
        if isinstance(city, str) and len(city) >= 2 and zone in names and \
                zone.split("/")[0] in AREAS - _NOT_PLACES:
            index.setdefault(city, []).append(zone)
    return {k: tuple(v) for k, v in index.items()}


def _cldr(question: str) -> list[Place]:
    out: list[Place] = []
    if _babel() is None:
        return out
    for locale in _locales(question):
        index = _cldr_index(locale)
        for name in sorted(index, key=lambda n: (-len(n), n)):
            start = question.find(name)
            while start >= 0 and len(out) < MAX_PLACES:
                end = start + len(name)
                if not any(p.start < end and start < p.end for p in out):
                    place = _place(start, end, name, index[name],
                                   Msg("CLDR's {locale} city names (babel)", {"locale": locale}))
                    if place is not None:
                        out.append(place)
                start = question.find(name, end)
    return out


# -- one zone per name -------------------------------------------------------------

def _place(start: int, end: int, text: str, zones: tuple[str, ...], source: Msg) -> Place | None:
    if len(zones) > 1 and not _same_clock(zones):
        return None
    said = {"text": repr(text), "zone": zones[0], "source": source, "others": ", ".join(zones[1:])}
    why = Msg("{text} is the city of the IANA time zone {zone} in {source} ({others}: the same "
              "clock)", said) if len(zones) > 1 else \
        Msg("{text} is the city of the IANA time zone {zone} in {source}", said)
    return Place(start, end, text, zones[0], why)


@functools.lru_cache(maxsize=256)
def _same_clock(zones: tuple[str, ...]) -> bool:
    import datetime as dt
    import zoneinfo

    try:
        infos = [zoneinfo.ZoneInfo(z) for z in zones]
    except Exception:  # noqa: BLE001 - unreadable zone data: not provably the same
        return False
    for t in _SAMPLES:
        moment = dt.datetime.fromtimestamp(t, dt.timezone.utc)
        if len({moment.astimezone(i).utcoffset() for i in infos}) > 1:
            return False
    return True
