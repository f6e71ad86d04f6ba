"""The work a schema may cost, bounded for every keyword, before and while it runs.

* Before running: ``cost`` counts the schema's nodes with every reference expanded in
  place (a reference back to a schema already being expanded on the way counts once: a
  recursive schema is paid per level of the instance), up to ``MAX_COST``. A schema over it
  is never used to validate (``over_budget`` says why; ``agentdbg tools`` reports it as
  ``schema-too-costly``). ``$defs/d_i = {allOf: [{$ref: d_i+1}, {$ref: d_i+1}]}`` doubles
  the work per level: over the budget from 10 levels on, whatever the keyword.
* While running: each keyword a validation applies spends a step (following a reference,
  which costs several times more, ``REF_STEPS``); past ``MAX_STEPS`` the check stops with
  ``TooCostly`` and that instance is left unchecked. This bounds what only the instance
  decides: the length of an array whose every item is checked, two ``patternProperties``
  matching one key at every level of a deep object. ``budget()`` makes every check in a
  block share one pool (one request's calls together), and ``cancel`` (an event) stops a
  check at its next step (the executor's threads, on Ctrl-C or SIGTERM).

What was left unchecked is said once, by whoever is noting: ``noting_skips`` /
``note_skip`` (check, serve and the proxy print each line once).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

from agentdbg.i18n import N_
from agentdbg.schemas.refs import DATA_KEYWORDS, REF_KEYWORDS, root_resolver, target

MAX_COST = 10_000      # schema nodes with every reference expanded
MAX_STEPS = 25_000     # keyword applications of one check (about half a second at worst)
REF_STEPS = 5          # a reference costs this many steps

_steps = threading.local()   # left: steps of the running check; pool: of the block; cancel


class TooCostly(Exception):
    """Checking this instance would take more than its steps: it is left unchecked."""


# -- before running ------------------------------------------------------------------------

def cost(schema: Any, cap: int = MAX_COST) -> int:
    """How many nodes ``schema`` has with every ``$ref`` (``$dynamicRef``, ``$recursiveRef``)
    expanded in place, counted up to ``cap + 1`` (so this costs at most that many steps).
    References resolve inside the schema only; one that does not resolve counts as one
    node (it is skipped when validating)."""
    look = _looker(schema)
    targets: dict[str, Any] = {}
    count = 0
    stack: list[tuple[Any, frozenset]] = [(schema, frozenset())]
    while stack and count <= cap:
        node, expanding = stack.pop()
        count += 1
        if isinstance(node, list):
            stack.extend((v, expanding) for v in node if isinstance(v, (dict, list)))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in DATA_KEYWORDS:
                continue
            if key in REF_KEYWORDS and isinstance(value, str):
                if value not in targets:
                    found = look(value)
                    targets[value] = found if isinstance(found, (dict, list)) else None
                to = targets[value]
                if to is not None and id(to) not in expanding:
                    stack.append((to, expanding | {id(to)}))
            elif isinstance(value, (dict, list)):
                stack.append((value, expanding))
    return count


def _looker(schema: Any) -> Callable[[str], Any]:
    """``target(root_resolver(schema), ref)``, the resolver made at the first reference: a
    schema without one never loads ``referencing`` and ``jsonschema`` (a replay's start-up)."""
    root: list[Any] = []

    def look(ref: str) -> Any:
        if not root:
            root.append(root_resolver(schema))
        return target(root[0], ref)
    return look


def over_budget(schema: Any) -> str | None:
    """Why ``schema`` is never used to validate (None: it is within the work budget)."""
    if cost(schema) > MAX_COST:
        return N_("with its references expanded, the schema has more than {n} parts "
                  "(agentdbg's work budget for one schema)").format(n=MAX_COST)
    if endless(schema):
        return N_("a reference leads back to where it started without going into the instance "
                  "(allOf, anyOf, oneOf, not, if/then/else): a check would never end")
    return None


#: applicators that apply their subschemas to the same instance (no step into it)
IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas")


def endless(schema: Any) -> bool:
    """Whether following references through in-place applicators comes back to a schema on
    the way: ``{$defs: {a: {anyOf: [{$ref: "#/$defs/a"}]}}}`` applies itself to the same
    value for ever (JSON Schema forbids it; jsonschema recurses until the interpreter's
    limit). At most ``MAX_COST`` schemas are looked at (``cost`` has bounded the rest)."""
    look = _looker(schema)
    targets: dict[str, Any] = {}

    def nexts(node: Any) -> list:
        if not isinstance(node, dict):
            return []
        out: list = []
        for key, value in node.items():
            if key in REF_KEYWORDS and isinstance(value, str):
                if value not in targets:
                    targets[value] = look(value)
                out.append(targets[value])
            elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                out.extend(value)
            elif key in IN_PLACE[3:7]:
                out.append(value)
            elif key == "dependentSchemas" and isinstance(value, dict):
                out.extend(value.values())
        return [n for n in out if isinstance(n, dict)]

    done: set[int] = set()
    for start in _schemas_in(schema):
        if id(start) in done:
            continue
        path: set[int] = {id(start)}
        stack = [(start, iter(nexts(start)))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.discard(id(node))
                done.add(id(node))
            elif id(child) in path:
                return True
            elif id(child) not in done:
                path.add(id(child))
                stack.append((child, iter(nexts(child))))
    return False


def _schemas_in(schema: Any) -> Iterator[dict]:
    """Every object inside ``schema`` (data keywords' values excluded), up to ``MAX_COST``."""
    stack, seen = [schema], 0
    while stack and seen <= MAX_COST:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            yield node
            stack.extend(v for k, v in node.items() if k not in DATA_KEYWORDS and isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))


# -- while running ---------------------------------------------------------------------------

def counted(name: str, keyword: Any) -> Any:
    """``keyword`` (a jsonschema keyword function) spending steps each time it applies: one,
    a reference ``REF_STEPS``, and a keyword whose own work grows with the data one more per
    item, key, enum value or thousand characters it goes through."""
    weigh = WEIGHTS.get(name)

    def apply(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _spend(REF_STEPS if name in REF_KEYWORDS else 1 if weigh is None else weigh(value, instance))
        return keyword(validator, value, instance, schema)
    return apply


def _size(instance: Any) -> int:
    return len(instance) if isinstance(instance, (list, dict)) else 0


def _keys_by_patterns(value: Any, instance: Any) -> int:
    patterns = value if isinstance(value, dict) else {}
    return 1 + _size(instance) * (1 + len(patterns))


#: keywords whose one application costs more with more data (``uniqueItems`` also spends a step
#: per container inside the items it compares, see ``keywords._canonical``)
WEIGHTS = {
    "enum": lambda value, instance: 1 + (len(value) if isinstance(value, list) else 0),
    "uniqueItems": lambda value, instance: 1 + _size(instance),
    "pattern": lambda value, instance: 1 + (len(instance) // 1000 if isinstance(instance, str) else 0),
    "patternProperties": _keys_by_patterns,
    "additionalProperties": lambda value, instance: 1 + _size(instance),
    "unevaluatedProperties": lambda value, instance: 1 + _size(instance),
    "unevaluatedItems": lambda value, instance: 1 + _size(instance),
    "required": lambda value, instance: 1 + (len(value) if isinstance(value, list) else 0),
    "dependentRequired": lambda value, instance: 1 + _size(instance),
    "properties": lambda value, instance: 1 + (len(value) if isinstance(value, dict) else 0),
}


def spend(n: int = 1) -> None:
    """Spend ``n`` steps of the running check (for keywords that loop over data)."""
    _spend(n)


def _spend(n: int) -> None:
    left = getattr(_steps, "left", None)
    if left is None:
        return
    cancel = _steps.cancel
    if cancel is not None and cancel.is_set():
        raise TooCostly(N_("the check was stopped (the run was interrupted)"))
    _steps.left = left - n
    if left - n < 0:
        raise TooCostly(N_("checking them would take more than {n} schema steps (agentdbg's work "
                           "budget for one check)").format(n=_steps.asked))


@contextlib.contextmanager
def running(steps: int = MAX_STEPS, cancel: threading.Event | None = None) -> Iterator[None]:
    """Count the steps of one check (``TooCostly`` past them, or once ``cancel`` is set);
    inside ``budget()``, at most what is left of the block's pool."""
    pool = getattr(_steps, "pool", None)
    allowed = steps if pool is None else max(0, min(steps, pool))
    _steps.left, _steps.asked, _steps.cancel = allowed, steps, cancel
    try:
        yield
    finally:
        if pool is not None:
            _steps.pool = pool - (allowed - max(_steps.left, 0))
        _steps.left = _steps.cancel = None


@contextlib.contextmanager
def budget(steps: int = MAX_STEPS) -> Iterator[None]:
    """Every check in the block (this thread) shares ``steps``: a request with a hundred
    calls costs what one may. Nested blocks share the outermost pool."""
    if getattr(_steps, "pool", None) is not None:
        yield
        return
    _steps.pool = steps
    try:
        yield
    finally:
        _steps.pool = None


def budgeted(fn: Any) -> Any:
    """``fn`` with every check it makes sharing one pool (see ``budget``)."""
    import functools

    @functools.wraps(fn)
    def within(*args: Any, **kwargs: Any) -> Any:
        with budget():
            return fn(*args, **kwargs)
    return within


# -- saying what was left unchecked, once ------------------------------------------------------

#: a tool whose arguments a check left unchecked (``note_skip``: what, then why)
UNCHECKED = N_("tool {name}: arguments left unchecked: {why}")


class Skips:
    """What was left unchecked, each said once: ``add(what, why)``, then ``take()`` the lines
    not taken yet (for a console that prints them as it goes)."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()
        self._new: list[str] = []
        self._lock = threading.Lock()

    def add(self, what: str, why: str) -> None:
        with self._lock:
            if (what, why) not in self._seen:
                self._seen.add((what, why))
                self._new.append(f"{what}: {why}")

    def take(self) -> list[str]:
        with self._lock:
            taken, self._new = self._new, []
        return taken


_skips: contextvars.ContextVar[Skips | None] = contextvars.ContextVar("agentdbg_skips", default=None)


@contextlib.contextmanager
def noting_skips(skips: Skips | None = None) -> Iterator[Skips]:
    """Within the block (and the tasks it starts), ``note_skip`` adds to ``skips``."""
    skips = skips if skips is not None else Skips()
    token = _skips.set(skips)
    try:
        yield skips
    finally:
        _skips.reset(token)


def skip_text(line: str) -> str:
    """A line ``Skips.take`` gave (English: ``check --json`` keeps it so) in the chosen language,
    for a console: the tool's name as given, the reason read back into its own template."""
    from agentdbg.i18n import Msg, _, recorded

    found = Msg.parse(UNCHECKED, line)
    if found is None:
        return recorded(line)
    return _(UNCHECKED).format(name=found.values["name"], why=recorded(found.values["why"]))


def note_skip(what: str, why: str) -> None:
    """Say that ``what`` was left unchecked, to whoever is noting (see ``noting_skips``)."""
    skips = _skips.get()
    if skips is not None:
        skips.add(what, why)
