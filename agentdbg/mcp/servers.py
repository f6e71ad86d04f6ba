"""The MCP servers of one run: started together, stopped together. ``toolspec.start_servers``
joins their tools to a ``ToolSet`` (this package sits below ``toolspec`` and never imports it).

``McpServers.start()`` starts (stdio) or connects to (HTTP) each server in turn, initialises it and
lists its tools (every page); each selected tool is an ``McpToolDef`` with a policy from its
annotations. A server that fails to start, times out or lists invalid tools raises
``McpServerError`` naming it, after the servers already started are stopped. Servers start one
after the other, in the calling thread: an interrupt while one starts stops it and every other (a
start in a worker thread could outlive an interrupted run).

``close()`` stops them all (idempotent, from a ``finally``); ``cancel_all()`` cancels every call in
flight (Ctrl-C sends the protocol's cancellation). ``records()`` is what a transcript keeps about
each server: how it was started (never a secret), who answered, and its tool list.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentdbg.errors import ConfigError
from agentdbg.mcp import sdklog
from agentdbg.mcp.config import McpServerConfig
from agentdbg.mcp.errors import McpServerError
from agentdbg.mcp.tools import McpToolDef, select_tools

if TYPE_CHECKING:
    from agentdbg.mcp.client import McpClient


@dataclass
class Problem:
    """A tool the API would reject (lenient start: ``agentdbg tools`` lists it and lints it)."""
    server: str
    tool: str | None
    message: str
    line: int | None = None


@dataclass
class Started:
    """One running server: its client, its whole tool list as listed, the tools used."""
    client: McpClient
    listed: list[dict]
    tools: list[McpToolDef]
    line: int | None = None

    def record(self) -> dict:
        hashes = {str(t.get("name")): _hash(t) for t in self.listed}
        return {**self.client.identity(), "tools_hash": _hash(self.listed),
                "tools": [{"name": name, "hash": h} for name, h in hashes.items()],
                "used": [t.name for t in self.tools]}


class McpServers:
    def __init__(self, configs: Iterable[McpServerConfig], *,
                 environ: Mapping[str, str] | None = None):
        self.configs = list(configs)
        self.environ = environ
        self.started: dict[str, Started] = {}
        self.problems: list[Problem] = []
        self._clients: list[McpClient] = []

    def __enter__(self) -> McpServers:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- lifetime ---------------------------------------------------------------
    def start(self, taken: Mapping[str, str] | None = None, *, lenient: bool = False) -> McpServers:
        """Start every server and list its tools. ``taken``: tool names already in use (the
        local tools'), each with how a clash should name it.

        ``lenient``: a tool the API would reject is kept and recorded in ``problems`` (for the
        linter) instead of failing the start."""
        from agentdbg.mcp.client import McpClient

        if self.configs and importlib.util.find_spec("mcp") is None:
            raise ConfigError(f"MCP server {self.configs[0].name!r}: the MCP SDK is not installed; "
                              "pip install 'agentdbg-cli[mcp]'")
        check_names(self.configs)
        names = dict(taken or {})
        said = sdklog.install()
        said.hold()    # a failed start is its own one error line; a good one says what was held
        started = False
        try:
            for cfg in self.configs:
                client = McpClient(cfg, environ=self.environ)
                self._clients.append(client)
                client.start()
                listed = client.list_tools()
                defs = select_tools(listed, server=cfg.name, include=cfg.include, exclude=cfg.exclude,
                                    prefix=cfg.prefix, unhinted=cfg.unhinted)
                line = line_of(cfg)
                for d in defs:
                    self._check(d, names, lenient, line)
                    names.setdefault(d.name, f"the tool {d.name!r} of MCP server {cfg.name!r}")
                self.started[cfg.name] = Started(client, listed, defs, line)
            started = True
        except BaseException:
            self.close()
            raise
        finally:
            said.let_go(show=started)
        return self

    def close(self) -> None:
        """Stop every server (each is given a moment, then its process group is killed)."""
        for client in reversed(self._clients):
            client.close()

    def cancel_all(self) -> int:
        """Cancel every call in flight on every server; how many were cancelled."""
        return sum(c.cancel_all() for c in self._clients)

    # -- facts --------------------------------------------------------------------
    def client(self, name: str) -> McpClient | None:
        started = self.started.get(name)
        return started.client if started is not None else None

    def records(self) -> list[dict]:
        return [s.record() for s in self.started.values()]

    def secrets(self) -> set[str]:
        """The secret values the servers were started with, to keep out of transcripts."""
        return {v for cfg in self.configs for v in _secret_values(cfg, self.environ)}

    # -- helpers ------------------------------------------------------------------
    def _check(self, d: McpToolDef, taken: dict[str, str], lenient: bool, line: int | None) -> None:
        found = [*d.problems, *_schema_problems(d.parameters)]
        if d.name in taken:
            found.append(f"its name clashes with {taken[d.name]}; give the server a 'prefix'")
        for message in found:
            if not lenient:
                hint = "'exclude'" if d.remote_name == d.name else f"exclude: [{d.remote_name}]"
                raise McpServerError(d.server, f"tool {d.name!r}: {message} (leave it out with {hint})")
            self.problems.append(Problem(d.server, d.name, message, line))



def check_names(configs: Iterable[McpServerConfig]) -> None:
    """Two servers may not share a name (a tools file's and ``--mcp``'s together)."""
    names: dict[str, str] = {}
    for cfg in configs:
        if cfg.name in names:
            raise ConfigError(f"MCP server {cfg.name!r} is named twice ({names[cfg.name]} and "
                              f"{cfg.source or '--mcp'})")
        names[cfg.name] = cfg.source or "--mcp"


def tool_list_changes(recorded: dict, now: dict) -> str | None:
    """How a server's tool list differs from a recording's, in one line (None: the same)."""
    if recorded.get("tools_hash") == now.get("tools_hash"):
        return None
    before = {t.get("name"): t.get("hash") for t in recorded.get("tools") or [] if isinstance(t, dict)}
    after = {t["name"]: t["hash"] for t in now.get("tools") or []}
    parts = []
    for label, names in (("new", [n for n in after if n not in before]),
                         ("gone", [n for n in before if n not in after]),
                         ("changed", [n for n in after if n in before and before[n] != after[n]])):
        if names:
            parts.append(f"{label}: {', '.join(str(n) for n in names)}")
    versions = [_version(recorded), _version(now)]
    said = f" (server version {versions[0]} then, {versions[1]} now)" if versions[0] != versions[1] else ""
    return f"MCP server {now.get('name')!r}: its tool list changed since the recording{said}: " + \
        ("; ".join(parts) or "the same names, in another order")


def _version(record: dict) -> str:
    info = record.get("server_info")
    return str(info.get("version")) if isinstance(info, dict) else "?"


def _schema_problems(schema: dict) -> list[str]:
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return [f"its inputSchema is not a valid JSON Schema at {where}: {exc.message}"]
    return []


def _secret_values(cfg: McpServerConfig, environ: Mapping[str, str] | None) -> set[str]:
    try:
        return cfg.secret_values(environ)
    except ConfigError:  # a ${VAR} that is not set: the server never started
        return set()


def line_of(cfg: McpServerConfig) -> int | None:
    """The line of the tools file the server is defined on (None for ``--mcp``)."""
    tail = cfg.source.rpartition(":")[2]
    return int(tail) if tail.isdigit() else None


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
