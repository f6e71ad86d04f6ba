"""Helpers over the OpenAI Chat Completions message shape.

Messages are kept as plain dicts in the wire format (``role``, ``content``,
``tool_calls``, ``tool_call_id`` ...). That is what users paste, what the API
receives and what the checker must judge even when it is malformed, so the
engine, the checker, transcripts and renderers all share this one shape.
"""

from __future__ import annotations

import functools
import json
import re
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

try:
    from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - CPython has it
    _c_make_encoder = None

_MISSING = object()
#: a tool name every API accepts: "a-z, A-Z, 0-9, or contain underscores and dashes, with a
#: maximum length of 64" (OpenAI's function-calling guide; Anthropic's pattern is the same)
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Vocabulary(frozenset[str]):
    """The words of a format (item types, block types, part types). A value read from a
    request is data of any JSON type: ``in`` answers False for one that cannot be hashed (a
    ``"type"`` that is a list), never ``TypeError``."""

    def __contains__(self, item: object) -> bool:
        try:
            return super().__contains__(item)
        except TypeError:
            return False


class VocabularyMap(dict[str, str]):
    """A dict keyed by the words of a format: ``in`` and ``get`` take a value of any JSON type
    (one that cannot be hashed is not there)."""

    def __contains__(self, key: object) -> bool:
        try:
            return super().__contains__(key)
        except TypeError:
            return False

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return super().get(key, default)
        except TypeError:
            return default


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: "an object", "an integer", "null" … (never a Python
    type name such as "a int" or "a dict")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    kinds = {dict: "an object", list: "an array", str: "a string", int: "an integer",
             float: "a number"}
    return next((kind for t, kind in kinds.items() if isinstance(value, t)),
                f"a {type(value).__name__}")


