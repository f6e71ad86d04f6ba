"""Which tools files may run code: a file agentdbg found by itself is trusted only once you say so.

A tools file runs code: its python handlers are imported, its commands run, its MCP servers
start (and get ``${VAR}`` values). A file you name (``--tools``, ``AGENTDBG_TOOLS``, the
``tools PATH`` argument, a library call with a path) is yours. A file agentdbg *found*
(``./tools.yaml`` in a checkout you just cloned) may be anyone's: until it is trusted it is
read as data only — its definitions are offered, fixtures answer, but nothing is imported,
run, started or expanded (``load_found``), and the run says what it skipped and how to
trust it. Trusted without asking: agentdbg's own sample (a file whose ``digest`` equals the
bundled sample's: the same tools file and the same handler modules and scripts, wherever
they lie), and a file ``record_trust`` recorded (``agentdbg trust``, ``agentdbg init``).

The digest (direnv's ``allow``, VS Code's workspace trust) covers what the file runs by
itself: the tools file's bytes; for each python handler, every file Python executes to import
its module (the packages' ``__init__.py`` on the way and the module), found as the import
would find it (the tools file's folder first, then the interpreter's path; nothing imported);
for each command tool and stdio MCP server, every argument that names a file in the tools
file's folder (``inventory_cmd.py``). A change to any of them asks again. Not covered: what
those modules and scripts import or read in turn (trust the folder, not only the file), and
files larger than ``MAX_HASHED`` past that size. Trust is kept in ``$AGENTDBG_HOME/trusted.json``
by the file's resolved path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.errors import AgentdbgError
from agentdbg.i18n import N_, Join, Msg, _, tr
from agentdbg.toolspec import ToolSet, bundled_tools_path, load_tools

MAX_HASHED = 64 * 1024 * 1024     # bytes of one file the digest reads
STORE_VERSION = 1


# -- what a tools file runs, and its digest ---------------------------------------------------

@dataclass
class Runs:
    """What a tools file would run: python handler modules, command/server files, servers."""

    modules: list[str]
    scripts: list[str]
    servers: list[str]
    commands: int = 0

    def phrase(self) -> str:
        """``imports shop, weather; runs 2 commands (inventory_cmd.py); starts MCP server 'time'``."""
        parts = []
        if self.modules:
            parts.append(_("imports {modules}").format(modules=", ".join(self.modules)))
        if self.commands:
            files = f" ({', '.join(self.scripts)})" if self.scripts else ""
            said = _("runs {n} command{files}") if self.commands == 1 else \
                _("runs {n} commands{files}")
            parts.append(said.format(n=self.commands, files=files))
        if self.servers:
            parts.append(_("starts MCP server {names}").format(
                names=", ".join(repr(s) for s in self.servers)))
        return _("; ").join(parts) or _("runs nothing (fixtures only)")

    @property
    def anything(self) -> bool:
        return bool(self.modules or self.commands or self.servers)


def digest(path: str | os.PathLike) -> str:
    """``sha256:…`` of what ``path`` runs by itself (see the module's docstring)."""
    h = hashlib.sha256(b"agentdbg-trust-1\0")
    for entry in _manifest(Path(path)):
        h.update(json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\0")
    return "sha256:" + h.hexdigest()


def runs(path: str | os.PathLike) -> Runs:
    """What ``path`` would run, for the question and the messages."""
    toolset = _read(Path(path))
    if toolset is None:
        return Runs([], [], [])
    modules = sorted({t.handler.split(":")[0] for t in toolset.tools if t.handler_kind == "python"})
    commands = [t.handler for t in toolset.tools if t.handler_kind == "command"]
    base = Path(path).resolve().parent
    scripts = sorted({str(f.relative_to(base)) for argv in commands for f in _files(base, argv)})
    return Runs(modules, scripts, [s.name for s in toolset.servers], len(commands))


def _manifest(path: Path) -> list[list]:
    entries: list[list] = [["tools", _hash_file(path)]]
    toolset = _read(path)
    if toolset is None:            # not a tools file agentdbg can read: the bytes say it all
        return entries
    base = path.resolve().parent
    for name in sorted({t.handler.split(":")[0] for t in toolset.tools if t.handler_kind == "python"}):
        entries.append(["module", name, [_hash_file(Path(f)) for f in module_files(name, base)]])
    argvs = [t.handler for t in toolset.tools if t.handler_kind == "command"]
    argvs += [[s.command or "", *s.args] for s in toolset.servers if s.transport == "stdio"]
    for f in sorted({f for argv in argvs for f in _files(base, argv)}):
        entries.append(["file", f.relative_to(base).as_posix(), _hash_file(f)])
    return entries


def _read(path: Path) -> ToolSet | None:
    try:
        return load_tools(path, resolve=False, lenient=True)
    except AgentdbgError:
        return None


def module_files(name: str, base: Path) -> list[str]:
    """The files ``import name`` executes (its packages' ``__init__`` first), found as the
    import would find them from ``base`` first; nothing is imported."""
    from agentdbg.checker.handlers import find_module

    parts = name.split(".")
    files = []
    for depth in range(1, len(parts) + 1):
        spec = find_module(".".join(parts[:depth]), base)
        if spec is None:
            files.append(f"<{'.'.join(parts[:depth])}: not found>")
            break
        if spec.origin and os.path.isfile(spec.origin):
            files.append(spec.origin)
    return files


def _files(base: Path, argv: list[str]) -> list[Path]:
    """Arguments of a command that name a regular file inside ``base`` (what it runs)."""
    found = []
    for word in argv:
        if not word or word.startswith("-") or "\0" in word:
            continue
        with contextlib.suppress(OSError, ValueError):
            candidate = (base / word).resolve()
            if candidate.is_file() and candidate.is_relative_to(base):
                found.append(candidate)
    return found


def _hash_file(path: Path) -> str:
    from agentdbg.paths import open_input, read_at_most

    if str(path).startswith("<"):          # a module that is not found: named, not read
        return str(path)
    try:
        with open_input(path, idle=1.0) as fh:
            data = read_at_most(fh, MAX_HASHED)
    except OSError as exc:
        return f"unreadable: {type(exc).__name__}"
    return hashlib.sha256(data).hexdigest()


# -- the trust store ---------------------------------------------------------------------------

def store_path() -> Path:
    from agentdbg.paths import data_dir

    return data_dir() / "trusted.json"


def _load_store() -> dict[str, dict]:
    try:
        doc = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}


def _save_store(files: dict[str, dict]) -> None:
    import tempfile

    target = store_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".trusted.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": STORE_VERSION, "files": files}, fh, ensure_ascii=False, indent=1)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _key(path: str | os.PathLike) -> str:
    return str(Path(path).resolve())


