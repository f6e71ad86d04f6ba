import signal
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from support import ROOT

# A suite started in the background of a script (`cmd &`, nohup) inherits SIGINT ignored, and so
# would every program the tests start: the Ctrl-C tests would then test nothing but that. The
# suite's own handler is reset to the default in each program it starts (exec resets caught
# signals; ignored ones stay ignored).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No test touches the real home, a real key, or a real endpoint."""
    monkeypatch.setenv("AGENTDBG_HOME", str(tmp_path / "agentdbg-home"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                "AGENTDBG_MODEL", "AGENTDBG_TOOLS", "AGENTDBG_LANG",
                # the terminal the suite runs in is not the tests' business (CI often forces colour)
                "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE", "COLORTERM",
                "LINES", "JUPYTER_COLUMNS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(tmp_path)
    yield
    from agentdbg import i18n

    i18n.use("en")   # the language is the process's: a test that chose one leaves English behind


@pytest.fixture
def sample_tools():
    from agentdbg.toolspec import load_tools

    return load_tools(ROOT / "tools.yaml")


@pytest.fixture
def write_file(tmp_path):
    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path
    return write


@pytest.fixture
def tools_from(write_file):
    """Write a tools.yaml from YAML text and load it."""
    from agentdbg.toolspec import load_tools

    def load(text: str, name: str = "tools.yaml"):
        return load_tools(write_file(name, text))
    return load


@pytest.fixture
def model_server():
    """A real OpenAI-compatible HTTP server on 127.0.0.1 serving the offline model."""
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.testing.server import ModelServer

    server = ModelServer(OfflineModel()).start()
    yield server
    server.stop()


pytest_plugins = ["pytester", "provision"]

#: what is slow as a whole (a file, or a folder ending in /): real servers, proxies and MCP
#: servers in their own processes, pseudo-terminal sessions, property-based fuzzing, the report's
#: shared recordings. ``-m "not slow"`` leaves them out (the fast subset); single slow tests
#: elsewhere carry ``@pytest.mark.slow`` (and tests/frameworks marks its own).
SLOW = (
    "tests/mcp/",
    "tests/report/",
    "tests/formats/test_run_api.py",
    "tests/formats/test_proxy_formats.py",
    "tests/formats/test_serve_formats.py",
    "tests/hardening/test_endpoints.py",
    "tests/hardening/test_escapes.py",
    "tests/hardening/test_fuzz.py",
    "tests/hardening/test_interrupts.py",
    "tests/hardening/test_proxy_safety.py",
    "tests/hardening/test_replay_untrusted.py",
    "tests/hardening/test_runs_files.py",
    "tests/hardening/test_untrusted_schemas.py",
    "tests/wire/test_wire_sdk.py",
    "tests/test_judge_chains.py",
    "tests/test_offline_mcp.py",
    "tests/test_proxy.py",
    "tests/test_proxy_intercept.py",
    "tests/test_step_pty.py",
    # this round's: child processes, npm clients, browsers, real signals and pseudo-terminals
    "tests/oneclick/",
    "tests/clients/",
    "tests/frameworks/",
    "tests/transcripts_v1/test_v1_recordings.py",
    "tests/hardening/test_proxy_load.py",
    "tests/hardening/test_proxy_browser.py",
    "tests/hardening/test_signals.py",
    "tests/hardening/test_mcp_junk.py",
    "tests/hardening/test_command_tools.py",
    "tests/traces/test_collect.py",
    "tests/traces/test_real_clients.py",
    "tests/formats/test_gemini.py",
    "tests/formats/test_json_answers.py",
    "tests/test_teach_pty.py",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.split("::")[0].startswith(SLOW):
            item.add_marker(pytest.mark.slow)
