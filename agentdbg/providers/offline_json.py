"""The offline model's answer to a request that asks for JSON: a value its schema accepts.

A request may say that the answer must be JSON, and of which shape (Chat Completions'
``response_format``, the Responses API's ``text.format``, Gemini's ``generationConfig``
``responseMimeType: application/json`` with ``responseJsonSchema`` or ``responseSchema``).
Clients that ask for it parse the answer and retry when it does not parse: Gemini CLI's
routing classifier asks five times, with back-off, before giving up. So the offline model
answers such a request with JSON built from the schema alone: every declared property, the
first ``enum``/``const`` choice, numbers at their lower bound, ``minItems`` items, and its
plain answer wherever free text goes. The schema is untrusted input: only local ``$ref``s
are followed, nesting is cut at ``MAX_DEPTH``, and the value has at most ``MAX_NODES`` nodes
and about ``MAX_CHARS`` characters of text.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from agentdbg.providers import offline_patterns
from agentdbg.providers.offline_schema import MAX_DEPTH, MAX_PARAMS, format_ok, resolve

MAX_NODES = 2000       # values in one answer
MAX_ITEMS = 16         # items made for one array (its minItems, at most)
MAX_TEXT = 2000        # characters of free text in one string
MAX_LENGTH = 10_000    # a minLength above this is not met (the answer stays small)
MAX_CHARS = 100_000    # characters of text in one answer; past them, strings are as short as allowed
FORMATS = {"date": "2026-01-01", "date-time": "2026-01-01T00:00:00Z", "time": "00:00:00",
           "email": "offline@example.com", "uri": "https://example.com/",
           "uuid": "00000000-0000-4000-8000-000000000000"}


def json_answer(schema: Any, text: str) -> str:
    """The answer as JSON text. An empty schema (JSON asked for, no shape given) gets
    ``{"answer": text}``."""
    if not isinstance(schema, dict) or not schema:
        return json.dumps({"answer": text}, ensure_ascii=False)
    return json.dumps(_Builder(schema, text[:MAX_TEXT]).value(schema, 0), ensure_ascii=False)


class _Builder:
    def __init__(self, root: dict, text: str):
        self.root = root
        self.text = text
        self.nodes = 0
        self.chars = 0

    def value(self, schema: Any, depth: int) -> Any:
        self.nodes += 1
        s = resolve(schema, self.root)
        if not isinstance(s, dict) or depth > MAX_DEPTH or self.nodes > MAX_NODES:
            return None if s is None or depth > MAX_DEPTH or self.nodes > MAX_NODES else self.text
        if "const" in s:
            return s["const"]
        if isinstance(s.get("enum"), list) and s["enum"]:
            return s["enum"][0]
        for key in ("anyOf", "oneOf"):
            every = s[key][:16] if isinstance(s.get(key), list) else []
            branches = [b for b in every if _kind(resolve(b, self.root)) != "null"] or every
            if branches:
                rest = {k: v for k, v in s.items() if k != key}
                branch = resolve(branches[0], self.root)
                return self.value({**rest, **branch} if isinstance(branch, dict) else rest, depth + 1)
        if isinstance(s.get("allOf"), list):
            merged = {k: v for k, v in s.items() if k != "allOf"}
            for part in s["allOf"][:16]:
                merged = _merge(merged, resolve(part, self.root))
            return self.value(merged, depth + 1)
        kind = _kind(s)
        if kind == "object":
            return self._object(s, depth)
        if kind == "array":
            return self._array(s, depth)
        if kind in ("integer", "number"):
            return _number(s, kind == "integer")
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return self._string(s)

    def _object(self, s: dict, depth: int) -> dict:
        found = s.get("properties")
        props: dict = found if isinstance(found, dict) else {}
        order = [k for k in s.get("propertyOrdering") or [] if isinstance(k, str) and k in props]
        names = order + [k for k in props if k not in order]
        limit = s.get("maxProperties")
        if isinstance(limit, int) and not isinstance(limit, bool):
            required = set(s.get("required") or []) if isinstance(s.get("required"), list) else set()
            names = [n for n in names if n in required] + [n for n in names if n not in required]
            names = names[:max(limit, 0)]
        return {name: self.value(props[name], depth + 1) for name in names[:MAX_PARAMS]}

    def _array(self, s: dict, depth: int) -> list:
        items = s.get("prefixItems") if isinstance(s.get("prefixItems"), list) else None
        if items is None and isinstance(s.get("items"), list):
            items = s["items"]             # the older tuple form
        count = min(max(_int(s, "minItems") or 0, len(items or [])), MAX_ITEMS)
        out = []
        for n in range(count):
            schema = items[n] if items is not None and n < len(items) else s.get("items", {})
            out.append(self.value(schema if isinstance(schema, dict) else {}, depth + 1))
        return out

    def _string(self, s: dict) -> str:
        fmt = s.get("format")
        candidates = [FORMATS[fmt]] if isinstance(fmt, str) and fmt in FORMATS else []
        low, high = _int(s, "minLength") or 0, _int(s, "maxLength")
        if self.chars <= MAX_CHARS:
            candidates += [self.text, self.text.split("\n", 1)[0], "offline"]
        else:                 # spent: as short as allowed, and never long
            low = min(low, 64)
        candidates.append("")
        for text in candidates:
            if high is not None:
                text = text[:max(high, 0)]
            if len(text) < low:
                text = (text or "x") * (low // max(len(text), 1) + 1)
                text = text[:max(low, 0)]
            pattern = s.get("pattern")
            if isinstance(pattern, str) and offline_patterns.search(pattern, text) is not True:
                continue
            if format_ok(text, fmt):
                self.chars += len(text)
                return text
        return candidates[0] if candidates else ""


def _kind(s: Any) -> str | None:
    """The schema's type in lower case (Gemini's OpenAPI schemas write ``OBJECT``), the first
    one that is not null; guessed from the keywords when there is none."""
    if not isinstance(s, dict):
        return None
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if isinstance(x, str) and x.lower() != "null"),
                 "null" if t else None)
    if isinstance(t, str):
        return t.lower()
    if "properties" in s:
        return "object"
    if "items" in s or "prefixItems" in s:
        return "array"
    return None


def _merge(a: dict, b: Any) -> dict:
    if not isinstance(b, dict):
        return a
    merged = {**a, **b}
    if isinstance(a.get("properties"), dict) and isinstance(b.get("properties"), dict):
        merged["properties"] = {**a["properties"], **b["properties"]}
    if isinstance(a.get("required"), list) and isinstance(b.get("required"), list):
        merged["required"] = list(dict.fromkeys(a["required"] + b["required"]))
    return merged


def _int(s: dict, key: str) -> int | None:
    v = s.get(key)
    return min(v, MAX_LENGTH) if isinstance(v, int) and not isinstance(v, bool) else None


def _num(s: dict, key: str) -> float | None:
    v = s.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) \
        and math.isfinite(v) else None


STATED_RANGE = re.compile(r"(?:from|between|range|of|\()\s*(-?\d{1,9}(?:\.\d+)?)\s*(?:-|–|to|and)\s*"
                          r"(-?\d{1,9}(?:\.\d+)?)", re.I)


def _number(s: dict, integer: bool) -> int | float:
    """The smallest value the bounds allow (0 when it is allowed), a multiple of ``multipleOf``.
    With no bounds, a range its description states ("a score from 1-100") is the bounds: the
    client may check what the schema does not say."""
    low, high = _num(s, "minimum"), _num(s, "maximum")
    description = s.get("description")
    if low is None and high is None and isinstance(description, str):
        stated = STATED_RANGE.search(description[:MAX_TEXT])
        if stated and float(stated.group(1)) <= float(stated.group(2)):
            low, high = float(stated.group(1)), float(stated.group(2))
    ex_low, ex_high = _num(s, "exclusiveMinimum"), _num(s, "exclusiveMaximum")
    step = _num(s, "multipleOf")
    step = step if step is not None and step > 0 else (1.0 if integer else None)
    start = 0.0
    if low is not None:
        start = max(start, low) if (high is None or high >= 0) and low <= 0 else low
    if ex_low is not None and start <= ex_low:
        start = ex_low + (step or 1.0)
    if high is not None and start > high:
        start = high
    if ex_high is not None and start >= ex_high:
        start = ex_high - (step or 1.0)
    if step is not None:
        start = math.ceil(start / step - 1e-9) * step
    if integer:
        return math.ceil(start)
    return int(start) if float(start).is_integer() else start
