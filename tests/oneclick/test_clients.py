"""How `proxy -- CMD` points each kind of client at the proxy, and finds where it was going:
the variables each SDK reads, Claude Code's and Codex's own configuration (read, never
written), placeholders only where no key is set, and nothing for an API the proxy cannot
relay yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomllib

from agentdbg.server.launch.clients import Plan, client_for
from agentdbg.server.launch.formats import FAMILIES, PLACEHOLDER_KEY, relayed

ROOT = "http://127.0.0.1:4242"
ALL = relayed(frozenset({"chat", "responses", "anthropic"}))


def planned(argv, env=None, *, offline=False, forced=None, cwd: Path | None = None,
            families=ALL) -> Plan:
    client = client_for(argv, forced)
    plan = Plan(list(argv), dict(env or {}))
    client.upstreams(plan, families, cwd or Path.cwd())
    client.point(plan, families, ROOT, offline)
    return plan


def test_an_app_gets_the_variables_every_sdk_reads():
    plan = planned(["python", "app.py"], {"HOME": "/nonexistent"})
    assert plan.env["OPENAI_BASE_URL"] == f"{ROOT}/openai/v1"
    assert plan.env["ANTHROPIC_BASE_URL"] == f"{ROOT}/anthropic"
    assert plan.argv == ["python", "app.py"]
    # where each was going: the public endpoints, nobody having said otherwise
    assert plan.found == {"openai": ("https://api.openai.com/v1", None),
                          "anthropic": ("https://api.anthropic.com", None)}
    assert "OPENAI_API_BASE" not in plan.env and "ANTHROPIC_API_BASE" not in plan.env


def test_the_command_s_own_endpoint_is_the_upstream_and_litellm_s_names_are_covered():
    env = {"OPENAI_API_BASE": "https://gw.example/openai/v1",     # LangChain / litellm
           "ANTHROPIC_BASE_URL": "https://gw.example/anthropic",
           "ANTHROPIC_API_BASE": "https://litellm-only.example"}   # litellm reads this one first
    plan = planned(["python", "app.py"], env)
    assert plan.found["openai"] == ("https://gw.example/openai/v1", "OPENAI_API_BASE")
    assert plan.found["anthropic"] == ("https://gw.example/anthropic", "ANTHROPIC_BASE_URL")
    # every variable the command had now names the proxy: litellm and LangChain come too
    assert plan.env["OPENAI_API_BASE"] == plan.env["OPENAI_BASE_URL"] == f"{ROOT}/openai/v1"
    assert plan.env["ANTHROPIC_API_BASE"] == plan.env["ANTHROPIC_BASE_URL"] == f"{ROOT}/anthropic"
    anthropic = next(f for f in FAMILIES if f.name == "anthropic")
    assert anthropic.relay_target("https://gw.example/anthropic/") == "https://gw.example/anthropic/v1"


def test_placeholders_only_offline_and_only_where_no_key_is_set():
    online = planned(["python", "app.py"], {})
    assert "OPENAI_API_KEY" not in online.env and "ANTHROPIC_API_KEY" not in online.env
    offline = planned(["python", "app.py"], {"ANTHROPIC_AUTH_TOKEN": "tok-own"}, offline=True)
    assert offline.env["OPENAI_API_KEY"] == PLACEHOLDER_KEY
    assert "ANTHROPIC_API_KEY" not in offline.env          # the client has a credential
    assert offline.env["ANTHROPIC_AUTH_TOKEN"] == "tok-own"
    kept = planned(["python", "app.py"], {"OPENAI_API_KEY": "sk-own"}, offline=True)
    assert kept.env["OPENAI_API_KEY"] == "sk-own"


def test_an_http_proxy_in_the_environment_does_not_carry_requests_meant_for_agentdbg():
    plan = planned(["python", "app.py"], {"HTTPS_PROXY": "http://corp:3128", "NO_PROXY": "intra"})
    assert plan.env["NO_PROXY"].split(",") == ["intra", "127.0.0.1", "localhost", "::1"]
    assert planned(["python", "app.py"], {}).env.get("NO_PROXY") is None


def test_gemini_is_left_alone_while_the_proxy_cannot_relay_it():
    plan = planned(["gemini", "-p", "hi"], {}, offline=True)
    assert "GOOGLE_GEMINI_BASE_URL" not in plan.env and "GEMINI_API_KEY" not in plan.env
    assert any("Gemini API" in n for n in plan.notes)
    # once the proxy relays it (the codec), its variable names the proxy like the others
    later = relayed(frozenset({"chat", "gemini"}))
    ready = planned(["gemini", "-p", "hi"], {"GOOGLE_GEMINI_BASE_URL": "https://g.example"},
                    offline=True, families=later)
    assert ready.env["GOOGLE_GEMINI_BASE_URL"] == f"{ROOT}/gemini"
    assert ready.env["GEMINI_API_KEY"] == PLACEHOLDER_KEY
    assert ready.found["gemini"] == ("https://g.example", "GOOGLE_GEMINI_BASE_URL")


def test_clients_are_recognised_by_their_command_s_name_or_forced():
    assert client_for(["/usr/local/bin/claude", "-p", "x"]).name == "claude"
    assert client_for(["codex", "exec", "x"]).name == "codex"
    assert client_for(["gemini"]).name == "gemini"
    assert client_for(["python", "codex.py"]).name == "app"
    assert client_for(["./wrapper.sh"], "codex").name == "codex"


def _claude_home(tmp_path: Path, user: dict | None = None, project: dict | None = None) -> dict:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    if user is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(user))
    if project is not None:
        (tmp_path / "work" / ".claude").mkdir(parents=True)
        (tmp_path / "work" / ".claude" / "settings.json").write_text(json.dumps(project))
    (tmp_path / "work").mkdir(exist_ok=True)
    return {"HOME": str(home)}


def test_claude_code_s_settings_say_where_it_goes_and_stay_as_they_are(tmp_path):
    env = _claude_home(tmp_path, user={"env": {"ANTHROPIC_BASE_URL": "https://user.example"}},
                       project={"env": {"ANTHROPIC_BASE_URL": "https://project.example"}})
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    plan = planned(["claude", "-p", "hi"], {**env, "ANTHROPIC_BASE_URL": "https://env.example"},
                   cwd=tmp_path / "work")
    # settings' env beats the environment in Claude Code; the project's beats the user's
    url, source = plan.found["anthropic"]
    assert url == "https://project.example" and "settings.json" in source
    # its own command line carries the proxy: --settings wins over every settings file
    assert plan.argv[:3] == ["claude", "--settings",
                             json.dumps({"env": {"ANTHROPIC_BASE_URL": f"{ROOT}/anthropic"}})]
    assert plan.argv[3:] == ["-p", "hi"]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json")} == before


def test_a_client_run_through_another_command_gets_its_flags_last(tmp_path):
    plan = planned(["npx", "@anthropic-ai/claude-code", "-p", "hi"], _claude_home(tmp_path),
                   forced="claude", cwd=tmp_path / "work")
    assert plan.argv[:4] == ["npx", "@anthropic-ai/claude-code", "-p", "hi"]
    assert plan.argv[4] == "--settings" and "ANTHROPIC_BASE_URL" in plan.argv[5]


def test_claude_code_offline_sends_nothing_else_anywhere(tmp_path):
    plan = planned(["claude"], _claude_home(tmp_path), offline=True, cwd=tmp_path / "work")
    assert plan.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert plan.env["ANTHROPIC_API_KEY"] == PLACEHOLDER_KEY
    assert plan.found["anthropic"] == ("https://api.anthropic.com", None)


def _codex_home(tmp_path: Path, config: str) -> dict:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(config)
    return {"CODEX_HOME": str(home)}


def _overrides(argv: list[str]) -> dict:
    """Codex's -c overrides as the TOML they are."""
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    return tomllib.loads("\n".join(pairs))


