"""References inside one schema: resolved there, never retrieved; the validator class a schema
names. Shared by validation (``schemas``), the work budget (``schemas.budget``) and the
warnings ``agentdbg tools`` gives."""

from __future__ import annotations

import functools
from typing import Any

DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})   # values, not schemas
NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                       "dependentSchemas", "dependencies"})              # names -> schemas
REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@functools.lru_cache(maxsize=1)
def registry() -> Any:
    """A registry whose ``retrieve`` refuses every URI (http, https, file …)."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


def class_for(schema: Any) -> Any:
    """The validator class ``$schema`` names; the latest draft for anything else."""
    from jsonschema.validators import Draft202012Validator, validator_for

    name = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(name, str):
        return Draft202012Validator
    return validator_for({"$schema": name}, default=Draft202012Validator)


def root_resolver(schema: Any) -> Any:
    """A resolver for references inside ``schema`` (None when it is not an object)."""
    from referencing.jsonschema import specification_with

    if not isinstance(schema, dict):
        return None
    spec = specification_with(class_for(schema).META_SCHEMA["$schema"])
    return registry().resolver_with_root(spec.create_resource(schema))


def target(root: Any, ref: str) -> Any:
    """What ``ref`` points at inside the schema (None: it does not resolve there)."""
    from referencing.exceptions import Unresolvable

    if root is None:
        return None
    try:
        return root.lookup(ref).contents
    except (Unresolvable, ValueError, TypeError, AttributeError, RecursionError):  # odd subresources too
        return None


def resolves(root: Any, ref: str) -> bool:
    from referencing.exceptions import Unresolvable

    if root is None:
        return False
    try:
        root.lookup(ref)
    except (Unresolvable, ValueError, TypeError, AttributeError):  # odd subresources too
        return False
    return True
