"""Lint a python handler without running it: does ``module:function`` exist, and can the
function take the schema's parameters as keyword arguments (the executor calls
``function(**arguments)``)?

Nothing of the user's is imported or run: the module is found the way ``import`` would
find it from the tools file's folder (``importlib``'s finders; packages on the way are
searched, not imported), and its source is read with ``ast``. What cannot be known from
the source (an extension module, a name bound at run time, a decorated function) is
not reported: a lint finding must be as sure as a run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from typing import Any

from agentdbg.checker.rule import ERROR, WARNING, declare, rule
from agentdbg.i18n import N_, Msg
from agentdbg.toolspec import ToolSpec

DECLARED = declare(
    __name__,
    rule("handler-not-found", ERROR, "a python handler whose module or function does not exist",
         scope="tools"),
    rule("handler-signature-mismatch", ERROR, "a python handler that cannot take the schema's "
         "parameters as keyword arguments", scope="tools"),
    rule("handler-parameter-optional", WARNING, "a python handler needs a parameter the schema "
         "lets the model leave out", scope="tools"),
)

#: calls at module level that can bind any name (the source cannot tell which)
DYNAMIC = {"exec", "globals", "setattr", "vars", "__import__"}


class _Unknown(Exception):
    """The source cannot tell: say nothing."""


def find_module(name: str, base_dir: Path) -> ModuleSpec | None:
    """Where ``import name`` finds the module when the tools file's folder leads
    ``sys.path`` (as the executor arranges), without importing any of it."""
    import importlib.util

    first, *rest = name.split(".")
    spec = PathFinder.find_spec(first, [str(base_dir)])
    if spec is None:
        try:  # every finder, editable installs included; a top-level name runs no code
            spec = importlib.util.find_spec(first)
        except (ImportError, ValueError):
            spec = None
    for depth in range(1, len(rest) + 1):
        if spec is None or spec.submodule_search_locations is None:
            return None
        spec = PathFinder.find_spec(".".join([first, *rest[:depth]]),
                                    list(spec.submodule_search_locations))
    return spec


def read_source(spec: ModuleSpec) -> tuple[str, str]:
    """(the module's file, its source); ``_Unknown`` when there is no Python source."""
    loader = spec.loader
    get_source = getattr(loader, "get_source", None)
    if get_source is None or spec.origin in (None, "built-in", "frozen"):
        raise _Unknown
    try:
        source = get_source(spec.name)
    except (ImportError, OSError, UnicodeDecodeError, SyntaxError):
        raise _Unknown from None
    if not isinstance(source, str):
        raise _Unknown
    return str(spec.origin), source


def binding(tree: ast.Module, name: str) -> ast.AST | None:
    """The module-level statement that last binds ``name`` (a def, an assignment, an
    import …); None when nothing does; ``_Unknown`` when the module binds names at run time."""
    found: ast.AST | None = None
    for node in _module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                raise _Unknown
            if node.name == name:
                found = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    raise _Unknown
                if (alias.asname or alias.name.split(".")[0]) == name:
                    found = node
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            found = node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in DYNAMIC:
            raise _Unknown
    return found


def _module_level(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node that runs at import time, in order; function and class bodies excluded
    (their definitions themselves included)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in stmt.decorator_list:
                yield from ast.walk(deco)
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                yield from _module_level([child])
            else:
                yield from (n for n in ast.walk(child) if not isinstance(n, ast.Lambda))


def signature_problems(fn: ast.FunctionDef | ast.AsyncFunctionDef, schema: dict
                       ) -> tuple[list[Msg], list[Msg]]:
    """(errors, warnings) for calling ``fn(**arguments)`` with arguments fitting ``schema``."""
    props: dict = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required = set(schema["required"]) if isinstance(schema.get("required"), list) else set()
    a = fn.args
    positional = a.posonlyargs + a.args
    with_default = {p.arg for p in positional[len(positional) - len(a.defaults):]} | {
        p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
    by_keyword = {p.arg for p in a.args + a.kwonlyargs}
    only_positional = {p.arg for p in a.posonlyargs}
    errors: list[Msg] = []
    warnings: list[Msg] = []
    for p in a.posonlyargs:
        if p.arg not in with_default:
            errors.append(Msg(N_("parameter {name} is positional-only; the handler is called "
                                 "with keyword arguments"), {"name": repr(p.arg)}))
    if a.kwarg is None:
        extra = [p for p in props if p not in by_keyword and p not in only_positional]
        if len(extra) == 1:
            errors.append(Msg(N_("takes no parameter {names} (the schema has it): add it or "
                                 "**kwargs"), {"names": repr(extra[0])}))
        elif extra:
            errors.append(Msg(N_("takes no parameter {names} (the schema has them): add them or "
                                 "**kwargs"), {"names": ", ".join(map(repr, extra))}))
    for p in a.args + a.kwonlyargs:
        if p.arg in with_default:
            continue
        if p.arg not in props and p.arg not in required:
            errors.append(Msg(N_("needs {name}, which the schema does not have: every call fails"),
                              {"name": repr(p.arg)}))
        elif p.arg not in required:
            warnings.append(Msg(N_("needs {name}, which the schema lets the model leave out: add "
                                   "it to 'required' or give it a default"), {"name": repr(p.arg)}))
    return errors, warnings


def _shown(path: str, base_dir: Path) -> str:
    """The handler's file relative to the tools file's folder when it is inside it."""
    try:
        relative = Path(path).resolve().relative_to(Path(base_dir).resolve())
    except (ValueError, OSError):
        return path
    return str(relative)


def lint_handler(spec: ToolSpec) -> Iterator[Any]:
    """The findings for ``python: "module:function"`` (nothing when the source cannot tell)."""
    from agentdbg.checker.lint_finding import finding

    module_name, func_name = spec.handler.split(":")
    found = find_module(module_name, spec.base_dir)
    if found is None:
        yield finding("handler-not-found", spec, Msg(N_(
            "handler {handler}: no module {module} next to the tools file or on the "
            "interpreter's path; 'run' cannot load this tool"),
            {"handler": repr(spec.handler), "module": repr(module_name)}))
        return
    try:
        path, source = read_source(found)
        node = binding(ast.parse(source, filename=path), func_name)
    except (_Unknown, SyntaxError, ValueError, RecursionError):
        return
    if node is None:
        yield finding("handler-not-found", spec, Msg(N_(
            "handler {handler}: {path} defines no {function}; 'run' cannot load this tool"),
            {"handler": repr(spec.handler), "path": path, "function": repr(func_name)}))
        return
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
        return  # a class, an alias, a wrapped function: its signature is not in the source
    errors, warnings = signature_problems(node, spec.parameters)
    where = Msg(N_("{function}() in {path}"), {"function": func_name,
                                               "path": f"{_shown(path, spec.base_dir)}:{node.lineno}"})
    for rule_id, texts in (("handler-signature-mismatch", errors), ("handler-parameter-optional", warnings)):
        for text in texts:
            yield finding(rule_id, spec, Msg("{where} {text}", {"where": where, "text": text}))
