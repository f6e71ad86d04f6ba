"""What a newcomer hit in the first hour (issue 25), each fixed where it happens."""

from __future__ import annotations

import json
import sys

from test_repl import drive, session_for


def test_a_result_edited_to_a_success_no_longer_shows_the_injected_error(sample_tools, tmp_path,
                                                                         monkeypatch):
    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      "m['content'] = json.dumps({'status': 'shipped', 'tracking_no': 'SF123456'})\n"
                      "json.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    s = session_for(sample_tools)
    _, out, _ = drive(s, "n", "inject call_o1 rate_limited", "n", "edit 2", "messages")
    assert "error: rate_limited (retryable) · injected fault" in out     # before the edit
    line = next(ln for ln in out[out.rindex("[2] tool"):].splitlines() if " ms" in ln)
    assert "[edited by you]" in line and "rate_limited" not in line and "injected" not in line
    assert json.loads(s.messages[2]["content"])["tracking_no"] == "SF123456"


def test_replaying_a_step_session_labels_your_actions_where_they_happened(sample_tools, tmp_path,
                                                                          monkeypatch):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    script = tmp_path / "ed.py"
    script.write_text("import json, sys\np = sys.argv[1]\nm = json.load(open(p))\n"
                      "m['content'] = json.dumps({'status': 'lost'})\njson.dump(m, open(p, 'w'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    from agentdbg.transcript import start_transcript

    saved = tmp_path / "lesson.jsonl"
    s = session_for(sample_tools)
    writer = start_transcript(s, saved, model="offline", provider="offline", base_url=None,
                              question=s.messages[0]["content"])
    drive(s, "n", "n", "edit 2", "drop 2", "rewind 1", "retry", "c", transcript=writer)
    writer.close()
    r = CliRunner().invoke(app, ["replay", str(saved)])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("✎ ")]
    assert lines == ["✎ you edited message [2] (recorded; re-applied here)",
                     "✎ you dropped message [2] (recorded; re-applied here)",
                     "✎ you rewound to message [1] (cut 0 message(s)) (recorded; re-applied here)",
                     "✎ you asked the model again (retry): cut 1 message(s) from [1] (recorded; "
                     "re-applied here)"]


def test_a_batch_denial_says_how_to_let_the_call_run(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    (tmp_path / "s.yaml").write_text(
        "turns:\n  - tool_calls: [{name: send_email, id: m1, arguments: {to: a@b.cn, subject: hi, "
        "body: b}}]\n  - content: done\n")
    r = CliRunner().invoke(app, ["run", "mail a@b.cn", "--script", "s.yaml"])
    assert ("send_email (m1) was not run: it needs approval (approval: always) and a batch run "
            "denies it; --approve all runs such calls, --step asks you for each") in r.stdout
    allowed = CliRunner().invoke(app, ["run", "mail a@b.cn", "--script", "s.yaml", "--approve", "all"])
    assert "was not run" not in allowed.stdout


SLOW_TOOLS = """
version: 1
tools:
  - name: slow_lookup
    description: Look a code up. Use when the user gives a code like AB-1.
    parameters:
      type: object
      properties: {code: {type: string, pattern: "^AB-\\\\d$", description: the code}}
      required: [code]
    handler: {python: "slowtools:slow_lookup"}
"""


def test_a_tool_that_takes_a_while_shows_progress_on_a_terminal_only(tmp_path, monkeypatch):
    import io

    import rich.status
    from rich.console import Console

    from agentdbg.drivers import batch
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.options import RunOptions
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.render.console import PipedConsole
    from agentdbg.toolspec import load_tools

    (tmp_path / "slowtools.py").write_text(
        "import threading\nRELEASE = threading.Event()\n\n"
        "def slow_lookup(code):\n    RELEASE.wait(0.5)\n    return {'code': code}\n")
    (tmp_path / "tools.yaml").write_text(SLOW_TOOLS)
    monkeypatch.setattr(batch, "PROGRESS_AFTER", 0.0)      # no waiting on the wall clock
    start = rich.status.Status.start

    def started(status):                                   # the spinner is up: let the tool end
        start(status)
        sys.modules["slowtools"].RELEASE.set()
    monkeypatch.setattr(rich.status.Status, "start", started)
    outputs = {}
    for kind, console in (("terminal", Console(file=io.StringIO(), force_terminal=True, width=100)),
                          ("piped", PipedConsole(file=io.StringIO(), width=100))):
        monkeypatch.delitem(sys.modules, "slowtools", raising=False)
        session = Session.for_question(OfflineModel(), load_tools(tmp_path / "tools.yaml"),
                                       "look up AB-1", RunConfig())
        batch.run_batch(session, console, RunOptions(model_desc="offline", model="offline",
                                                     provider_name="offline"))
        outputs[kind] = console.file.getvalue()
    assert "running slow_lookup (1 call(s)) … Ctrl-C cancels" in outputs["terminal"]
    assert "running slow_lookup" not in outputs["piped"]


def test_export_to_a_closed_port_says_refused_at_once(tmp_path):
    import socket
    import time

    from typer.testing import CliRunner

    from agentdbg.cli import app

    run = CliRunner().invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--save", "r.jsonl"])
    assert run.exit_code == 0
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]          # closed again when the block ends
    start = time.monotonic()
    r = CliRunner().invoke(app, ["export", "r.jsonl", "--otlp", f"http://127.0.0.1:{port}"])
    took = time.monotonic() - start
    assert r.exit_code == 2
    assert r.stderr.strip() == (f"agentdbg: error: http://127.0.0.1:{port}/v1/traces: connection "
                                f"refused: nothing listens on 127.0.0.1:{port} (is the receiver running?)")
    assert "timeout" not in r.stderr and took < 5   # was: 8 s of retries, then "timed out"


