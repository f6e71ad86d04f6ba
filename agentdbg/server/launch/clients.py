"""How each kind of command is pointed at the proxy, and where it was going before.

``app`` is any program built on the SDKs (Python or Node, litellm, LangChain …): it gets the
base-URL variables of every family the proxy relays (see ``formats``). Three coding agents
are recognised by their command's name (``--client NAME`` forces one):

* ``claude`` (Claude Code): the variables, and ``--settings '{"env": {"ANTHROPIC_BASE_URL":
  …}}'`` on its command line — settings given there win over its settings files, whose
  ``env`` wins over the environment. Its files are never touched.
* ``codex`` (Codex CLI): ``-c openai_base_url="…"`` (its built-in provider) or ``-c
  model_providers.ID.base_url="…"`` (a provider of the user's own): an overlay of its
  config.toml for this run only. The file is never touched.
* ``gemini`` (Gemini CLI): the variables, and ``GEMINI_CLI_TRUST_WORKSPACE=true`` when it runs
  without a terminal (headless, it refuses a folder not yet trusted). Only API-key sign-in
  sends Gemini API requests; it is chosen in its settings files alone
  (``security.auth.selectedType: gemini-api-key``; with ``GOOGLE_GEMINI_BASE_URL`` set and none
  chosen, ``gemini -p`` stops with "Invalid auth method selected."), so agentdbg reads them and
  says what to set — it never writes them.

With ``--offline`` or ``--script`` (agentdbg serve behind the proxy), a placeholder key goes
where a client insists on one and has none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.i18n import _
from agentdbg.server.launch import configs
from agentdbg.server.launch.formats import PLACEHOLDER_KEY, Family, family


@dataclass
class Plan:
    """What the command is run with, and what agentdbg learnt on the way."""

    argv: list[str]
    env: dict[str, str]
    found: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # family: (URL, from)
    notes: list[str] = field(default_factory=list)


class App:
    """Any program built on the SDKs."""

    name = "app"
    commands: tuple[str, ...] = ()

    def upstreams(self, plan: Plan, families: tuple[Family, ...], cwd: Path) -> None:
        """Where each family was going: the command's environment, else the public endpoint."""
        for fam in families:
            plan.found[fam.name] = fam.upstream_from(plan.env)

    def add_flags(self, plan: Plan, flags: list[str]) -> None:
        """The client's own flags: right after its name, or last when the command runs it
        through something else (``npx @anthropic-ai/claude-code …``, ``--client claude``)."""
        if Path(plan.argv[0]).name in self.commands:
            plan.argv[1:1] = flags
        else:
            plan.argv.extend(flags)

    def point(self, plan: Plan, families: tuple[Family, ...], root: str, offline: bool) -> None:
        """Set the variables (and flags) that send the command's requests to ``root``."""
        for fam in families:
            url = fam.proxy_url(root)
            plan.env[fam.variables[0]] = url
            for var in fam.variables[1:]:
                if var in plan.env:
                    plan.env[var] = url
            if offline and not any(plan.env.get(k) for k in fam.keys):
                plan.env[fam.keys[0]] = PLACEHOLDER_KEY
        _no_proxy_for_loopback(plan.env)


class ClaudeCode(App):
    name = "claude"
    commands = ("claude",)

    def upstreams(self, plan: Plan, families: tuple[Family, ...], cwd: Path) -> None:
        super().upstreams(plan, families, cwd)
        anthropic = family("anthropic")
        if anthropic not in families:
            return
        found = configs.claude_setting(plan.env, cwd, "ANTHROPIC_BASE_URL")
        plan.notes.extend(found.notes)
        if found.value is not None:
            plan.found["anthropic"] = (found.value, found.source)

    def point(self, plan: Plan, families: tuple[Family, ...], root: str, offline: bool) -> None:
        super().point(plan, families, root, offline)
        anthropic = family("anthropic")
        if anthropic in families:
            settings = {"env": {"ANTHROPIC_BASE_URL": anthropic.proxy_url(root)}}
            self.add_flags(plan, ["--settings", json.dumps(settings)])
        if offline:   # no update checks, telemetry or error reports: nothing leaves the machine
            plan.env.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")


CODEX_PROVIDER = "agentdbg"


