"""`agentdbg proxy [OPTIONS] -- CMD`: the example apps run through it as real processes, with no
key and no network (every request for elsewhere goes to a dead port), and print exactly what
they print without agentdbg; agentdbg's lines go to its log, its summary to stderr; the
command's status is agentdbg's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentdbg.transcript import load_transcript

from .helpers import EXAMPLES, QUESTION, Serve, agentdbg, clean_env, summary_paths

APPS = {"agent_app.py": "chat", "anthropic_app.py": "anthropic", "responses_app.py": "responses",
        "gemini_app.py": "gemini"}


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    """`agentdbg serve --offline`, for running the apps without agentdbg in between."""
    s = Serve(tmp_path_factory.mktemp("serve") / "serve.log", "--offline")
    yield s
    s.stop()


def direct(app: str, serve: Serve) -> subprocess.CompletedProcess:
    env = clean_env(OPENAI_BASE_URL=serve.url, OPENAI_API_KEY="unused",
                    ANTHROPIC_BASE_URL=serve.root, ANTHROPIC_API_KEY="unused",
                    GOOGLE_GEMINI_BASE_URL=serve.root, GEMINI_API_KEY="unused")
    return subprocess.run([sys.executable, str(EXAMPLES / app), QUESTION], capture_output=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("app", list(APPS))
def test_an_app_runs_offline_with_no_key_and_prints_only_what_it_prints(tmp_path, serve, app):
    alone = direct(app, serve)
    assert alone.returncode == 0, alone.stderr.decode()
    saved = tmp_path / "saved"
    run = agentdbg("proxy", "--offline", "--save", str(saved), "--",
                   sys.executable, str(EXAMPLES / app), QUESTION)
    err = run.stderr.decode()
    assert run.returncode == 0, err
    assert run.stdout == alone.stdout and "杭州转运中心已发出".encode() in run.stdout
    assert run.stderr.startswith(b"agentdbg proxy: python")   # the app wrote nothing there
    assert "  3 requests in 1 conversation\n" in err and "  findings: none\n" in err
    paths = summary_paths(err)
    [transcript], [report], [log] = paths["transcripts"], paths["report"], paths["log"]
    t = load_transcript(transcript)
    assert t.header.api == APPS[app] and t.stop is not None and t.stop.reason == "completed"
    assert sum(e.event_type == "request" for e in t.events) == 3
    assert "杭州转运中心已发出" in report.read_text(encoding="utf-8")
    # agentdbg's own lines (every request as the proxy saw it) are in the log, not on screen
    logged = log.read_text(encoding="utf-8")
    assert "request 3 · conversation 1" in logged and "request 3" not in err
    assert "unused" not in logged


def test_the_command_s_status_is_agentdbg_s_and_its_findings_are_summed_up(tmp_path):
    run = agentdbg("proxy", "--offline", "--save", str(tmp_path), "--", sys.executable,
                   str(EXAMPLES / "agent_app.py"), QUESTION, "--forget-assistant")
    err = run.stderr.decode()
    # serve answers the broken request as the real API would: the app fails with that 400
    assert run.returncode == 1 and "must be a response to a preceeding message" in err
    assert "python exited with status 1" in err
    assert "findings: 1 error, 0 warnings\n    ✗ orphan-tool-message ×1\n" in err
    assert "conversation 1: 2 requests ✗ 1" in err


def test_a_last_request_sent_with_its_calls_unanswered_is_counted(tmp_path):
    # the app appends the model's calls but never their results: the request it then sends
    # (the last one, which the API refuses) ends on calls no tool message answers
    run = agentdbg("proxy", "--offline", "--save", str(tmp_path), "--", sys.executable,
                   str(EXAMPLES / "agent_app.py"), QUESTION, "--drop-results")
    err = run.stderr.decode()
    assert run.returncode == 1 and "did not have response messages: call_o1" in err
    assert "findings: 1 error, 0 warnings\n    ✗ missing-tool-response ×1\n" in err, err[-1500:]
    assert "conversation 1: 2 requests ✗ 1" in err


def test_a_script_answers_and_the_report_holds_the_request_diff(tmp_path):
    script = tmp_path / "turns.yaml"
    script.write_text("turns:\n"
                      "  - tool_calls: [{name: query_order, arguments: {order_id: ORD-2026-001}, id: c1}]\n"
                      "  - content: 订单已发货。\n", encoding="utf-8")
    run = agentdbg("proxy", "--script", str(script), "--save", str(tmp_path / "s"), "--",
                   sys.executable, str(EXAMPLES / "agent_app.py"), QUESTION)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode() == "订单已发货。\n"
    [report] = summary_paths(run.stderr.decode())["report"]
    page = report.read_text(encoding="utf-8")
    assert "since request 1:" in page and "+ [2] tool" in page
    assert "<script" not in page       # the run's report is a page without scripts


def test_the_upstream_comes_from_the_command_s_environment_and_upstream_overrides_it(tmp_path, serve):
    env = clean_env(OPENAI_BASE_URL=serve.url, OPENAI_API_KEY="sk-own-key-for-this-test")
    run = agentdbg("proxy", "--save", str(tmp_path / "a"), "--", sys.executable,
                   str(EXAMPLES / "agent_app.py"), QUESTION, env=env)
    err = run.stderr.decode()
    assert run.returncode == 0, err
    [transcript] = summary_paths(err)["transcripts"]
    assert load_transcript(transcript).header.base_url == serve.url
    [log] = summary_paths(err)["log"]
    assert f"openai: relayed to {serve.url} (from OPENAI_BASE_URL)" in log.read_text()
    assert "sk-own-key-for-this-test" not in log.read_text() + transcript.read_text()
    # a key the command was given on its command line is not logged either
    run = agentdbg("proxy", "--save", str(tmp_path / "c"), "--", sys.executable, "-c", "pass",
                   "--key", "sk-own-key-for-this-test", env=env)
    [log] = summary_paths(run.stderr.decode())["log"]
    assert "--key [REDACTED]" in log.read_text()
    # --upstream wins over a dead endpoint in the environment
    dead = clean_env(OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="x")
    run = agentdbg("proxy", "--upstream", serve.url, "--save", str(tmp_path / "b"), "--",
                   sys.executable, str(EXAMPLES / "agent_app.py"), QUESTION, env=dead)
    assert run.returncode == 0, run.stderr.decode()


def test_no_request_says_so_and_an_unknown_command_is_127(tmp_path):
    run = agentdbg("proxy", "--offline", "--save", str(tmp_path), "--", sys.executable, "-c",
                   "import sys; print('hello'); sys.exit(4)")
    err = run.stderr.decode()
    assert run.returncode == 4 and run.stdout == b"hello\n"
    assert "no request reached the proxy" in err and "report:" not in err
    missing = agentdbg("proxy", "--offline", "--", "no-such-command-agentdbg-test")
    assert missing.returncode == 127
    assert missing.stderr.decode() == "agentdbg: error: no-such-command-agentdbg-test: command not found\n"


@pytest.mark.parametrize("args, said", [
    ([], "say what is behind the proxy"),
    (["--offline", "--upstream", "http://x"], "choose one of --upstream, --offline, --script"),
    (["--offline", "--intercept", "--", "true"], "--intercept needs the terminal"),
    (["--offline", "--client", "codex"], "--client names the kind of CMD"),
])
def test_options_that_do_not_go_together_are_one_line(args, said):
    run = agentdbg("proxy", *args)
    assert run.returncode == 2
    [line] = run.stderr.decode().splitlines()
    assert line.startswith("agentdbg: error: ") and said in line


def test_the_transcripts_of_one_run_share_its_name(tmp_path):
    """Two apps at once under one proxy: two conversations, one run name, one report."""
    code = ("import subprocess, sys; apps = [subprocess.Popen([sys.executable, a, sys.argv[1]]) "
            "for a in sys.argv[2:]]; sys.exit(max(p.wait() for p in apps))")
    run = agentdbg("proxy", "--offline", "--save", str(tmp_path), "--", sys.executable, "-c", code,
                   QUESTION, str(EXAMPLES / "agent_app.py"), str(EXAMPLES / "responses_app.py"))
    err = run.stderr.decode()
    assert run.returncode == 0, err
    paths = summary_paths(err)
    assert len(paths["transcripts"]) == 2 and "6 requests in 2 conversations" in err
    label = paths["report"][0].name[:-len("-report.html")]
    assert all(p.name.startswith(label + "-conversation-") for p in paths["transcripts"])
    apis = sorted(json.loads(p.read_text().splitlines()[0])["api"] for p in paths["transcripts"])
    assert apis == ["chat", "responses"]
