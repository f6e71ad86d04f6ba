"""`agentdbg run --api responses|anthropic` against `agentdbg serve`: the loop goes over the
chosen wire format with the official client, the pre-send check judges the native body about
to be sent, transcripts record the format, and replay, fork, the pytest plugin and step mode
work on them."""

import io
import json
import os
import subprocess
import sys

import pytest
from fmt_stack import QUESTION, Served
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agentdbg.toolspec import bundled_tools_path
from agentdbg.transcript import load_transcript


@pytest.fixture(scope="module")
def serve():
    s = Served()
    yield s
    s.stop()


def agentdbg(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "120", "NO_COLOR": "1"})


@pytest.mark.parametrize("api", ["responses", "anthropic", "gemini"])
def test_run_over_the_format_records_it_and_replays(serve, tmp_path, api):
    saved = tmp_path / f"{api}.jsonl"
    r = agentdbg("run", QUESTION, "--api", api, "--model", "m", "--base-url", serve.url,
                 "--save", str(saved), "--json")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)
    assert "杭州转运中心已发出" in run["answer"]
    t = load_transcript(saved)
    assert t.header.api == api and t.header.provider in ("openai-responses", "anthropic",
                                                         "gemini")
    # each assistant message keeps the native items it came from, for the next request
    assert all("wire" in m for m in t.final_messages() if m["role"] == "assistant")
    replay = agentdbg("replay", str(saved), "--json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["messages"] == run["messages"]
    check = agentdbg("check", str(saved), "--json")
    assert check.returncode == 0 and json.loads(check.stdout) == {"ok": True, "findings": []}
    fork = agentdbg("replay", str(saved), "--from", "2", "--tools",
                    str(bundled_tools_path()), "--save", str(tmp_path / "fork.jsonl"))
    assert fork.returncode == 0, fork.stderr
    assert load_transcript(tmp_path / "fork.jsonl").header.parent.path.endswith(saved.name)


def test_the_pre_send_check_judges_the_native_body(serve, tmp_path):
    """An id other providers produce (Kimi's `functions.NAME:0`) is valid Chat Completions but
    not a valid Anthropic tool_use id: over --api anthropic it is caught before sending."""
    script = tmp_path / "kimi.yaml"
    script.write_text("turns:\n  - tool_calls: [{name: query_order, id: 'functions.query_order:0',"
                      " arguments: {order_id: ORD-2026-001}}]\n  - content: 已发货\n", encoding="utf-8")
    chat = agentdbg("run", QUESTION, "--script", str(script), "--save", str(tmp_path / "c.jsonl"))
    assert chat.returncode == 0, chat.stdout + chat.stderr
    native = agentdbg("run", QUESTION, "--script", str(script), "--api", "anthropic",
                      "--save", str(tmp_path / "a.jsonl"))
    assert native.returncode == 8
    assert "tool-use-id-format" in native.stdout
    assert "String should match pattern '^[a-zA-Z0-9_-]+$'" in native.stdout


def test_unreachable_endpoint_is_one_line_naming_it(tmp_path):
    r = agentdbg("run", QUESTION, "--api", "anthropic", "--model", "m", "--base-url",
                 "http://127.0.0.1:9/v1", "--save", str(tmp_path / "x.jsonl"))
    assert r.returncode == 7 and "http://127.0.0.1:9/v1/messages: cannot connect" in r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_the_pytest_plugin_replays_transcripts_of_all_three_formats(serve, tmp_path):
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for api in ("chat", "responses", "anthropic"):
        r = agentdbg("run", QUESTION, "--api", api, "--model", "m", "--base-url", serve.url,
                     "--save", str(folder / f"{api}.jsonl"))
        assert r.returncode == 0, r.stderr
    proc = subprocess.run([sys.executable, "-m", "pytest", "--agentdbg-replay", str(folder), "-q",
                           "-p", "no:cacheprovider", "--rootdir", str(folder)],
                          capture_output=True, text=True, cwd=folder)
    assert proc.returncode == 0 and "3 passed" in proc.stdout, proc.stdout[-1500:]


@pytest.mark.parametrize("api", ["responses", "anthropic"])
def test_step_mode_over_the_format(serve, sample_tools, api):
    from agentdbg.engine.session import RunConfig, Session, StopReason
    from agentdbg.providers.factory import make_provider, precheck_for
    from agentdbg.repl.debugger import Debugger

    info = make_provider("m", serve.url, None, api=api)
    session = Session.for_question(info.provider, sample_tools, QUESTION,
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=precheck_for(api, "openai"))
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("\r" * 5)
        pipe.close()
        Debugger(session, Console(file=buf, width=110, no_color=True), input=pipe,
                 output=DummyOutput(), history=False).loop()
    out = buf.getvalue()
    assert session.stop_reason is StopReason.COMPLETED
    assert out.count("▶ next: ask the model") == 3 and "✓ answers [1]" in out
