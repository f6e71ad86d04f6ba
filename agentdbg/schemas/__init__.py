"""JSON Schemas from untrusted places, checked without fetching, reading or hanging.

Tool schemas come from requests, transcripts, tools files and MCP servers; every place that
validates against one (the checker, the executor, the tools loader and linter, replay, the
proxy and the pytest plugin) goes through here:

* ``$ref`` resolves only inside the schema itself (``schemas.refs``): nothing is ever
  fetched or read; a reference that does not resolve is named by ``warnings`` and skipped
  when validating.
* ``pattern`` and ``patternProperties`` run on RE2, ``uniqueItems`` in linear time
  (``schemas.keywords``); a pattern RE2 cannot run is named by ``warnings`` and skipped.
* The work is bounded for every keyword (``schemas.budget``): a schema whose references
  expand past ``MAX_COST`` parts is never used (``checkable`` says why), and one check stops
  after ``MAX_STEPS`` steps (``TooCostly``): what is over budget is left unchecked, never
  claimed to fail, and said once (``note_skip``).
* A schema or an instance nested deeper than the interpreter can follow is reported, never
  a crash.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentdbg.i18n import N_
from agentdbg.schemas.budget import (
    MAX_COST,
    MAX_STEPS,
    Skips,
    TooCostly,
    budget,
    budgeted,
    cost,
    counted,
    note_skip,
    noting_skips,
    over_budget,
    running,
    skip_text,
)
from agentdbg.schemas.keywords import (
    _additional_properties,
    _pattern,
    _pattern_properties,
    _skip_unresolvable,
    _unevaluated_properties,
    _unique_items,
    _valid_regex,
    compile_pattern,
    search,
)
from agentdbg.schemas.refs import DATA_KEYWORDS, NAME_MAPS, REF_KEYWORDS, class_for, registry
from agentdbg.schemas.refs import resolves as _resolves
from agentdbg.schemas.refs import root_resolver as _root_resolver

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = ["MAX_COST", "MAX_STEPS", "Skips", "TooCostly", "Uncheckable", "budget", "budgeted",
           "checkable",
           "class_for", "compile_pattern", "cost", "errors", "note_skip", "noting_skips",
           "over_budget", "problems", "schema_error", "search", "skip_text", "validator", "warnings"]


class Uncheckable(Exception):
    """The instance cannot be checked against the schema (nested too deeply)."""


@functools.cache
def _safe_class(cls: type) -> type:
    from jsonschema.validators import extend

    own = {"pattern": _pattern, "patternProperties": _pattern_properties,
           "additionalProperties": _additional_properties, "uniqueItems": _unique_items}
    if "unevaluatedProperties" in cls.VALIDATORS:  # type: ignore[attr-defined]
        own["unevaluatedProperties"] = _unevaluated_properties
    for keyword in (*REF_KEYWORDS, "unevaluatedItems", "unevaluatedProperties"):
        fn = own.get(keyword) or cls.VALIDATORS.get(keyword)  # type: ignore[attr-defined]
        if fn is not None:
            own[keyword] = _skip_unresolvable(fn)
    for keyword, fn in {**cls.VALIDATORS, **own}.items():  # type: ignore[attr-defined]
        own[keyword] = counted(keyword, fn)
    return extend(cls, own)


#: why arguments are not checked against a schema nested too deeply to follow
DEEP = N_("nested too deeply to check against the schema")


# -- the API ------------------------------------------------------------------------------

def validator(schema: dict) -> Any:
    """A validator for ``schema`` that never retrieves and matches patterns on RE2.
    The schema is not checked here: see ``schema_error``."""
    try:
        own = _one_dialect(schema)
    except RecursionError:
        raise Uncheckable(DEEP) from None
    return _safe_class(class_for(schema))(own, registry=registry())


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
        if key in DATA_KEYWORDS:
            out[key] = value
        elif key in NAME_MAPS and isinstance(value, dict):  # names -> subschemas
            out[key] = {name: _one_dialect(sub, False) for name, sub in value.items()}
        else:
            out[key] = _one_dialect(value, False)
    return out


def problems(v: Any, instance: Any, cancel: threading.Event | None = None) -> list[str]:
    """``where: message`` for each way ``instance`` fails (see ``errors``)."""
    return sorted(_describe(e) for e in errors(v, instance, cancel=cancel))


def errors(v: Any, instance: Any, steps: int = MAX_STEPS,
           cancel: threading.Event | None = None) -> list:
    """Every ``ValidationError`` of ``instance``, within ``steps`` of work (and what is left of
    the ``budget()`` block's pool): ``TooCostly`` past them or once ``cancel`` is set;
    ``Uncheckable`` when it is nested too deeply to follow."""
    from referencing.exceptions import Unresolvable

    with running(steps, cancel):
        try:
            return list(v.iter_errors(instance))
        except RecursionError:
            raise Uncheckable(DEEP) from None
        except Unresolvable as exc:  # a reference outside any keyword that skips it
            raise Uncheckable(N_("$ref {ref} is not resolved").format(ref=repr(exc.ref))) from None
        except BaseException as exc:
            # the interpreter's depth limit met inside ``referencing``'s Rust maps comes out
            # as pyo3's PanicException (a BaseException): the same "too deep", not a crash
            if type(exc).__name__ != "PanicException":
                raise
            raise Uncheckable(DEEP) from None


def _describe(error: ValidationError) -> str:
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
            if keyword in REF_KEYWORDS and isinstance(value, str) and not _resolves(root, value):
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
            if key not in DATA_KEYWORDS:
                yield from _walk(value, where + (key,))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, where + (i,))


def checkable(schema: Any) -> tuple[Any, str | None]:
    """(a validator for ``schema``, None); else (None, why arguments are not checked
    against it: over the work budget, nested too deeply). (None, None): not a valid JSON
    Schema, which the place that reads it reports (the tools loader, the request rules)."""
    if not isinstance(schema, dict):
        return None, None
    why = over_budget(schema)
    if why is not None:
        return None, why
    try:
        return (validator(schema), None) if schema_error(schema) is None else (None, None)
    except Uncheckable as exc:
        return None, str(exc)