def test_codex_s_built_in_provider_becomes_agentdbg_s_over_http_with_the_same_key(tmp_path):
    env = _codex_home(tmp_path, 'model = "gpt-5.5"\nopenai_base_url = "https://gw.example/v1"\n')
    plan = planned(["codex", "exec", "hi"], {**env, "OPENAI_API_KEY": "sk-own"})
    assert plan.found["openai"][0] == "https://gw.example/v1"
    assert plan.argv[0] == "codex" and plan.argv[-2:] == ["exec", "hi"]
    over = _overrides(plan.argv)
    assert over["model_provider"] == "agentdbg"
    assert over["model_providers"]["agentdbg"] == {
        "name": "OpenAI (through agentdbg)", "base_url": f"{ROOT}/openai/v1",
        "wire_api": "responses", "supports_websockets": False, "env_key": "OPENAI_API_KEY"}
    # signed in instead of a key in the environment: Codex's own sign-in is used
    signed_in = planned(["codex"], env)
    assert _overrides(signed_in.argv)["model_providers"]["agentdbg"]["requires_openai_auth"] is True
    assert (tmp_path / "codex-home" / "config.toml").read_text().startswith('model = "gpt-5.5"')


def test_codex_s_own_provider_keeps_its_settings_but_its_url(tmp_path):
    env = _codex_home(tmp_path, 'profile = "work"\nmodel_provider = "ignored"\n'
                                '[profiles.work]\nmodel_provider = "my-gw"\n'
                                '[model_providers.my-gw]\nname = "GW"\nbase_url = "https://gw.example/api"\n'
                                'env_key = "GW_KEY"\nwire_api = "responses"\n')
    plan = planned(["codex", "exec", "hi"], env, offline=True)
    assert plan.found["openai"][0] == "https://gw.example/api"
    assert _overrides(plan.argv) == {"model_providers": {"my-gw": {"base_url": f"{ROOT}/openai/v1"}}}
    assert plan.env["GW_KEY"] == PLACEHOLDER_KEY
    # a provider chosen on the command line wins over the profile's
    other = planned(["codex", "-c", 'model_provider="openai"', "exec", "hi"], env)
    assert other.found["openai"][0] == "https://api.openai.com/v1"


def test_a_broken_codex_config_is_said_and_left_out(tmp_path):
    plan = planned(["codex"], _codex_home(tmp_path, "model_provider = [unclosed\n"))
    assert plan.found["openai"][0] == "https://api.openai.com/v1"
    assert any("not readable as TOML" in n for n in plan.notes)


@pytest.mark.parametrize("provider", ["oss", "ollama"])
def test_codex_s_other_built_in_providers_are_said_to_bypass_agentdbg(tmp_path, provider):
    plan = planned(["codex"], _codex_home(tmp_path, f'model_provider = "{provider}"\n'))
    assert "-c" not in plan.argv
    assert any("cannot be pointed" in n for n in plan.notes)
