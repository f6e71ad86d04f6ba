"""The typed surface: the conversation model, the codecs, the transcript events and the public
API say what they hold (no bare ``dict``, no ``Any``), and a user's ``mypy --strict`` sees
those types through the installed package's ``py.typed``."""

import ast
import contextlib
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentdbg"

#: the modules whose annotations must name their types (issue 22): the model, the codecs
#: (Chat Completions' is ``wire/chat.py``; ``wire/pairing.py`` is not one) and what they share
#: (``wire/common.py``: the chat form, SSE, usage), the transcript
#: events and the public API
SURFACE = sorted({
    "conversation.py", "wire/codec.py", "wire/chat.py", "wire/common.py",
    *(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.glob("wire/*_codec.py")),
    "transcript/events.py", "transcript/document.py",
    *(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.glob("testing/*.py")),
    "pytest_plugin.py", "tool_api.py",
})

#: (module, the alias's name): places allowed an ``Any``, each with why. None today:
#: ``transcript/events.py`` gives msgspec ``JSON = Any`` at run time, but that is an
#: assignment the type checker never sees (it reads the recursive alias), not an annotation.
ALLOWED: set[tuple[str, str]] = set()


def _loose(annotation: ast.expr) -> list[str]:
    """``Any``, ``Dict`` and bare ``dict`` in one annotation (quoted ones read too)."""
    found = []
    for node in ast.walk(annotation):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            with contextlib.suppress(SyntaxError):   # a Literal's text, not a type
                found += _loose(ast.parse(node.value, mode="eval").body)
        elif isinstance(node, ast.Name) and node.id in ("Any", "Dict"):
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in ("Any", "Dict"):
            found.append(node.attr)
    parameterized = {id(n.value) for n in ast.walk(annotation) if isinstance(n, ast.Subscript)}
    found += ["bare dict" for n in ast.walk(annotation)
              if isinstance(n, ast.Name) and n.id == "dict" and id(n) not in parameterized]
    return found


def _annotations(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """(name, annotation): every parameter's, return's and annotated name's, and every
    module-level type alias (``X: TypeAlias = ...``, ``X = dict[...]``, ``X = A | B``)."""
    out: list[tuple[str, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            out += [(f"{node.name}({p.arg})", p.annotation) for p in params
                    if p is not None and p.annotation is not None]
            if node.returns is not None:
                out.append((f"{node.name} -> ", node.returns))
        elif isinstance(node, ast.AnnAssign):
            name = ast.unparse(node.target)
            out.append((name, node.annotation))
            if node.value is not None and ast.unparse(node.annotation).endswith("TypeAlias"):
                out.append((name, node.value))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Subscript, ast.BinOp))):
            out.append((node.targets[0].id, node.value))
    return out


def loose_annotations(source: str, module: str) -> list[str]:
    tree = ast.parse(source)
    return [f"{module}:{ann.lineno}: {name}: {', '.join(sorted(set(bad)))} in {ast.unparse(ann)}"
            for name, ann in _annotations(tree)
            if (bad := _loose(ann)) and (module, name) not in ALLOWED]


def test_the_model_codecs_events_and_public_api_name_their_types():
    assert "wire/gemini_codec.py" in SURFACE and "testing/__init__.py" in SURFACE
    found = [line for module in SURFACE
             for line in loose_annotations((PACKAGE / module).read_text(encoding="utf-8"), module)]
    assert found == [], "annotations with Any or a bare dict (use JSON / JsonObject from " \
        "agentdbg.conversation, a TypedDict or a Protocol):\n" + "\n".join(found)


def test_the_scan_sees_each_kind_of_loose_annotation():
    source = '''
from typing import Any, Dict
import typing
Alias = dict[str, Any]
def a(x: dict) -> None: ...
def b(x: "list[dict]") -> typing.Any: ...
def c(*rest: Any, **kw: Dict[str, int]) -> dict[str, int]: ...
class K:
    field: "dict | None" = None
'''
    found = loose_annotations(source, "m.py")
    assert sorted(line.split(": ")[1] for line in found) == \
        sorted(["Alias", "a(x)", "b(x)", "b -> ", "c(rest)", "c(kw)", "field"])
    assert loose_annotations("def ok(x: dict[str, int], y: 'list[dict[str, str]]') -> None: ...",
                             "m.py") == []


USER_TEST = '''
from agentdbg.testing import ReplayResult, assert_max_turns, assert_replays, assert_tool_sequence
from agentdbg.tool_api import ToolError


def query_order(order_id: str) -> dict[str, str]:
    if not order_id.startswith("ORD-"):
        raise ToolError("not_found", f"no order {order_id}", retryable=False)
    return {"order_id": order_id, "status": "shipped"}


def test_order_lookup_still_replays() -> None:
    result: ReplayResult = assert_replays("transcripts/order.jsonl")
    assert result.stop_reason == "completed"
    assert_tool_sequence("transcripts/order.jsonl", ["query_order"])
    assert_max_turns("transcripts/order.jsonl", 3)
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment where agentdbg is an installed package (as pip leaves it: mypy reads
    its types only through ``py.typed``), its dependencies borrowed from this one."""
    env_dir = tmp_path_factory.mktemp("typed") / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        text=True).strip())
    (site / "agentdbg").symlink_to(PACKAGE, target_is_directory=True)
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _strict(python: Path, tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_user.py").write_text(code)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--python-executable",
                           str(python), "--cache-dir", str(tmp_path / "cache"), "test_user.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_users_strict_mypy_passes_on_the_testing_helpers_and_tool_api(installed, tmp_path):
    run = _strict(installed, tmp_path, USER_TEST)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no issues found in 1 source file" in run.stdout


def test_a_users_strict_mypy_sees_the_types_not_any(installed, tmp_path):
    run = _strict(installed, tmp_path, USER_TEST + '\nassert_max_turns("t.jsonl", "3")\n'
                                                   'ToolError("denied")\n')
    assert run.returncode == 1
    assert 'Argument 2 to "assert_max_turns" has incompatible type "str"; expected "int"' \
        in run.stdout
    assert 'Missing positional argument "message" in call to "ToolError"' in run.stdout
