"""Secrets stay secret (issue 11): credentials in a --base-url, and the files written when the
transcript cannot be (the batch rescue file, step mode's fallback 'save')."""

import io
import json
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
KEY = "sk-hardening-SECRET-0123456789abcdef"
WORDS = ("pa55-SECRET-word", "qs-SECRET-token", "bob-SECRET-user", KEY, "customer-SECRET-42")


def secret_url(url: str, query: bool = False) -> str:
    parts = urlsplit(url)
    return (f"http://bob-SECRET-user:pa55-SECRET-word@{parts.netloc}{parts.path}"
            + ("?api_key=qs-SECRET-token&api-version=2024-06-01" if query else ""))


def assert_no_secret(*texts):
    for text in texts:
        for word in WORDS:
            assert word not in text, f"{word!r} leaked: {text[:300]!r}"


def test_base_url_credentials_are_never_shown_or_recorded(tmp_path, model_server):
    url = secret_url(model_server.base_url)
    r = runner.invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--model", "m", "--base-url", url,
                            "--api-key", KEY, "--save", "t.jsonl"])
    assert r.exit_code == 0, r.output
    assert "127.0.0.1" in r.stdout  # the endpoint is named, without its credentials
    j = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", url, "--api-key", KEY,
                            "--json"])
    assert_no_secret(r.stdout, r.stderr, j.stdout, j.stderr,
                     (tmp_path / "t.jsonl").read_text(encoding="utf-8"))
    replayed = runner.invoke(app, ["replay", "t.jsonl"])
    assert_no_secret(replayed.stdout, replayed.stderr)


def test_an_unreachable_endpoint_is_named_without_its_credentials(tmp_path):
    url = secret_url("http://127.0.0.1:9/v1", query=True)  # nothing listens on port 9
    r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", url, "--api-key", KEY,
                            "--save", "t.jsonl"])
    assert r.exit_code == 7 and "cannot connect" in r.output
    assert_no_secret(r.stdout, r.stderr, (tmp_path / "t.jsonl").read_text(encoding="utf-8"))


def test_credentials_a_server_echoes_in_its_error_are_not_shown(tmp_path, model_server):
    # a query string in --base-url is not where the client puts it: the server answers 404
    # and names the path it got, query and all
    url = secret_url(model_server.base_url, query=True)
    r = runner.invoke(app, ["run", "q", "--model", "m", "--base-url", url, "--api-key", KEY,
                            "--save", "t.jsonl"])
    assert r.exit_code == 7 and "404" in r.output
    assert_no_secret(r.stdout, r.stderr, (tmp_path / "t.jsonl").read_text(encoding="utf-8"))


def test_the_rescue_file_is_redacted_like_the_transcript(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    question = f"my key is {KEY} and my id is customer-SECRET-42"
    r = runner.invoke(app, ["run", question, "--save", "/dev/full", "--redact", r"customer-\S+"])
    assert "could not write the transcript" in r.stderr
    (rescue,) = tmp_path.glob("agentdbg-rescue-*.json")
    text = rescue.read_text(encoding="utf-8")
    assert "[REDACTED]" in text
    assert_no_secret(text, r.stderr)


def test_step_modes_fallback_save_is_redacted_like_the_transcript(tmp_path, model_server):
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.options import RunOptions
    from agentdbg.providers.factory import make_provider
    from agentdbg.repl.debugger import Debugger
    from agentdbg.toolspec import bundled_tools_path, load_tools
    from agentdbg.transcript import start_transcript

    url = secret_url(model_server.base_url)
    info = make_provider("m", url, KEY)
    question = f"订单 ORD-2026-001 到哪里了? key {KEY}, id customer-SECRET-42"
    session = Session.for_question(info.provider, load_tools(bundled_tools_path()), question,
                                   RunConfig(approve="ask", stop_on_invalid=False),
                                   precheck=check_model_request)
    options = RunOptions(model_desc=info.description, model="m", provider_name="openai",
                         base_url=url, redact=[r"customer-\S+"], secrets=[KEY])
    writer = start_transcript(session, Path("/dev/full"), model="m", provider="openai",
                              base_url=url, question=question, redact=options.redact,
                              secrets=options.secrets)  # a full disk: every write fails
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("n\rn\rsave saved.json\rquit\r")
        pipe.close()
        Debugger(session, Console(file=buf, width=120, no_color=True), options=options,
                 transcript=writer, input=pipe, output=DummyOutput(), history=False).loop()
    writer.close()  # releases its lock on /dev/full for the next test
    assert writer.error is not None
    text = (tmp_path / "saved.json").read_text(encoding="utf-8")
    assert json.loads(text)["messages"][0]["content"].startswith("订单")
    assert "[REDACTED]" in text
    assert_no_secret(text)
    assert "pa55-SECRET-word" not in buf.getvalue()  # the screen shows the question as typed
