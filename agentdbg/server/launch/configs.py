"""Where the coding agents' own configuration sends them, read and never written.

* Claude Code: the ``env`` of its settings files overrides the process environment, so an
  ``ANTHROPIC_BASE_URL`` set there is where it talks to — the most specific file wins:
  ``.claude/settings.local.json``, ``.claude/settings.json`` (in the working directory), then
  the user's ``settings.json`` (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``).
* Codex CLI: ``config.toml`` in ``$CODEX_HOME`` (else ``~/.codex``): ``model_provider`` (or the
  selected profile's) names a ``[model_providers.ID]`` table with its ``base_url``; the
  built-in ``openai`` provider goes to ``openai_base_url`` or the public endpoint (Codex does
  not read ``OPENAI_BASE_URL``). A ``-c``/``--config`` or ``-p``/``--profile`` on the command
  line is taken into account.

A file that is missing, too large or unreadable counts as absent (with a note saying so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.i18n import _

MAX_CONFIG = 1 << 20     # a configuration file larger than this is not read
BUILT_IN_CODEX = ("openai", "oss", "ollama", "lmstudio")


@dataclass
class Found:
    value: str | None = None
    source: str | None = None         # the file (and key) it came from
    notes: list[str] = field(default_factory=list)


def _read(path: Path, notes: list[str]) -> bytes | None:
    try:
        if not path.is_file():
            return None
        if path.stat().st_size > MAX_CONFIG:
            notes.append(_("{path}: larger than {limit} bytes; not read").format(path=path, limit=MAX_CONFIG))
            return None
        return path.read_bytes()
    except OSError as exc:
        notes.append(_("{path}: not readable ({error})").format(path=path, error=type(exc).__name__))
        return None


# -- Claude Code --------------------------------------------------------------------------------

def claude_settings_files(env: dict[str, str], cwd: Path) -> list[Path]:
    """The settings files, the one that wins first."""
    user = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else \
        Path(env.get("HOME") or Path.home()) / ".claude"
    return [cwd / ".claude" / "settings.local.json", cwd / ".claude" / "settings.json",
            user / "settings.json"]


def claude_setting(env: dict[str, str], cwd: Path, name: str) -> Found:
    """``env.NAME`` of the first settings file that sets it."""
    found = Found()
    for path in claude_settings_files(env, cwd):
        raw = _read(path, found.notes)
        if raw is None:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            found.notes.append(
                _("{path}: not JSON; its settings are not taken into account").format(path=path))
            continue
        block = data.get("env") if isinstance(data, dict) else None
        value = block.get(name) if isinstance(block, dict) else None
        if isinstance(value, str) and value.strip():
            found.value, found.source = value.strip(), f"{path} (env.{name})"
            return found
    return found


# -- Codex CLI ----------------------------------------------------------------------------------

@dataclass
class CodexProvider:
    id: str
    base_url: str | None              # None: the public endpoint
    source: str | None
    env_key: str | None = None        # the variable its key is read from
    notes: list[str] = field(default_factory=list)

    @property
    def built_in(self) -> bool:
        return self.id in BUILT_IN_CODEX


def _toml(raw: bytes) -> dict | None:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            return None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _table(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _flag_values(argv: list[str], *names: str) -> list[str]:
    """The values given to ``names`` (``-c X``, ``-cX``, ``--config X``, ``--config=X``)."""
    out = []
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                out.append(argv[i + 1])
            elif arg.startswith(name + "=") and name.startswith("--"):
                out.append(arg[len(name) + 1:])
    return out


def _override(argv: list[str], key: str) -> str | None:
    """A ``-c key=value`` override's value (TOML: a quoted string, or a bare word)."""
    for item in _flag_values(argv, "-c", "--config"):
        name, eq, value = item.partition("=")
        if eq and name.strip() == key:
            parsed = _toml(f"v = {value}".encode())
            got = parsed.get("v") if parsed is not None else value.strip()
            return got if isinstance(got, str) else None
    return None


def codex_provider(env: dict[str, str], argv: list[str]) -> CodexProvider:
    """The provider this Codex command talks to, and where that is."""
    notes: list[str] = []
    home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else \
        Path(env.get("HOME") or Path.home()) / ".codex"
    path = home / "config.toml"
    raw = _read(path, notes)
    config: dict[str, Any] = (_toml(raw) if raw is not None else None) or {}
    if raw is not None and not config:
        notes.append(_("{path}: not readable as TOML; its provider is not taken into account").format(
            path=path))
    profiles = _table(config, "profiles")
    chosen: list[Any] = _flag_values(argv, "-p", "--profile") or [config.get("profile")]
    profile = _table(profiles, chosen[-1]) if isinstance(chosen[-1], str) else {}
    provider = _override(argv, "model_provider") or profile.get("model_provider") or \
        config.get("model_provider") or "openai"
    provider = provider if isinstance(provider, str) else "openai"
    if provider in BUILT_IN_CODEX:
        base = (_override(argv, "openai_base_url") or profile.get("openai_base_url")
                or config.get("openai_base_url")) if provider == "openai" else None
        return CodexProvider(provider, base if isinstance(base, str) else None,
                             f"{path} (openai_base_url)" if isinstance(base, str) else None,
                             "OPENAI_API_KEY" if provider == "openai" else None, notes)
    table = _table(_table(config, "model_providers"), provider)
    base = _override(argv, f"model_providers.{provider}.base_url") or table.get("base_url")
    key = table.get("env_key")
    if not isinstance(base, str):
        notes.append(_("Codex's provider {id} has no base_url in {path}").format(id=repr(provider),
                                                                               path=path))
    return CodexProvider(provider, base if isinstance(base, str) else None,
                         f"{path} (model_providers.{provider}.base_url)", key if isinstance(key, str)
                         else None, notes)


def toml_key(key: str) -> str:
    """``key`` as a TOML key: bare when it may be, else quoted."""
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else json.dumps(key)


# -- Gemini CLI ---------------------------------------------------------------------------------

def gemini_settings_files(env: dict[str, str], cwd: Path) -> list[Path]:
    """Its settings files, the one that wins first: the workspace's, then the user's
    (``$GEMINI_CLI_HOME``, else the home folder, ``/.gemini/settings.json``)."""
    home = Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home())
    return [cwd / ".gemini" / "settings.json", home / ".gemini" / "settings.json"]


def gemini_auth(env: dict[str, str], cwd: Path) -> Found:
    """How Gemini CLI signs in: ``security.auth.selectedType`` of the first settings file that
    sets it (or the older top-level ``selectedAuthType``). A file with comments is not read."""
    found = Found()
    for path in gemini_settings_files(env, cwd):
        raw = _read(path, found.notes)
        if raw is None:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            found.notes.append(_("{path}: not plain JSON; its sign-in setting is not taken into "
                                 "account").format(path=path))
            continue
        auth = _table(_table(data, "security") if isinstance(data, dict) else {}, "auth")
        value = auth.get("selectedType")
        if value is None and isinstance(data, dict):
            value = data.get("selectedAuthType")
        if isinstance(value, str) and value:
            found.value, found.source = value, f"{path} (security.auth.selectedType)"
            return found
    return found
