"""Transcripts and replay: what is recorded replays to the same messages and stop reason."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from support import ROOT, scripted
from typer.testing import CliRunner

from agentdbg.checker import check_model_request
from agentdbg.cli import app
from agentdbg.engine.faults import Fault
from agentdbg.engine.replaying import Replay, replay_session
from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.errors import InputError
from agentdbg.providers.offline import OfflineModel
from agentdbg.transcript import load_transcript, start_transcript

SAMPLE_TOOLS = ROOT / "tools.yaml"
runner = CliRunner()
ORDER_Q = "订单 ORD-2026-001 到哪里了?"


def record(tmp_path, session, drive=None, name="t.jsonl"):
    """Run ``session`` with a transcript attached (``drive`` may poke it between steps)."""
    path = tmp_path / name
    writer = start_transcript(session, path, model="m", provider="p", base_url=None,
                              question="q")
    if drive is None:
        list(session.run())
    else:
        drive(session)
    if not session.done:
        session.cancel()
    writer.close()
    return path


def replayed(path, precheck=check_model_request, **overrides):
    session, model = replay_session(path, precheck=precheck, **overrides)
    for _ in Replay(session, model).steps():
        pass
    return session, model


def assert_round_trip(original, path):
    # with the pre-send check (step mode), and without it (batch replay: blocked requests
    # come from the recording's own events)
    for precheck in (check_model_request, None):
        copy, model = replayed(path, precheck=precheck)
        assert model.diverged is None
        assert copy.messages == original.messages
        assert copy.stop_reason is original.stop_reason
        assert copy.stop_detail == original.stop_detail
        assert copy.marks == original.marks  # edited/injected marks come back too
    return copy


def new(tools, model, question=ORDER_Q, **config):
    return Session.for_question(model, tools, question, RunConfig(**config),
                                precheck=check_model_request)


LOOP = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "北京"}}]}] * 4


@pytest.mark.parametrize("reason,model,config", [
    ("completed", lambda: OfflineModel(), {}),
    ("max_turns", lambda: scripted(*LOOP), {"max_turns": 2, "repeat_limit": 9}),
    ("max_tool_calls", lambda: scripted(*LOOP), {"max_tool_calls": 2, "repeat_limit": 9}),
    ("repeated_call", lambda: scripted(*LOOP), {}),
    ("model_error", lambda: scripted(*LOOP[:1]), {}),
    ("invalid_request", lambda: scripted(
        {"tool_calls": [{"name": "get.weather", "arguments": {"city": "北京"}}]}, {"content": "x"}), {}),
])
def test_round_trip_for_each_stop_reason(tmp_path, sample_tools, reason, model, config):
    s = new(sample_tools, model(), **config)
    path = record(tmp_path, s)
    assert s.stop_reason.value == reason
    assert_round_trip(s, path)


def test_round_trip_timeout_and_cancelled(tmp_path, sample_tools):
    now = [0.0]
    s = Session.for_question(OfflineModel(), sample_tools, ORDER_Q, RunConfig(timeout=5),
                             clock=lambda: now[0])

    def drive(session):
        session.step(), session.step()
        now[0] = 10.0
        session.step()
    path = record(tmp_path, s, drive)
    assert s.stop_reason is StopReason.TIMEOUT
    assert_round_trip(s, path)

    s = new(sample_tools, OfflineModel())
    path = record(tmp_path, s, lambda session: (session.step(), session.cancel()), "c.jsonl")
    assert s.stop_reason is StopReason.CANCELLED and len(s.messages) == 2  # cancelled before tools
    assert_round_trip(s, path)


def test_round_trip_parallel_calls(tmp_path, sample_tools):
    s = new(sample_tools, OfflineModel(), "北京和上海今天哪个更热?")
    path = record(tmp_path, s)
    copy = assert_round_trip(s, path)
    assert [m.get("tool_call_id") for m in copy.messages if m["role"] == "tool"] == [
        "call_o1", "call_o2"]


def test_round_trip_injected_faults_and_edits(tmp_path, sample_tools):
    s = new(sample_tools, OfflineModel())

    def drive(session):
        session.fail("query_logistics", Fault("timeout"))
        session.step(), session.step(), session.step()          # query_order done, logistics asked
        session.inject("query_logistics", Fault("not_found"))  # pending injection
        session.step()
        session.inject("2", Fault("custom", '{"status": "shipped", "tracking_no": "SF123456"}'))
        session.edit(0, {"role": "user", "content": "订单 ORD-2026-001 现在在哪?"})
        list(session.run())
        session.drop(len(session.messages) - 1)                # drop the answer after the end
        session.rewind(2)
        list(session.run())
    path = record(tmp_path, s, drive)
    assert [a["action"] for a in s.actions] == ["fail", "inject", "inject", "edit", "drop", "rewind"]
    assert_round_trip(s, path)


def test_divergence_names_the_first_differing_path(tmp_path, sample_tools):
    s = new(sample_tools, OfflineModel())
    path = record(tmp_path, s)
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):  # tamper with the first recorded tool result
        event = json.loads(line)
        if event["type"] == "tool":
            event["content"] = '{"status": "lost"}'
            lines[i] = json.dumps(event, ensure_ascii=False)
            break
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, model = replayed(path)
    assert model.diverged.startswith("first difference at messages[2].content: recorded "
                                     '"{\\"status\\": \\"shipped\\"')
    assert 'now "{\\"status\\": \\"lost\\"}"' in model.diverged
    r = runner.invoke(app, ["replay", str(path)])
    assert r.exit_code == 1 and "replay diverged" in r.stderr and "messages[2].content" in r.stderr


def test_truncated_last_line_loads_with_a_warning(tmp_path, sample_tools):
    s = new(sample_tools, OfflineModel())
    path = record(tmp_path, s)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # cut the stop event mid-line
    t = load_transcript(path)
    assert t.warnings and "last line is truncated" in t.warnings[0]
    assert t.stop is None and t.events[-1].event_type == "response"
    r = runner.invoke(app, ["replay", str(path)])
    # the final answer was recorded before the cut: the replay still completes
    assert "last line is truncated" in r.stderr and r.exit_code == 0
    assert "stop: completed" in r.stdout


@pytest.mark.parametrize("content,needle", [
    ('{"type": "header", "format": "agentdbg-transcript", "version": 9}\n', "unsupported transcript version 9"),
    ('{"type": "header", "format": "agentdbg-transcript", "version": 1}\n{oops}\n{"type": "stop"}\n', ":2:2: invalid JSON"),
    ('{"type": "header", "format": "agentdbg-transcript", "version": 1}\n[1]\n', ":2: each line must be a JSON object"),
])
def test_bad_transcripts_are_one_line_errors(tmp_path, content, needle):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(InputError, match=needle.replace("[", r"\[")):
        load_transcript(p)
    r = runner.invoke(app, ["replay", str(p)])
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.output


def test_replay_json_matches_run_json(tmp_path):
    path = tmp_path / "r.jsonl"
    first = json.loads(runner.invoke(app, ["run", "北京和上海今天哪个更热?", "--json",
                                           "--save", str(path)]).stdout)
    again = json.loads(runner.invoke(app, ["replay", str(path), "--json"]).stdout)
    assert again["messages"] == first["messages"] and again["stop_reason"] == "completed"
    assert again["usage"] == first["usage"]


def test_check_reads_transcripts(tmp_path, sample_tools):
    s = new(sample_tools, scripted({"tool_calls": [{"name": "get_weather", "id": "x",
                                                   "arguments": {"city": "北京"}}]}, {"content": "ok"}))
    path = record(tmp_path, s)
    s.messages.insert(1, {"role": "tool", "tool_call_id": "ghost", "content": "{}"})
    assert json.loads(runner.invoke(app, ["check", str(path), "--json"]).stdout)["ok"] is True
    r = runner.invoke(app, ["check", "-", "--json"], input=path.read_text(encoding="utf-8"))
    assert r.exit_code == 0


# -- live tools, forks, starting states ---------------------------------------------

TOOLS_V1 = """
version: 1
tools:
  - name: price
    description: Price of an item. Use when asked for a price.
    parameters: {type: object, properties: {sku: {type: string, pattern: "^SKU-[0-9]+$"}}, required: [sku]}
    handler: {fixture: {sku: SKU-1, price: 10}}
  - name: buy
    description: Buy an item. Use when asked to buy.
    parameters: {type: object, properties: {sku: {type: string}}, required: [sku]}
    side_effects: true
    approval: always
    handler: {fixture: {bought: true}}
