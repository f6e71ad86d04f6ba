"""How to reach one MCP server: ``McpServerConfig``, parsed from tools.yaml or ``--mcp``.

Values in ``env``, ``headers``, ``args`` and ``url`` may name environment variables as
``${VAR}``; they are expanded only when the server is started (``resolved_*``). The values of
``env`` and ``headers`` are treated as secrets whether they use ``${VAR}`` or not: they appear
in no repr, no error and no ``public_dict()`` (what transcripts record), only their keys do.
No module here imports the MCP SDK.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from agentdbg.errors import ConfigError

SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SECRET_NAME_RE = re.compile(r"token|key|secret|pass|auth|cred|cookie|session|sig", re.IGNORECASE)
TRANSPORTS = ("stdio", "http")
UNHINTED = ("trust", "safe")  # tools that do not say they are read-only: run freely | approval first
DEFAULT_INIT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 30.0
SERVER_KEYS = {"name", "transport", "command", "args", "env", "cwd", "url", "headers", "include",
               "exclude", "prefix", "init_timeout", "timeout", "unhinted"}
LAUNCHERS = {"python", "python3", "uv", "uvx", "npx", "node", "bunx", "bun", "pipx", "deno", "docker",
             "podman", "sh", "bash"}
SUBCOMMANDS = {"run", "exec", "x", "-m", "dlx", "tool"}


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server. ``env``/``headers`` hold the values as written (maybe ``${VAR}``)."""

    name: str
    transport: str                              # stdio | http
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    include: tuple[str, ...] | None = None      # None: every tool the server lists
    exclude: tuple[str, ...] = ()
    prefix: str = ""
    init_timeout: float = DEFAULT_INIT_TIMEOUT  # start + initialise + first tools/list
    timeout: float = DEFAULT_CALL_TIMEOUT       # one tools/call
    unhinted: str = "trust"                     # policy of tools with no readOnlyHint
    base_dir: Path | None = None                # relative cwd resolves against this
    source: str = ""                            # where it was configured ("--mcp", "tools.yaml:12")

    def __repr__(self) -> str:
        where = f"url={self.public_url()!r}" if self.transport == "http" else \
            f"command={self.command!r}, args={list(self.args)!r}"
        return f"McpServerConfig(name={self.name!r}, transport={self.transport!r}, {where})"

    # -- what may be shown and recorded ----------------------------------
    def public_url(self) -> str | None:
        """The URL as configured, without user info and with query values hidden."""
        return _public_url(self.url) if self.url else None

    def public_dict(self) -> dict[str, Any]:
        """Identity for transcripts and ``agentdbg tools``: never a secret value."""
        out: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if self.transport == "stdio":
            out.update(command=self.command, args=list(self.args))
            if self.cwd:
                out["cwd"] = self.cwd
            if self.env:
                out["env_keys"] = sorted(self.env)
        else:
            out["url"] = self.public_url()
            if self.headers:
                out["header_keys"] = sorted(self.headers)
        if self.include is not None:
            out["include"] = list(self.include)
        if self.exclude:
            out["exclude"] = list(self.exclude)
        if self.prefix:
            out["prefix"] = self.prefix
        return out

    def describe(self) -> str:
        """How it is started, in one line (no secrets): for messages and ``replay``."""
        if self.transport == "http":
            return str(self.public_url())
        return shlex.join([str(self.command), *self.args])

    # -- expanded at connect time ----------------------------------------
    def resolved_env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        return {k: self._expand(v, f"env.{k}", environ) for k, v in self.env.items()}

    def resolved_headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        return {k: self._expand(v, f"headers.{k}", environ) for k, v in self.headers.items()}

    def resolved_args(self, environ: Mapping[str, str] | None = None) -> list[str]:
        return [self._expand(a, f"args[{i}]", environ) for i, a in enumerate(self.args)]

    def resolved_url(self, environ: Mapping[str, str] | None = None) -> str:
        return self._expand(self.url or "", "url", environ)

    def secret_values(self, environ: Mapping[str, str] | None = None) -> set[str]:
        """The expanded values to mask wherever agentdbg writes text: whatever a ``${VAR}`` put
        anywhere, the URL's password, and the values of env vars, headers and URL query
        parameters whose names say they hold a secret (``*TOKEN*``, ``*KEY*``, ``Authorization`` …).
        Other literal values (``MODE: debug``) are not masked: they are configuration, and masking
        them would garble ordinary words."""
        env = os.environ if environ is None else environ
        templates = [*self.env.values(), *self.headers.values(), *self.args, self.url or ""]
        found = {env[v] for t in templates for v in VAR_RE.findall(t) if v in env}
        named = [*self.resolved_env(environ).items(), *self.resolved_headers(environ).items()]
        if self.url:
            parts = urlsplit(self.resolved_url(environ))
            named += parse_qsl(parts.query)
            found |= {parts.password} if parts.password else set()
        found |= {value for key, value in named if SECRET_NAME_RE.search(key)}
        return {v for v in found if v}

    def resolved_command(self) -> str:
        """``python``/``python3`` run with the interpreter running agentdbg (as command tools do)."""
        return sys.executable if self.command in ("python", "python3") else str(self.command)

    def resolved_cwd(self) -> str | None:
        if not self.cwd:
            return None
        path = Path(os.path.expanduser(self.cwd))
        if not path.is_absolute() and self.base_dir is not None:
            path = self.base_dir / path
        return str(path)

    def _expand(self, value: str, where: str, environ: Mapping[str, str] | None) -> str:
        env = os.environ if environ is None else environ

        def one(match: re.Match) -> str:
            var = match.group(1)
            if var not in env:
                raise ConfigError(f"MCP server {self.name!r}: environment variable {var!r} "
                                  f"(used in {where}) is not set")
            return env[var]

        return VAR_RE.sub(one, value)


