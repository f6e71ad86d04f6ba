"""JSON Schemas from untrusted places, checked without fetching, reading or hanging.

Tool schemas come from requests, transcripts, tools files and MCP servers; every place that
validates against one (the checker, the executor, the tools loader and linter, replay, the
proxy and the pytest plugin) goes through here:

* ``$ref`` resolves only inside the schema itself. The registry's ``retrieve`` refuses every
  URI (http, https, file …), so nothing is ever fetched or read; a reference that does not
  resolve is named by ``warnings`` and skipped when validating.
* ``pattern`` and ``patternProperties`` (also where ``additionalProperties`` and
  ``unevaluatedProperties`` look at them) run on RE2, in time linear in the text; so does
  the ``regex`` format when a schema itself is checked. A pattern RE2 cannot run (a
  look-around, a back-reference) is named by ``warnings`` and skipped when validating.
* A schema or an instance nested deeper than the interpreter can follow is reported, never
  a crash.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

MAX_PATTERN = 10_000          # characters of one pattern's source
_SURROGATE = re.compile("[\ud800-\udfff]")
_ECMA_UNICODE = re.compile(r"(?<!\\)((?:\\\\)*)\\u([0-9a-fA-F]{4})")
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})  # values, not schemas
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                        "dependentSchemas", "dependencies"})              # names -> schemas
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


class Uncheckable(Exception):
    """The instance cannot be checked against the schema (nested too deeply)."""


# -- patterns -----------------------------------------------------------------------------

@functools.lru_cache(maxsize=2048)
def compile_pattern(pattern: str) -> Any:
    """RE2's compiled form of an ECMA-262 ``pattern``, or the reason (a str) it cannot run."""
    import re2  # type: ignore[import-untyped]

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

def _pattern(validator, patrn, instance, schema):
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and search(patrn, instance) is False:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
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


def _additional_properties(validator, aP, instance, schema):
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


def _evaluated_keys(validator, instance: dict, schema: Any) -> list:
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


def _unevaluated_properties(validator, uP, instance, schema):
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


def _skip_unresolvable(keyword):
    """A keyword that resolves references: a reference that cannot be resolved (nothing is
    ever retrieved) leaves that part unchecked instead of failing the whole validation."""
    def check(validator, value, instance, schema):
        from referencing.exceptions import Unresolvable

        try:
            errors = list(keyword(validator, value, instance, schema))
        except Unresolvable:
            return
        yield from errors
    return check


@functools.cache
def _safe_class(cls: type) -> type:
    from jsonschema.validators import extend

    own = {"pattern": _pattern, "patternProperties": _pattern_properties,
           "additionalProperties": _additional_properties}
    if "unevaluatedProperties" in cls.VALIDATORS:  # type: ignore[attr-defined]
        own["unevaluatedProperties"] = _unevaluated_properties
    for keyword in (*_REF_KEYWORDS, "unevaluatedItems", "unevaluatedProperties"):
        fn = own.get(keyword) or cls.VALIDATORS.get(keyword)  # type: ignore[attr-defined]
        if fn is not None:
            own[keyword] = _skip_unresolvable(fn)
    return extend(cls, own)


def _refuse(uri: str):
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@functools.lru_cache(maxsize=1)
def _registry():
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


# -- the API ------------------------------------------------------------------------------

def class_for(schema: Any) -> Any:
    """The validator class ``$schema`` names; the latest draft for anything else."""
    from jsonschema.validators import Draft202012Validator, validator_for

    name = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(name, str):
        return Draft202012Validator
    return validator_for({"$schema": name}, default=Draft202012Validator)


def validator(schema: dict) -> Any:
    """A validator for ``schema`` that never retrieves and matches patterns on RE2.
    The schema is not checked here: see ``schema_error``."""
    try:
        own = _one_dialect(schema)
    except RecursionError:
        raise Uncheckable("nested too deeply to check against the schema") from None
    return _safe_class(class_for(schema))(own, registry=_registry())