class Codex(App):
    name = "codex"
    commands = ("codex",)

    def __init__(self) -> None:
        self.provider = configs.CodexProvider("openai", None, None, "OPENAI_API_KEY")

    def upstreams(self, plan: Plan, families: tuple[Family, ...], cwd: Path) -> None:
        super().upstreams(plan, families, cwd)
        provider = configs.codex_provider(plan.env, plan.argv)
        plan.notes.extend(provider.notes)
        self.provider = provider
        if provider.built_in and provider.id != "openai":
            plan.notes.append(_("Codex's built-in provider {id} cannot be pointed elsewhere: its "
                                "requests do not go through agentdbg").format(id=repr(provider.id)))
            return
        openai = family("openai")
        plan.found["openai"] = (provider.base_url or openai.public, provider.source)

    def point(self, plan: Plan, families: tuple[Family, ...], root: str, offline: bool) -> None:
        super().point(plan, families, root, offline)
        provider = self.provider
        if provider.built_in and provider.id != "openai":
            return
        url = json.dumps(family("openai").proxy_url(root))
        if provider.id != "openai":
            key = f"model_providers.{configs.toml_key(provider.id)}.base_url"
            self.add_flags(plan, ["-c", f"{key}={url}"])
            if offline and provider.env_key and not plan.env.get(provider.env_key):
                plan.env[provider.env_key] = PLACEHOLDER_KEY
            return
        # the built-in provider would try a WebSocket first, which the proxy does not relay:
        # the same endpoint as a provider of agentdbg's own, over HTTP, with the same key
        auth = 'env_key = "OPENAI_API_KEY"' if plan.env.get("OPENAI_API_KEY") else \
            "requires_openai_auth = true"
        self.add_flags(plan, [
            "-c", f"model_provider={json.dumps(CODEX_PROVIDER)}",
            "-c", f'model_providers.{CODEX_PROVIDER}={{name = "OpenAI (through agentdbg)", '
                  f'base_url = {url}, wire_api = "responses", supports_websockets = false, {auth}}}'])


API_KEY_AUTH = "gemini-api-key"


class GeminiCli(App):
    name = "gemini"
    commands = ("gemini",)

    def upstreams(self, plan: Plan, families: tuple[Family, ...], cwd: Path) -> None:
        super().upstreams(plan, families, cwd)
        if family("gemini") in families:
            plan.notes.extend(_gemini_sign_in(configs.gemini_auth(plan.env, cwd)))

    def point(self, plan: Plan, families: tuple[Family, ...], root: str, offline: bool) -> None:
        super().point(plan, families, root, offline)
        if family("gemini") not in families:
            plan.notes.append(_("agentdbg does not relay the Gemini API yet (its codec is not in "
                                "this build): gemini's requests go to its own endpoint, unrecorded"))
        if not os.isatty(0):
            plan.env.setdefault("GEMINI_CLI_TRUST_WORKSPACE", "true")


def _gemini_sign_in(found: configs.Found) -> list[str]:
    """What to tell the user when Gemini CLI's settings do not pick API-key sign-in: only then
    are its requests Gemini API requests that reach agentdbg. The setting lives in a file
    only (no variable or flag sets it), and agentdbg does not write the client's files."""
    if found.value == API_KEY_AUTH:
        return found.notes
    fix = _("put {setting} in {path} (agentdbg does not write it)").format(
        setting=json.dumps({"security": {"auth": {"selectedType": API_KEY_AUTH}}}),
        path="~/.gemini/settings.json")
    if found.value is None:
        said = _("Gemini CLI's settings pick no sign-in (security.auth.selectedType): with "
                 "GOOGLE_GEMINI_BASE_URL set, it stops with {error} when run with -p; {fix}").format(
            error="'Invalid auth method selected.'", fix=fix)
    else:
        said = _("Gemini CLI signs in with {auth} ({source}): its requests do not go to the Gemini "
                 "API, nor through agentdbg; for API-key sign-in, {fix}").format(
            auth=repr(found.value), source=found.source, fix=fix)
    return [*found.notes, said]


CLIENTS: dict[str, type[App]] = {c.name: c for c in (App, ClaudeCode, Codex, GeminiCli)}


def client_for(argv: list[str], forced: str | None = None) -> App:
    """The client ``--client`` names, else the one ``argv[0]``'s name is, else ``app``."""
    if forced is not None:
        return CLIENTS[forced]()
    name = Path(argv[0]).name
    for kind in CLIENTS.values():
        if name in kind.commands:
            return kind()
    return App()


def _no_proxy_for_loopback(env: dict[str, str]) -> None:
    """An HTTP proxy in the environment must not carry requests meant for agentdbg's."""
    if not any(env.get(v) for v in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
                                     "ALL_PROXY", "all_proxy")):
        return
    for var in ("NO_PROXY", "no_proxy"):
        kept = [h for h in env.get(var, "").split(",") if h.strip()]
        env[var] = ",".join(kept + [h for h in ("127.0.0.1", "localhost", "::1") if h not in kept])
