"""The layer contract: every import points down, and no module imports itself in a circle.

The layers are declared in pyproject.toml ([tool.importlinter]); import-linter checks every
import, including those inside functions.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentdbg"


def test_every_import_points_down_the_layers():
    run = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command;"
                          " lint_imports_command()"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "Contracts: 1 kept, 0 broken." in run.stdout


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path, name: str) -> set[str]:
    """What importing ``name`` imports at once (imports inside functions are lazy on purpose)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # TYPE_CHECKING blocks never run
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m.startswith("agentdbg")}


def test_no_import_cycles():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: {m for m in _top_level_imports(path, name) if m in modules and m != name}
             for name, path in modules.items()}
    # a module also imports its package's __init__ first
    for name in modules:
        parent = name.rpartition(".")[0]
        if parent in modules and parent != name:
            graph[name].add(parent)
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    # a package's __init__ importing its own submodules is the one circle Python resolves
    def inside_one_package(cycle):
        pkg = min(cycle, key=len)
        return all(m == pkg or m.startswith(pkg + ".") for m in cycle)

    assert [c for c in cycles if not inside_one_package(c)] == []


def test_the_engine_and_the_checker_import_no_front_end():
    """bdb under pdb: the engine, providers and checker never load a UI or a server."""
    code = ("import sys; import agentdbg.engine.session, agentdbg.engine.replaying, "
            "agentdbg.checker.api, agentdbg.providers.offline\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('rich', 'prompt_toolkit', 'typer',"
            " 'starlette', 'uvicorn') or m.startswith(('agentdbg.cli', 'agentdbg.repl', "
            "'agentdbg.render', 'agentdbg.drivers', 'agentdbg.server'))]\nprint(bad)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def _all_imports(path: Path, name: str, modules: dict) -> set[str]:
    """Every ``agentdbg`` module ``name`` imports, at the top or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m in modules and m != name}


# the circles still there, each with who takes it away (none left: issue 22 untangled
# checker/handlers ↔ lint ↔ lint_mcp and transcript/runs ↔ writer)
KNOWN_CIRCLES: list[set[str]] = []


def import_circles(package: Path) -> list[set[str]]:
    """The groups of modules of ``package`` that reach themselves again through any import (at
    the top, inside a function, or under ``TYPE_CHECKING``): strongly connected components."""
    root = package.parent
    modules = {_module_name(p, root): p for p in package.rglob("*.py")}
    graph = {name: _all_imports(path, name, modules) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[set[str]] = []

    def visit(v: str) -> None:          # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return circles


def test_no_import_circles_even_through_imports_inside_functions():
    """A lazy import keeps start-up fast but still ties two modules together: no module may
    reach itself again through any import (groups of modules that do: strongly connected)."""
    circles = import_circles(PACKAGE)
    assert [c for c in circles if c not in KNOWN_CIRCLES] == []
    assert not any(m.startswith("agentdbg.transcript") for c in circles for m in c)


def test_a_circle_through_a_lazy_or_type_only_import_is_caught(tmp_path):
    """The two circles issue 22 untangled, rebuilt in a package of their own: each is found,
    whether the way back is an import inside a function or one only the type checker reads."""
    pkg = tmp_path / "agentdbg"
    for folder in (pkg, pkg / "checker", pkg / "transcript"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (pkg / "checker" / "handlers.py").write_text("from agentdbg.checker.lint import lint\n")
    (pkg / "checker" / "lint.py").write_text(
        "def lint():\n    from agentdbg.checker import lint_mcp\n    return lint_mcp\n")
    (pkg / "checker" / "lint_mcp.py").write_text(
        "def handlers():\n    from agentdbg.checker.handlers import lint\n    return lint\n")
    (pkg / "transcript" / "runs.py").write_text("from agentdbg.transcript import writer\n")
    (pkg / "transcript" / "writer.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from agentdbg.transcript.runs import Run\n")
    assert sorted(map(sorted, import_circles(pkg))) == [
        ["agentdbg.checker.handlers", "agentdbg.checker.lint", "agentdbg.checker.lint_mcp"],
        ["agentdbg.transcript.runs", "agentdbg.transcript.writer"]]
    (pkg / "transcript" / "writer.py").write_text("")   # the way back gone: no circle there
    assert sorted(map(sorted, import_circles(pkg))) == [
        ["agentdbg.checker.handlers", "agentdbg.checker.lint", "agentdbg.checker.lint_mcp"]]