"""


def test_live_tools_compare_and_strict(tmp_path):
    (tmp_path / "tools.yaml").write_text(TOOLS_V1, encoding="utf-8")
    path = tmp_path / "p.jsonl"
    assert runner.invoke(app, ["run", "price of SKU-1?", "--save", str(path)]).exit_code == 0
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", "tools.yaml", "--strict"])
    assert r.exit_code == 0 and "1 same, 0 different" in r.stdout
    (tmp_path / "tools.yaml").write_text(TOOLS_V1.replace("price: 10", "price: 12"), encoding="utf-8")
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", "tools.yaml"])
    assert r.exit_code == 0 and "0 same, 1 different" in r.stdout and '"price": 12' in r.stdout
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", "tools.yaml", "--strict"])
    assert r.exit_code == 1


def test_live_tools_never_rerun_side_effects_without_approval(tmp_path):
    (tmp_path / "tools.yaml").write_text(TOOLS_V1, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(
        "turns:\n  - tool_calls: [{name: buy, arguments: {sku: SKU-1}}]\n  - content: ok\n")
    path = tmp_path / "b.jsonl"
    runner.invoke(app, ["run", "buy", "--script", "s.yaml", "--approve", "all", "--save", str(path)])
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", "tools.yaml"])
    assert "side effects: not re-run without --approve all" in r.stdout
    r = runner.invoke(app, ["replay", str(path), "--live-tools", "--tools", "tools.yaml", "--approve", "all"])
    assert "1 same" in r.stdout


def test_fork_keeps_a_prefix_and_names_its_parent(tmp_path):
    path = tmp_path / "parent.jsonl"
    runner.invoke(app, ["run", ORDER_Q, "--save", str(path)])
    child = tmp_path / "child.jsonl"
    r = runner.invoke(app, ["replay", str(path), "--from", "2", "--save", str(child), "--json"])
    assert r.exit_code == 2 and "--from runs tools: name them with --tools PATH" in r.stderr
    r = runner.invoke(app, ["replay", str(path), "--from", "2", "--save", str(child), "--json",
                            "--tools", str(SAMPLE_TOOLS)])
    assert r.exit_code == 0, r.output
    t = load_transcript(child)
    assert (t.header.parent.path, t.header.parent.from_index) == (str(path), 2)
    assert t.final_messages()[:3] == load_transcript(path).final_messages()[:3]
    assert t.stop.reason == "completed"
    r = runner.invoke(app, ["replay", str(path), "--from", "99", "--tools", str(SAMPLE_TOOLS)])
    assert r.exit_code == 2 and "messages 0..5" in r.stderr


def test_plain_messages_array_needs_step(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"role": "user", "content": ORDER_Q}]), encoding="utf-8")
    r = runner.invoke(app, ["replay", str(p)])
    assert r.exit_code == 2 and "replay FILE --step" in r.stderr


# -- crashes and secrets -------------------------------------------------------------

SLOW = """
version: 1
tools:
  - name: slow
    description: Sleeps for a long time. Use when asked to wait.
    timeout: 60
    handler: {command: [python, -c, "import time; time.sleep(60)"]}