def _public_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port else host
    query = "&".join(f"{quote(k)}=***" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


# -- parsing ---------------------------------------------------------------
ErrorFn = Callable[[tuple, str], ConfigError]


def parse_server_configs(raw: Any, *, base_dir: Path | None = None, source: str = "",
                         error: ErrorFn | None = None) -> list[McpServerConfig]:
    """The ``mcp_servers:`` list of a tools file. ``error(keys, message)`` may add file:line."""
    err = error or _plain_error
    if not isinstance(raw, list):
        raise err((), "'mcp_servers' must be a list of servers")
    out: list[McpServerConfig] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(raw):
        cfg = parse_server_config(item, index=i, base_dir=base_dir, source=source, error=error)
        if cfg.name in seen:
            raise err((i, "name"), f"MCP server {cfg.name!r}: duplicate name "
                                   f"(first defined as mcp_servers[{seen[cfg.name]}])")
        seen[cfg.name] = i
        out.append(cfg)
    return out


def _plain_error(keys: tuple, message: str) -> ConfigError:
    return ConfigError(message)  # messages name the server (or mcp_servers[i]) themselves


def parse_server_config(raw: Any, *, index: int = 0, base_dir: Path | None = None, source: str = "",
                        error: ErrorFn | None = None) -> McpServerConfig:
    """One entry of ``mcp_servers:`` (a plain dict). Errors name the server and the field."""
    err = error or _plain_error
    if not isinstance(raw, dict):
        raise err((index,), f"mcp_servers[{index}] must be a mapping")
    name = raw.get("name")
    who = f"MCP server {name!r}" if isinstance(name, str) else f"mcp_servers[{index}]"

    def bad(key: str, message: str) -> ConfigError:
        return err((index, key), f"{who}: field {key!r} {message}")

    if not isinstance(name, str) or not SERVER_NAME_RE.match(name):
        raise bad("name", "must match ^[A-Za-z0-9_.-]{1,64}$")
    for key in raw:
        if key not in SERVER_KEYS:
            raise err((index, key), f"{who}: unknown field {key!r} (expected one of "
                                    f"{', '.join(sorted(SERVER_KEYS))})")
    transport = raw.get("transport") or ("http" if "url" in raw else "stdio")
    if transport not in TRANSPORTS:
        raise bad("transport", f"must be 'stdio' or 'http', got {transport!r}")
    for key in ("command", "args", "env", "cwd") if transport == "http" else ("url", "headers"):
        if key in raw:
            raise bad(key, f"does not apply to a {transport} server")
    fields: dict[str, Any] = {}
    if transport == "stdio":
        fields["command"] = _string(raw.get("command"), bad, "command", "a non-empty string (the program)")
        fields["args"] = tuple(_strings(raw.get("args", []), bad, "args"))
        fields["env"] = _mapping(raw.get("env", {}), bad, "env")
        if "cwd" in raw:
            fields["cwd"] = _string(raw["cwd"], bad, "cwd", "a directory path")
    else:
        url = _string(raw.get("url"), bad, "url", "an http:// or https:// URL")
        _check_url(url, bad)
        fields["url"] = url
        fields["headers"] = _mapping(raw.get("headers", {}), bad, "headers")
    if "include" in raw and "exclude" in raw:
        raise bad("exclude", "cannot be combined with 'include'")
    if "include" in raw:
        fields["include"] = tuple(_strings(raw["include"], bad, "include", nonempty=True))
    if "exclude" in raw:
        fields["exclude"] = tuple(_strings(raw["exclude"], bad, "exclude"))
    prefix = raw.get("prefix", "")
    if not isinstance(prefix, str) or not re.fullmatch(r"[A-Za-z0-9_-]{0,32}", prefix):
        raise bad("prefix", "must be letters, digits, '_' or '-' (at most 32)")
    for key in ("init_timeout", "timeout"):
        value = raw.get(key)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise bad(key, f"must be a positive number of seconds, got {value!r}")
            fields[key] = float(value)
    unhinted = raw.get("unhinted", "trust")
    if unhinted not in UNHINTED:
        raise bad("unhinted", f"must be 'trust' or 'safe', got {unhinted!r}")
    return McpServerConfig(name=name, transport=transport, prefix=prefix, unhinted=unhinted,
                           base_dir=base_dir, source=source, **fields)


def _string(value: Any, bad: Callable[[str, str], ConfigError], key: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise bad(key, f"must be {what}")
    return value


def _strings(value: Any, bad: Callable[[str, str], ConfigError], key: str,
             nonempty: bool = False) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) \
            or (nonempty and not value):
        raise bad(key, "must be a " + ("non-empty " if nonempty else "") + "list of strings")
    return value


def _mapping(value: Any, bad: Callable[[str, str], ConfigError], key: str) -> dict[str, str]:
    # only the keys are named: the values may be secrets
    if not isinstance(value, dict):
        raise bad(key, "must be a mapping of names to strings")
    for k, v in value.items():
        if not isinstance(k, str) or not k:
            raise bad(key, "must have non-empty string keys")
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise bad(key, f"value of {k!r} must be a string")
    return {k: str(v) for k, v in value.items()}


def _check_url(url: str, bad: Callable[[str, str], ConfigError]) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise bad("url", f"must be an http:// or https:// URL, got {_public_url(url)!r}")


# -- the --mcp option --------------------------------------------------------
def parse_mcp_option(text: str, *, taken: Iterable[str] = ()) -> McpServerConfig:
    """``--mcp URL`` (Streamable HTTP) or ``--mcp "COMMAND ARGS…"`` (stdio).

    The server is named after the URL's host or the program it runs; ``taken`` names already
    in use get a ``-2``, ``-3`` … suffix.
    """
    text = text.strip()
    if not text:
        raise ConfigError("--mcp: expected a URL or a command, got an empty value")
    if re.match(r"^https?://", text, re.IGNORECASE):
        bad = _option_error(text)
        _check_url(text, bad)
        parts = urlsplit(text)
        base = (parts.hostname or "server") + (f"-{parts.port}" if parts.port else "")
        return McpServerConfig(name=_unique(_clean_name(base), taken), transport="http",
                               url=text, source="--mcp")
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"--mcp: cannot split the command: {exc}") from None
    return McpServerConfig(name=_unique(_clean_name(_program_name(argv)), taken), transport="stdio",
                           command=argv[0], args=tuple(argv[1:]), source="--mcp")


def _option_error(text: str) -> Callable[[str, str], ConfigError]:
    return lambda key, message: ConfigError(f"--mcp {_public_url(text)!r}: {message}")


def _program_name(argv: list[str]) -> str:
    words = [Path(w).name for w in argv]
    if words[0] not in LAUNCHERS:
        return words[0]
    for word in words[1:]:
        if word.startswith("-") or "=" in word or word in SUBCOMMANDS:
            continue
        word = re.sub(r"\.(py|js|mjs|ts|sh)$", "", word)
        return re.sub(r"(?<=.)@[^/]*$", "", word)  # npm package@version
    return words[0]


def _clean_name(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:60]
    return name or "server"


def _unique(name: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if name not in used:
        return name
    n = 2
    while f"{name}-{n}" in used:
        n += 1
    return f"{name}-{n}"
