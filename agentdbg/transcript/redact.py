"""Secrets never reach a transcript: known key formats, the key itself, the user's patterns."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "[REDACTED]"
DEFAULT_REDACT = [
    r"sk-[A-Za-z0-9_\-]{16,}",                 # OpenAI-style and many compatible providers
    r"(?i:bearer)\s+[A-Za-z0-9._\-]{12,}",      # authorization headers
    r"AKIA[0-9A-Z]{16}",                        # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{30,}",              # GitHub tokens
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",           # Slack tokens
    r"AIza[0-9A-Za-z_\-]{35}",                  # Google API keys
]
#: what every ``DEFAULT_REDACT`` pattern starts with (its first match characters): ASCII, which
#: JSON writes as it is; and "bearer" in any case (no other character matches its letters
#: case-insensitively). A JSON text holding none of them holds no default key format.
DEFAULT_LEADS = ("sk-", "AKIA", "gh", "xox", "AIza")
ANY_CASE_LEAD = b"bearer"
_LEADS_UTF8 = tuple(lead.encode() for lead in DEFAULT_LEADS)
_SK, _AKIA, _GH, _XOX, _AIZA = _LEADS_UTF8   # searched unrolled (``may_hold_secret``)


_REMEMBER_FROM = 1 << 16   # texts this long are remembered once redacted …
_REMEMBERED = 128 << 20    # … the latest of them, up to this many characters (the texts are
                           # mostly held anyway, by the proxy's conversations, and a text with
                           # nothing to redact is remembered as itself)


class Redactor:
    def __init__(self, patterns: Iterable[str] = (), secrets: Iterable[str] = ()):
        self.pattern = re.compile("|".join(f"(?:{p})" for p in DEFAULT_REDACT))
        self.extra = []
        for p in patterns:
            try:
                self.extra.append(re.compile(p))
            except re.error as exc:
                from agentdbg.errors import ConfigError
                from agentdbg.i18n import Msg

                raise ConfigError(Msg("--redact {pattern} is not a valid regular expression: {why}",
                                      {"pattern": repr(p), "why": exc})) from None
        self.secrets: list[str] = []
        self._written: set[str] = set()   # each secret as JSON writes it (both ways), unquoted
        self._written_utf8: set[bytes] = set()   # ... and as UTF-8
        for secret in secrets:
            self.add(secret)
        # long texts redacted lately: the proxy writes one message to a transcript and to the
        # console several times, and scanning 16 MB costs a second each time
        self._recent: dict[str, str] = {}
        self._held = 0

    def add(self, secret: str) -> None:
        """One more value never to write (one shorter than 4 characters would cut every word)."""
        if secret and len(secret) >= 4 and secret not in self.secrets:
            self.secrets.append(secret)
            # the longest first: "alice:pw" goes whole before "alice" could cut it
            self.secrets.sort(key=len, reverse=True)
            self._written.update(json.dumps(secret, ensure_ascii=a)[1:-1] for a in (False, True))
            self._written_utf8 = {w.encode("utf-8", "surrogatepass") for w in self._written}
            self._recent, self._held = {}, 0

    def may_hold_secret(self, text: str | bytes) -> bool:
        """Whether the JSON text ``text`` may hold something ``__call__`` redacts, in a string
        or a key. False only where the walk would change nothing: JSON writes a string one
        character at a time, so a secret inside a string is in its text as written (or as
        ``ensure_ascii`` writes it), and a default key format starts with a lead (see
        ``DEFAULT_LEADS``). The user's ``--redact`` patterns may match anything: with one,
        always True. Literal searches: a tenth of the walk's time, or of one regex's.
        ``text`` may be the line's UTF-8 bytes (the writer's): a text holds a string exactly
        where its UTF-8 bytes hold the string's, so the answer is the same."""
        if self.extra:
            return True
        if isinstance(text, str):
            if any(lead in text for lead in DEFAULT_LEADS):
                return True
            data = text.encode("utf-8", "surrogatepass")
            if ANY_CASE_LEAD in data.lower():   # ASCII lowered
                return True
            return any(written in text for written in self._written)
        # the leads searched one by one, unrolled (a generator over ``_LEADS_UTF8`` cost a
        # third of the test: 3,001 lines a 1,000-turn replay), by ``find``: ``bytes in
        # bytes`` first tries the right side as an integer, and makes and drops a TypeError
        find = text.find
        if find(_SK) >= 0 or find(_AKIA) >= 0 or find(_GH) >= 0 or find(_XOX) >= 0 \
                or find(_AIZA) >= 0 or text.lower().find(ANY_CASE_LEAD) >= 0:
            return True
        written = self._written_utf8
        return bool(written) and any(find(secret) >= 0 for secret in written)

    def text(self, value: str) -> str:
        if len(value) < _REMEMBER_FROM:
            return self._text(value)
        done = self._recent.get(value)
        if done is None:
            done = self._text(value)
            self._held += len(value)
            while self._recent and self._held > _REMEMBERED:
                self._held -= len(next(iter(self._recent)))
                self._recent.pop(next(iter(self._recent)))
            self._recent[value] = done
        return done

    def _text(self, value: str) -> str:
        for secret in self.secrets:          # the longest first (see ``add``)
            value = value.replace(secret, REDACTED)
        for pattern in self.extra:  # the user's patterns may match short values
            value = pattern.sub(REDACTED, value)
        if len(value) < 12:  # no default key format is that short
            return value
        return self.pattern.sub(REDACTED, value)

    def __call__(self, value: Any) -> Any:
        try:
            return self._walk(value)
        except RecursionError:   # nested deeper than the stack: the same, without recursion
            return self._walk_deep(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._key(k): self._walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._walk(v) for v in value]
        return value

    def _key(self, key: Any) -> Any:
        """A key redacted like a string (a tool's JSON object may use a key as a value)."""
        return self.text(key) if isinstance(key, str) else key

    def _walk_deep(self, value: Any) -> Any:
        """``_walk`` with a stack of its own: any depth, the same result."""
        root: list = [None]
        todo: list[tuple[Any, Any, Any]] = [(value, root, 0)]
        out: Any
        while todo:
            item, into, key = todo.pop()
            if isinstance(item, str):
                into[key] = self.text(item)
            elif isinstance(item, dict):
                named = {self._key(k): v for k, v in item.items()}   # as _walk: the last wins
                into[key] = out = dict.fromkeys(named)       # the keys in their order
                todo.extend((v, out, k) for k, v in named.items())
            elif isinstance(item, (list, tuple)):
                into[key] = out = [None] * len(item)
                todo.extend((v, out, i) for i, v in enumerate(item))
            else:
                into[key] = item
        return root[0]


SECRET_PARAM = re.compile(r"key|token|secret|sig|password|auth|credential", re.IGNORECASE)


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its user info (as written and percent-decoded, and the
    ``Authorization: Basic`` token an HTTP client makes of it) and secret-looking query values."""
    if not url:
        return []
    parts = urlsplit(url)
    found = [v for v in (parts.username, parts.password) if v]
    if parts.username is not None or parts.password is not None:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        pair = f"{user}:{password}"                        # what Basic auth encodes
        basic = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        found += [v for v in (user, password, pair, basic) if v and v not in found]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if v and SECRET_PARAM.search(k)]
    return found


def safe_url(url: str | None) -> str | None:
    """``url`` without user info and with secret-looking query values replaced."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    if ":" in (parts.hostname or ""):
        netloc = f"[{parts.hostname}]" + (f":{parts.port}" if parts.port else "")
    query = urlencode([(k, REDACTED if v and SECRET_PARAM.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="[]")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