def test_offline_token_estimates_count_the_tool_definitions(sample_tools):
    from agentdbg.providers.base import ModelRequest, estimate_tokens, estimated_usage

    messages = [{"role": "user", "content": "订单 ORD-2026-001 到哪里了?"}]
    reply = {"role": "assistant", "content": "ok"}
    bare = estimated_usage(ModelRequest(messages=messages), reply)["prompt_tokens"]
    tools = sample_tools.openai_tools()
    with_tools = estimated_usage(ModelRequest(messages=messages, tools=tools), reply)["prompt_tokens"]
    assert with_tools - bare == estimate_tokens(json.dumps(tools, ensure_ascii=False)) > 500


def test_run_json_names_its_transcript_and_runs_json_lists_the_runs(tmp_path):
    from pathlib import Path

    from typer.testing import CliRunner

    from agentdbg.cli import app

    runner = CliRunner()
    doc = json.loads(runner.invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--json"]).stdout)
    saved = Path(doc["transcript"])
    assert saved.is_file() and saved.parent.name == "runs"
    r = runner.invoke(app, ["runs", "--json"])
    assert r.exit_code == 0
    listing = json.loads(r.stdout)
    (run,) = listing["runs"]
    assert run["path"] == str(saved) and run["number"] == 1 and run["stop"] == "completed"
    assert run["question"] == "订单 ORD-2026-001 到哪里了?" and run["turns"] == 3
    assert listing["folder"] == str(saved.parent) and listing["more"] == 0
    named = json.loads(runner.invoke(app, ["run", "q", "--json", "--save", "mine.jsonl"]).stdout)
    assert named["transcript"] == "mine.jsonl"


def test_a_full_runs_folder_is_not_news_on_every_run(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    runner = CliRunner()
    for _ in range(2):
        runner.invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--keep-runs", "1"])
    quiet = runner.invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--keep-runs", "1"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert len(list((tmp_path / "agentdbg-home" / "runs").glob("*.jsonl"))) == 1   # still pruned
    asked = runner.invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--keep-runs", "1", "--debug"])
    assert "removed 1 older one(s)" in asked.stderr
    assert "keeps the newest --keep-runs (default 50)" in runner.invoke(app, ["runs"]).stdout


def test_the_intercept_help_wraps_inside_its_columns_at_80():
    import io

    from rich.console import Console

    from agentdbg.server.proxy.intercept import HELP, render_help

    console = Console(file=io.StringIO(), width=80, no_color=True)
    console.print(render_help())
    lines = console.file.getvalue().rstrip("\n").split("\n")
    column = lines[0].index("send the request")
    assert all(len(line.rstrip()) <= 80 for line in lines)
    starts = [line for line in lines if line[:column].strip()]
    assert [line[:column].strip() for line in starts] == [usage for usage, _ in HELP]
    assert all(line[column] != " " for line in lines)   # every wrapped line starts in its column


def test_profile_help_is_short_and_check_profiles_lists_them():
    from typer.testing import CliRunner

    from agentdbg.checker.profiles import PROFILES
    from agentdbg.cli import app

    runner = CliRunner()
    help_text = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "80"}).stdout
    lines = help_text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("-p, --profile"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("-"))
    assert end - start <= 4, "\n".join(lines[start:end])
    assert "check --profiles" in " ".join(" ".join(lines[start:end]).split())
    listed = runner.invoke(app, ["check", "--profiles"], env={"COLUMNS": "80"})
    assert listed.exit_code == 0
    names = [ln.split()[0] for ln in listed.stdout.splitlines()[1:] if ln and not ln.startswith(" ")]
    assert names == list(PROFILES)


def test_servers_do_not_print_a_traceback_when_a_client_goes_away(capsys):
    from support import QuietServer

    from agentdbg.providers.offline import OfflineModel
    from agentdbg.testing.server import ModelServer

    for server in (ModelServer(OfflineModel()), QuietServer(("127.0.0.1", 0), None)):
        try:
            for gone in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
                try:
                    raise gone
                except ConnectionError:
                    server.handle_error(None, ("127.0.0.1", 1))
            assert capsys.readouterr().err == ""
            try:
                raise ValueError("a real bug")
            except ValueError:
                server.handle_error(None, ("127.0.0.1", 1))
            assert "ValueError: a real bug" in capsys.readouterr().err   # real errors still show
        finally:
            server.server_close()


def test_a_closed_pipe_ends_a_command_quietly(tmp_path):
    import subprocess

    done = subprocess.run(["bash", "-c", f"{sys.executable} -m agentdbg completion bash | head -1"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("_agentdbg_completion()") and done.stderr == ""


def test_shell_completion_completes_commands_options_and_profiles():
    import os
    import subprocess

    script = subprocess.run([sys.executable, "-m", "agentdbg", "completion", "bash"], capture_output=True,
                            text=True, timeout=60)
    assert script.returncode == 0 and "_AGENTDBG_COMPLETE=complete_bash" in script.stdout

    def complete(line: str) -> list[str]:
        words = line.split(" ")
        env = {**os.environ, "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1),
               "_AGENTDBG_COMPLETE": "complete_bash"}
        return subprocess.run([sys.executable, "-c", "from agentdbg.cli import main; main()"],
                              env=env, capture_output=True, text=True, timeout=60).stdout.split()

    assert complete("agentdbg re") == ["replay", "report"]
    assert complete("agentdbg check --profile deepseek-r") == ["deepseek-reasoner-legacy"]