def token_count(value: Any) -> int:
    """A recorded token count as a number to add up: 0 for anything that is not one (a
    string, a bool, ``NaN``, ``Infinity``, ``1e400``, a negative or absurd number) — usage
    comes from endpoints and transcripts, and is data."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if 0 <= value < 1e15 else 0   # NaN fails both comparisons


def a_or_an(word: str) -> str:
    """``word`` with its indefinite article: "an assistant", "a user"."""
    return f"{'an' if str(word)[:1].lower() in 'aeiou' and word else 'a'} {word}"


def canonical_json(value: Any) -> str:
    """Stable JSON text: sorted keys, no whitespace, unicode kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def utf8_json(value: Any, **kw: Any) -> str:
    """``json.dumps`` with unicode kept, as text that encodes to UTF-8: a lone surrogate
    (valid in JSON, not in UTF-8; e.g. from ``"\\ud800"`` in a model's output) makes the
    whole text use ``\\u`` escapes instead, which read back identically. A value nested
    deeper than the stack allows is encoded without recursion (``kw``: ``default`` only)."""
    text = _dumps(value, False, kw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _dumps(value, True, kw)
    return text


def utf8_json_bytes(value: Any, **kw: Any) -> bytes:
    """``utf8_json(value, **kw)`` as UTF-8, encoded once (the check is the encoding)."""
    try:
        return _dumps(value, False, kw).encode("utf-8")
    except UnicodeEncodeError:
        return _dumps(value, True, kw).encode("utf-8")


def _dumps(value: Any, ascii_only: bool, kw: dict) -> str:
    try:
        if type(value) is dict and kw.keys() == {"default"} and callable(kw["default"]) \
                and _c_make_encoder is not None:
            # what ``json.dumps`` runs for an object, without making a JSONEncoder each time
            # (a transcript line each event: a third of its encoding time)
            return "".join(_c_make_encoder(
                {}, kw["default"], encode_basestring_ascii if ascii_only else encode_basestring,
                None, ": ", ", ", False, False, True)(value, 0))
        return json.dumps(value, ensure_ascii=ascii_only, **kw)
    except RecursionError:
        if set(kw) - {"default"}:
            raise
        return deep_json(value, ascii_only=ascii_only, default=kw.get("default"))


class _Raw(str):
    """JSON text ``deep_json`` writes as it is (punctuation, an encoded key)."""


def deep_json(value: Any, *, ascii_only: bool = False, default: Any = None) -> str:
    """``json.dumps(value, ensure_ascii=ascii_only, default=default)`` with a stack of its own:
    the same text for a value of any depth (dicts, lists, tuples, strings, numbers, booleans,
    None; anything else through ``default``)."""
    from json.encoder import encode_basestring, encode_basestring_ascii

    string = encode_basestring_ascii if ascii_only else encode_basestring
    out: list[str] = []
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        if type(item) is _Raw:
            out.append(item)
        elif isinstance(item, str):
            out.append(string(item))
        elif item is None or isinstance(item, (bool, int, float)):
            out.append(json.dumps(item))
        elif isinstance(item, dict):
            parts: list[Any] = [_Raw("{")]
            for n, (k, v) in enumerate(item.items()):
                key = k if isinstance(k, str) else json.dumps(k)   # as json.dumps words a key
                parts += [_Raw(", " if n else ""), _Raw(string(key) + ": "), v]
            todo.extend(reversed([*parts, _Raw("}")]))
        elif isinstance(item, (list, tuple)):
            parts = [_Raw("[")]
            for n, v in enumerate(item):
                parts += [_Raw(", " if n else ""), v]
            todo.extend(reversed([*parts, _Raw("]")]))
        elif default is not None:
            todo.append(default(item))
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
    return "".join(out)


#: how deep a parsed value may nest where it is shown, compared or exported: code that walks
#: it (a diff, a pretty-printer, an exporter) recurses once per level and must stay far from
#: Python's recursion limit
MAX_NESTING = 200


class NestedTooDeeply(ValueError):
    """JSON text that is valid but nested too deeply to parse or to walk."""


def loads_json(text: str | bytes, max_depth: int | None = MAX_NESTING) -> Any:
    """``json.loads`` whose every failure is a ``ValueError``: text nested too deeply for the
    parser, or (``max_depth``) deeper than ``max_depth`` levels, raises ``NestedTooDeeply``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeeply("nested too deeply to parse") from None
    if max_depth is not None and nested_deeper(value, max_depth):
        raise NestedTooDeeply(f"nested more than {max_depth} levels deep")
    return value


def nested_deeper(value: Any, limit: int = MAX_NESTING) -> bool:
    """True when ``value`` has containers (dicts, lists) nested more than ``limit`` levels
    deep. Iterative: it never recurses however deep the value is."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) \
            else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def shown_json(value: Any, **kw: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str, **kw)`` for showing a recorded value;
    one nested too deeply to encode is said so in words instead of raising."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str, **kw)
    except (RecursionError, ValueError):   # ValueError: a circular reference
        return f"({json_kind(value)} nested too deeply to show)"


@functools.lru_cache(maxsize=4096)
def duplicate_keys(text: str) -> tuple[str, ...]:
    """The keys an object in the JSON ``text`` repeats, at any depth, in order (empty when it
    repeats none or is not JSON). Every JSON parser keeps the last value of a repeated key
    (``{"to": "alice@…", "to": "attacker@…"}`` sends to the attacker), so a reader, a
    display or an approval that saw the first was misled."""
    if text.count('"') < 4:                 # too few strings for two keys
        return ()
    found: list[str] = []

    def pairs(items: list) -> dict:
        seen: set = set()
        for key, _ in items:
            if key in seen and key not in found:
                found.append(key)
            seen.add(key)
        return dict(items)
    try:
        json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return ()
    return tuple(found)


def repeated_keys(text: str, parsed: Any) -> tuple[str, ...]:
    """``duplicate_keys(text)`` for a text the caller has parsed already (``parsed``).

    Each key in the text is followed by one ``:`` and strings may hold more, so the text's
    ``:`` count is at least the number of keys written, which is at least the number of keys
    parsed: when the count equals the keys parsed, no key was written twice, and the text is
    not parsed again."""
    colons = text.count(":")
    return () if _keys_within(parsed, colons) == colons else duplicate_keys(text)


def _keys_within(value: Any, limit: int) -> int:
    """The number of object keys in a parsed JSON value, counted up to just past ``limit``."""
    total, stack = 0, [value]
    while stack and total <= limit:
        v = stack.pop()
        if isinstance(v, dict):
            total += len(v)
            stack.extend(x for x in v.values() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, (dict, list)))
    return total


def canonical_arguments(arguments: str) -> str:
    """Parse an ``arguments`` string and re-serialise it canonically.

    Unparsable text is returned unchanged so two identical broken strings still
    compare equal.
    """
    try:
        return canonical_json(json.loads(arguments))
    except (TypeError, ValueError, RecursionError):
        return arguments if isinstance(arguments, str) else repr(arguments)


def call_fingerprint(name: str, arguments: str) -> str:
    """Tool name + canonical arguments: two calls are "the same" iff these match."""
    return f"{name}:{canonical_arguments(arguments)}"


def tool_calls_of(message: Any) -> list:
    """The ``tool_calls`` list of an assistant message, or [] when absent/not a list."""
    if isinstance(message, dict) and message.get("role") == "assistant":
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            return calls
    return []


def call_name(call: Any) -> str | None:
    fn = call.get("function") if isinstance(call, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    return name if isinstance(name, str) else None


def call_arguments(call: Any) -> Any:
    fn = call.get("function") if isinstance(call, dict) else None
    return fn.get("arguments", _MISSING) if isinstance(fn, dict) else _MISSING


def tool_message(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def parse_json_object(text: str) -> dict | None:
    """``json.loads`` that returns the dict, or None for anything else."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def is_error_result(content: Any) -> bool:
    """True when a tool result (its text, or the parsed value) is the structured error
    object ``{"ok": false, "error": {...}}``, however it is spaced."""
    obj = parse_json_object(content) if isinstance(content, str) else content
    return isinstance(obj, dict) and obj.get("ok") is False and isinstance(obj.get("error"), dict)