def _one_dialect(node: Any, root: bool = True) -> Any:
    """``node`` without ``$schema`` below its root: jsonschema switches to its stock
    validator class where a subschema names another dialect, and that class would match
    patterns with Python's backtracking ``re``."""
    if isinstance(node, list):
        return [_one_dialect(v, False) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$schema" and not root:
            continue
        if key in _DATA_KEYWORDS:
            out[key] = value
        elif key in _NAME_MAPS and isinstance(value, dict):  # names -> subschemas
            out[key] = {name: _one_dialect(sub, False) for name, sub in value.items()}
        else:
            out[key] = _one_dialect(value, False)
    return out


def problems(v: Any, instance: Any) -> list[str]:
    """``where: message`` for each way ``instance`` fails; ``Uncheckable`` when it is nested
    too deeply to follow."""
    from referencing.exceptions import Unresolvable

    try:
        return sorted(_describe(e) for e in v.iter_errors(instance))
    except RecursionError:
        raise Uncheckable("nested too deeply to check against the schema") from None
    except Unresolvable as exc:  # a reference outside any keyword that skips it
        raise Uncheckable(f"$ref {exc.ref!r} is not resolved") from None


def _describe(error) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def schema_error(schema: Any) -> tuple[tuple, str] | None:
    """(path inside the schema, message) when ``schema`` is not a valid JSON Schema."""
    from jsonschema import FormatChecker
    from jsonschema.exceptions import best_match

    try:
        cls = class_for(schema)
        meta = class_for(cls.META_SCHEMA)
        formats = FormatChecker()
        formats.checks("regex")(_valid_regex)
        error = best_match(meta(cls.META_SCHEMA, format_checker=formats).iter_errors(schema))
    except RecursionError:
        return (), "nested too deeply to check"
    return None if error is None else (tuple(error.path), error.message)


def warnings(schema: Any) -> list[str]:
    """What validation against ``schema`` will skip: references that do not resolve inside
    it (never retrieved) and patterns RE2 cannot run."""
    found: list[str] = []
    try:
        root = _root_resolver(schema)
        for where, keyword, value in _walk(schema, ()):
            at = "/".join(map(str, where)) or "(root)"
            if keyword in _REF_KEYWORDS and isinstance(value, str) and not _resolves(root, value):
                found.append(f"{at}: {keyword} {value!r} is not resolved: agentdbg never "
                             "retrieves schemas (no network, no files), so that part is not checked")
            elif keyword == "pattern" and isinstance(value, str):
                found += _pattern_warning(at, value)
            elif keyword == "patternProperties" and isinstance(value, dict):
                for pattern in value:
                    found += _pattern_warning(at, str(pattern))
    except RecursionError:
        found.append("(root): nested too deeply to check")
    return found


def _pattern_warning(at: str, pattern: str) -> list[str]:
    rx = compile_pattern(pattern)
    if not isinstance(rx, str):
        return []
    return [f"{at}: pattern {pattern[:80]!r} cannot be checked in linear time (RE2: {rx}); "
            "values are not checked against it"]


def _walk(node: Any, where: tuple) -> Iterator[tuple[tuple, str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield where, key, value
            if key not in _DATA_KEYWORDS:
                yield from _walk(value, where + (key,))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, where + (i,))


def _root_resolver(schema: Any) -> Any:
    from referencing.jsonschema import specification_with

    if not isinstance(schema, dict):
        return None
    spec = specification_with(class_for(schema).META_SCHEMA["$schema"])
    return _registry().resolver_with_root(spec.create_resource(schema))


def _resolves(root: Any, ref: str) -> bool:
    from referencing.exceptions import Unresolvable

    if root is None:
        return False
    try:
        root.lookup(ref)
    except (Unresolvable, ValueError, TypeError, AttributeError):  # odd subresources too
        return False
    return True