"""


def test_sigkill_during_a_tool_keeps_every_completed_event(tmp_path):
    (tmp_path / "tools.yaml").write_text(SLOW, encoding="utf-8")
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "run", "please wait (slow)",
                             "--tools", "tools.yaml", "--save", str(path)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:  # wait until the model's reply is on disk: the tool is running
        if path.exists() and '"type": "response"' in path.read_text(encoding="utf-8"):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    t = load_transcript(path)
    assert [e.event_type for e in t.events] == ["request", "response"]
    assert t.events[1].message["tool_calls"][0]["function"]["name"] == "slow"
    r = runner.invoke(app, ["replay", str(path), "--json"])
    assert json.loads(r.stdout)["stop_reason"] == "cancelled"


def test_no_api_key_in_any_transcript(tmp_path, model_server):
    key = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"
    other = "sk-live-ZZZZZZZZZZZZZZZZZZZZZZZZ"
    path = tmp_path / "k.jsonl"
    r = runner.invoke(app, ["run", f"订单 ORD-2026-001 到哪里了? my key is {other}",
                            "--model", "m", "--base-url", model_server.base_url,
                            "--api-key", key, "--save", str(path), "--redact", "ORD-2026-0\\d\\d"])
    assert r.exit_code == 0, r.output
    text = path.read_text(encoding="utf-8")
    assert key not in text and other not in text and "[REDACTED]" in text
    assert "ORD-2026-001" not in text  # the user's own --redact pattern
    assert key not in r.output
    runner.invoke(app, ["run", "hello", "--api-key", key])  # the runs folder, too
    for saved in (tmp_path / "agentdbg-home" / "runs").glob("*.jsonl"):
        assert key not in saved.read_text(encoding="utf-8")
