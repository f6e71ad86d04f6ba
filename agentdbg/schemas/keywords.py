"""The keywords agentdbg validates its own way: patterns on RE2 (linear time, never Python's
backtracking ``re``), ``uniqueItems`` in linear time, and references that do not resolve
skipped instead of failing a whole check.

* ``pattern`` and ``patternProperties`` (also where ``additionalProperties`` and
  ``unevaluatedProperties`` look at them) run on RE2, in time linear in the text; so does
  the ``regex`` format when a schema itself is checked. A pattern RE2 cannot run (a
  look-around, a back-reference) is skipped when validating: nothing is claimed.
* ``uniqueItems`` hashes each item's canonical form (jsonschema compares every pair of
  objects: 8,000 distinct objects took 55 s).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from agentdbg.schemas.budget import spend

MAX_PATTERN = 10_000          # characters of one pattern's source
_SURROGATE = re.compile("[\ud800-\udfff]")
_ECMA_UNICODE = re.compile(r"(?<!\\)((?:\\\\)*)\\u([0-9a-fA-F]{4})")


# -- patterns -----------------------------------------------------------------------------

@functools.lru_cache(maxsize=2048)
def compile_pattern(pattern: str) -> Any:
    """RE2's compiled form of an ECMA-262 ``pattern``, or the reason (a str) it cannot run."""
    import re2

    if len(pattern) > MAX_PATTERN:
        return f"longer than {MAX_PATTERN} characters"
    options = re2.Options()
    options.log_errors = False      # RE2 would print the (untrusted) pattern to stderr
    options.max_mem = 8 << 20
    try:
        return re2.compile(_to_re2(_SURROGATE.sub("\ufffd", pattern)), options)
    except Exception as exc:  # noqa: BLE001 - re2.error and friends: RE2 cannot run it
        reason = exc.args[0] if exc.args else exc
        return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


def _to_re2(pattern: str) -> str:
    """ECMA-262 ``\\uXXXX`` and ``(?<name>`` in RE2's spelling."""
    pattern = _ECMA_UNICODE.sub(lambda m: m.group(1) + "\\x{" + m.group(2) + "}", pattern)
    return pattern.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")


def search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``text``; None: it cannot be checked."""
    rx = compile_pattern(pattern)
    if isinstance(rx, str):
        return None
    return rx.search(_SURROGATE.sub("\ufffd", text)) is not None


def _valid_regex(instance: Any) -> bool:
    """The ``regex`` format: RE2 decides; a pattern only RE2 cannot run is still a regular
    expression (``warnings`` names it), so Python's parser has the last word on syntax —
    compiling only, never matching."""
    if not isinstance(instance, str) or not isinstance(compile_pattern(instance), str):
        return True
    try:
        re.compile(instance)
    except (re.error, RecursionError, OverflowError, ValueError):
        return False
    return True


# -- keywords on RE2 ---------------------------------------------------------------------

def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and search(patrn, instance) is False:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, pattern_properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if search(pattern, key):  # None (cannot be checked): nothing is claimed
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: dict, schema: dict) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    for key in instance:
        if key not in properties and all(search(p, key) is False for p in patterns):
            yield key  # a pattern that cannot be checked might match: never a false alarm


def _additional_properties(validator: Any, aP: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema._utils import extras_msg
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(aP, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], aP, path=extra)
    elif not aP and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            error = "Additional properties are not allowed (%s %s unexpected)"
            yield ValidationError(error % extras_msg(sorted(extras, key=str)))


def _evaluated_keys(validator: Any, instance: dict, schema: Any) -> list:
    """jsonschema's ``find_evaluated_property_keys_by_schema`` with patterns on RE2."""
    if validator.is_type(schema, "boolean"):
        return []
    keys: list = []
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            keys += _evaluated_keys(validator.evolve(schema=resolved.contents,
                                                     _resolver=resolved.resolver),
                                    instance, resolved.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        sub = schema.get(keyword)
        if sub is not None:
            keys += (k for k, v in instance.items() if next(validator.descend(v, sub), None) is None)
    for pattern in schema.get("patternProperties", {}):
        keys += (k for k in instance if search(pattern, k) is not False)
    for prop, sub in schema.get("dependentSchemas", {}).items():
        if prop in instance:
            keys += _evaluated_keys(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword, []):
            if next(validator.descend(instance, sub), None) is None:
                keys += _evaluated_keys(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys += _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys += _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties(validator: Any, uP: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema._utils import extras_msg
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    bad = [k for k in instance if k not in evaluated
           and next(validator.descend(instance[k], uP, path=k, schema_path=k), None) is not None]
    if bad and uP is False:
        error = "Unevaluated properties are not allowed (%s %s unexpected)"
        yield ValidationError(error % extras_msg(sorted(bad, key=str)))
    elif bad:
        error = ("Unevaluated properties are not valid under the given schema "
                 "(%s %s unevaluated and invalid)")
        yield ValidationError(error % extras_msg(sorted(bad, key=str)))


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``uniqueItems`` in linear time: each item's canonical form is hashed (jsonschema
    compares every pair of objects: 8,000 distinct objects took 55 s). Equal as JSON Schema
    says: ``1`` equals ``1.0``, ``true`` does not equal ``1``, key order does not matter."""
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: dict[Any, int] = {}
    for i, item in enumerate(instance):
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"items {seen[key]} and {i} are equal; the items must be unique")
            return
        seen[key] = i


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON value, equal exactly when the values are equal as JSON
    Schema compares them (``RecursionError`` past the interpreter's depth)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (dict, list, tuple)):
        spend()
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value.is_integer():
            return ("n", int(value))
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, dict):
        return ("o", frozenset((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("a", tuple(_canonical(v) for v in value))
    return ("?", repr(value))


def _skip_unresolvable(keyword: Any) -> Any:
    """A keyword that resolves references: a reference that cannot be resolved (nothing is
    ever retrieved) leaves that part unchecked instead of failing the whole validation."""
    def check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        from referencing.exceptions import Unresolvable

        try:
            errors = list(keyword(validator, value, instance, schema))
        except Unresolvable:
            return
        yield from errors
    return check
