"""Schema ``pattern`` matching for the offline model, bounded on hostile patterns.

A tool definition is untrusted input: a pattern such as ``^(a+)+$`` takes exponential
time in a backtracking engine. With ``google-re2`` installed, patterns run on RE2 (linear
time; a pattern RE2 cannot compile, e.g. a lookahead or a back-reference, is skipped).
Without it, Python's ``re`` runs only patterns whose shape cannot backtrack badly: no
repetition inside a repetition, no alternation inside a repetition, no back-references
or lookarounds, at most one unbounded repetition, and never on more than
``MAX_FALLBACK_TEXT`` characters. A pattern that cannot be used is reported as such
(``None``), never guessed at.
"""

from __future__ import annotations

import functools
import re
from typing import Any

MAX_PATTERN = 1000        # characters of pattern source
MAX_TEXT = 20_000         # characters searched with RE2
MAX_FALLBACK_TEXT = 2000  # characters searched with Python's re
_UNBOUNDED = 64           # a {m,n} with n above this counts as unbounded

Span = tuple[int, int, str]


class _Pattern:
    def __init__(self, rx: Any, limit: int):
        self.rx, self.limit = rx, limit

    def spans(self, text: str) -> list[Span]:
        return [(m.start(), m.end(), m.group(0))
                for m in self.rx.finditer(text[:self.limit]) if m.end() > m.start()]

    def search(self, text: str) -> bool:
        return len(text) <= self.limit and self.rx.search(text) is not None


def engine() -> str:
    """``re2`` or ``re`` (bounded): what schema patterns run on here."""
    return "re2" if _re2() is not None else "re"


def find_all(pattern: str, text: str) -> list[Span] | None:
    """Where a value fitting ``pattern`` occurs inside ``text``: (start, end, value) for each
    non-empty match of the pattern without its ``^``/``$`` anchors; None: unusable pattern.
    Callers check each value against the whole pattern with ``search``."""
    body = pattern[1:] if pattern.startswith("^") else pattern
    if body.endswith("$") and not body.endswith("\\$"):
        body = body[:-1]
    compiled = _compile(body)
    return None if compiled is None or _compile(pattern) is None else compiled.spans(text)


def search(pattern: str, value: str) -> bool | None:
    """JSON Schema semantics (the pattern may match anywhere); None: cannot be checked."""
    compiled = _compile(pattern)
    if compiled is None or len(value) > compiled.limit:
        return None
    return compiled.search(value)


@functools.lru_cache(maxsize=1)
def _re2() -> Any:
    try:
        import re2
    except ImportError:
        return None
    return re2


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> _Pattern | None:
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
        return None
    re2 = _re2()
    if re2 is not None:
        try:
            return _Pattern(re2.compile(_to_re2(pattern), _re2_options(re2)), MAX_TEXT)
        except Exception:  # noqa: BLE001 - re2.error and friends: RE2 cannot run it
            return None
    if not _safe_for_backtracking(pattern):
        return None
    try:
        return _Pattern(re.compile(pattern), MAX_FALLBACK_TEXT)
    except (re.error, RecursionError, OverflowError):
        return None


def _re2_options(re2: Any) -> Any:
    options = re2.Options()
    options.log_errors = False   # RE2 would print the pattern to stderr
    options.max_mem = 4 << 20
    return options


_ECMA_UNICODE = re.compile(r"(?<!\\)((?:\\\\)*)\\u([0-9a-fA-F]{4})")


def _to_re2(pattern: str) -> str:
    """JSON Schema patterns are ECMA-262: ``\\uXXXX`` and ``(?<name>`` differ in RE2."""
    pattern = _ECMA_UNICODE.sub(lambda m: m.group(1) + "\\x{" + m.group(2) + "}", pattern)
    return pattern.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")


def _safe_for_backtracking(pattern: str) -> bool:
    try:
        parser: Any = getattr(re, "_parser", None)
        if parser is None:  # Python 3.10
            import sre_parse as parser
        tree = parser.parse(pattern)
    except Exception:  # noqa: BLE001 - unparsable: not usable
        return False
    unbounded = [0]
    return _walk(tree, False, unbounded) and unbounded[0] <= 1


def _walk(items: Any, in_repeat: bool, unbounded: list[int], depth: int = 0) -> bool:
    if depth > 50:
        return False
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _lo, hi, sub = arg
            if in_repeat:
                return False
            if hi > _UNBOUNDED:
                unbounded[0] += 1
            if not _walk(sub, True, unbounded, depth + 1):
                return False
        elif name == "BRANCH":
            if in_repeat:
                return False
            if not all(_walk(b, in_repeat, unbounded, depth + 1) for b in arg[1]):
                return False
        elif name == "SUBPATTERN":
            if not _walk(arg[-1], in_repeat, unbounded, depth + 1):
                return False
        elif name in ("GROUPREF", "GROUPREF_EXISTS", "ASSERT", "ASSERT_NOT", "ATOMIC_GROUP"):
            return False
    return True