def record_trust(path: str | os.PathLike) -> str:
    """Trust ``path`` as it is now (its digest); returns the digest. ``agentdbg trust`` and
    ``agentdbg init`` (for the file it wrote) call this. A later change asks again."""
    if not Path(path).is_file():
        raise AgentdbgError(Msg(N_("{path}: no such {what}"), {"path": path, "what": Msg("tools file")}))
    value = digest(path)
    files = _load_store()
    files[_key(path)] = {"digest": value, "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    try:
        _save_store(files)
    except OSError as exc:
        raise AgentdbgError(Msg(N_("{path}: cannot record the trust: {reason}"),
                                {"path": store_path(), "reason": exc.strerror or exc})) from None
    return value


def revoke(path: str | os.PathLike) -> bool:
    """Forget ``path``'s trust; whether it was trusted."""
    files = _load_store()
    if files.pop(_key(path), None) is None:
        return False
    _save_store(files)
    return True


def recorded() -> list[tuple[str, str]]:
    """(path, state) of every recorded file: ``trusted``, ``changed since`` or ``missing``."""
    out = []
    for key, entry in sorted(_load_store().items()):
        if not Path(key).is_file():
            out.append((key, N_("missing")))
        else:
            same = entry.get("digest") == digest(key)
            out.append((key, N_("trusted") if same else N_("changed since")))
    return out


def is_recorded(path: str | os.PathLike) -> bool:
    entry = _load_store().get(_key(path))
    return entry is not None and entry.get("digest") == digest(path)


def is_sample(path: str | os.PathLike) -> bool:
    """``path`` is agentdbg's own sample: the bundled file, or a copy identical in what it runs."""
    from agentdbg.paths import same_file

    bundled = bundled_tools_path()
    return same_file(path, bundled) or (bundled.is_file() and digest(path) == digest(bundled))


# -- deciding ------------------------------------------------------------------------------------

def standing(path: str | os.PathLike) -> str:
    """How a *found* file stands: ``sample``, ``trusted`` or ``untrusted``."""
    if is_sample(path):
        return "sample"
    return "trusted" if is_recorded(path) else "untrusted"


def load_found(path: str | os.PathLike, ask: Any = None) -> ToolSet:
    """The tools of a file agentdbg found by itself. Trusted (the sample, a recorded file, or
    ``ask(path, runs)`` returning True, which records it): loaded as usual. Else read as data:
    python and command tools are kept (their definitions) but blocked, MCP servers are not
    started; ``ToolSet.trust`` is ``untrusted`` and ``ToolSet.skipped`` says what was skipped."""
    state = standing(path)
    if state == "untrusted":
        what = runs(path)
        if not what.anything:           # fixtures only: nothing to trust
            state = "harmless"
        elif ask is not None and ask(path, what):
            record_trust(path)
            state = "trusted"
    if state != "untrusted":
        toolset = load_tools(path)
        toolset.trust = state
        return toolset
    return _as_data(path)


def _as_data(path: str | os.PathLike) -> ToolSet:
    toolset = load_tools(path, resolve=False)
    toolset.trust = "untrusted"
    hint = f"not run: {Path(path).name} is not trusted (agentdbg trust {Path(path).name})"
    kinds = {"python": 0, "command": 0}
    for spec in toolset.tools:
        if spec.handler_kind in kinds:
            spec.blocked = hint
            kinds[spec.handler_kind] += 1
    skipped: list[Msg] = []
    if kinds["python"]:
        skipped.append(Msg("{n} python handler(s) not imported", {"n": kinds["python"]}))
    if kinds["command"]:
        skipped.append(Msg("{n} command(s) not run", {"n": kinds["command"]}))
    if toolset.servers:
        skipped.append(Msg("MCP server {names} not started",
                           {"names": ", ".join(repr(s.name) for s in toolset.servers)}))
    toolset.servers = []
    toolset.skipped = skipped
    return toolset


def untrusted_line(toolset: ToolSet) -> str:
    """The one line a run prints for a found file it did not trust."""
    return _("{path} is not trusted: {skipped} (calls of those tools are denied); to trust it: "
             "agentdbg trust {path}").format(path=toolset.path, skipped=tr(Join(tuple(toolset.skipped))))
