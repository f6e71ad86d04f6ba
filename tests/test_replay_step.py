"""replay --step (stale recordings, 'play', 'live'), starting states, and the pytest plugin."""

import io
import json

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from support import ROOT
from typer.testing import CliRunner

from agentdbg.checker import check_model_request
from agentdbg.cli import app
from agentdbg.engine.replaying import Replay, replay_session
from agentdbg.engine.session import StopReason
from agentdbg.repl.debugger import Debugger
from agentdbg.testing import ReplayMismatch, assert_replays

runner = CliRunner()
ORDER_Q = "订单 ORD-2026-001 到哪里了?"


def recorded(tmp_path, question=ORDER_Q, name="rec.jsonl"):
    path = tmp_path / name
    assert runner.invoke(app, ["run", question, "--save", str(path)]).exit_code == 0
    return path


def step_replay(path, *lines, go_live=None):
    session, model = replay_session(path, precheck=check_model_request)
    session.config.stop_on_invalid = False
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in lines))
        pipe.close()
        Debugger(session, Console(file=buf, width=120, no_color=True), input=pipe,
                 output=DummyOutput(), history=False, replay=Replay(session, model),
                 go_live=go_live).loop()
    return session, model, buf.getvalue()


def test_step_through_a_recording(tmp_path):
    session, model, out = step_replay(recorded(tmp_path), "c")
    assert session.stop_reason is StopReason.COMPLETED and model.turns_played == 3
    assert "replayed turn 1" in out and "杭州转运中心已发出" in out


def test_stepping_a_recording_shows_the_recorded_times(tmp_path):
    """A replay takes no time of its own: 'usage' shows what the recording measured."""
    path = recorded(tmp_path)
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for e in events:
        if e["type"] == "response":
            e["latency_ms"] = 2000.25 + e["turn"]
        if e["type"] == "tool":
            e["duration_ms"] = 345.5
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    session, _, out = step_replay(path, "n", "n", "usage", "c")
    assert "turn 1: " in out and "model 2001.2 ms; tools 345.5 ms" in out
    assert [t.latency_ms for t in session.turns] == [2001.25, 2002.25, 2003.25]
    assert [t.tool_ms for t in session.turns] == [345.5, 345.5, 0.0]


def test_an_edit_makes_the_recording_stale_then_play_knowingly(tmp_path, monkeypatch, sample_tools):
    monkeypatch.delenv("EDITOR", raising=False)
    session, _, out = step_replay(recorded(tmp_path), "n", "n", 'inject 2 {"status": "lost"}',
                                      "n", "play", "c")
    out = " ".join(out.split())  # as read, whatever the wrapping
    assert "the recording is stale from here" in out
    assert 'first difference at messages[2].content: recorded "{\\"status\\": \\"shipped\\"' in out
    assert "'live' continues with a live model; 'play' keeps playing" in out
    assert "playing the recording knowingly" in out
    assert session.stop_reason is StopReason.COMPLETED
    assert session.messages[2]["content"] == '{"status": "lost"}'


def test_stale_then_live_continues_with_the_offline_model(tmp_path, sample_tools):
    from agentdbg.options import GoLive
    from agentdbg.providers.offline import OfflineModel

    live = GoLive(OfflineModel, tools=lambda: sample_tools, tools_path=sample_tools.path)
    session, model, out = step_replay(recorded(tmp_path), "n", "n", 'inject 2 {"status": "lost"}',
                                      "n", "live", "c", go_live=live)
    assert "live from here with the offline model" in out
    assert session.stop_reason is StopReason.COMPLETED
    assert "的状态是 lost" in session.answer()  # the live model read the changed result
    assert model.turns_played == 1


def test_plain_messages_array_is_a_starting_state(tmp_path):
    from agentdbg.drivers.replay import ReplayArgs, _live_session, initial_state

    start = [{"role": "user", "content": ORDER_Q},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "mine_1", "type": "function",
                  "function": {"name": "query_order", "arguments": '{"order_id": "ORD-2026-001"}'}}]}]
    p = tmp_path / "start.json"
    p.write_text(json.dumps(start, ensure_ascii=False), encoding="utf-8")
    tools = str(ROOT / "tools.yaml")
    session, _ = _live_session(ReplayArgs(file=str(p), step=True, tools=tools),
                               initial_state(str(p)))
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("c\r")
        pipe.close()
        Debugger(session, Console(file=buf, width=120, no_color=True), input=pipe,
                 output=DummyOutput(), history=False).loop()
    out = buf.getvalue()
    assert "▶ next: execute 1 call(s): mine_1 query_order" in out  # the pending call runs first
    assert session.stop_reason is StopReason.COMPLETED and "杭州转运中心已发出" in session.answer()


def test_replay_of_a_messages_array_without_step_is_refused(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"role": "user", "content": "x"}]), encoding="utf-8")
    r = runner.invoke(app, ["replay", str(p)])
    assert r.exit_code == 2 and "as a starting state" in r.stderr


def tamper_first_tool_result(path, content):
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event.get("type") == "tool":
            event["content"] = content
            lines[i] = json.dumps(event, ensure_ascii=False)
            break
    return "\n".join(lines) + "\n"


def test_assert_replays_helper(tmp_path):
    path = recorded(tmp_path)
    assert assert_replays(path).stop_reason == "completed"
    path.write_text(tamper_first_tool_result(path, '{"status": "lost"}'), encoding="utf-8")
    try:
        assert_replays(path)
    except ReplayMismatch as exc:
        assert "diverged: first difference at messages[2].content" in str(exc)
    else:
        raise AssertionError("a tampered transcript replayed cleanly")


def test_pytest_plugin_collects_transcripts(tmp_path, pytester):
    folder = pytester.path / "transcripts"
    folder.mkdir()
    good = recorded(tmp_path, name="good.jsonl")
    (folder / "good.jsonl").write_bytes(good.read_bytes())
    (folder / "bad.jsonl").write_text(tamper_first_tool_result(good, "{}"), encoding="utf-8")
    result = pytester.runpytest("--agentdbg-replay", str(folder), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*bad.jsonl*", "*diverged*"])
    result = pytester.runpytest(str(folder))  # inert without the option
    result.assert_outcomes()


def test_save_in_step_mode_never_writes_over_the_recording(tmp_path):
    path = recorded(tmp_path)
    original = path.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(path)
    session, _, out = step_replay(path, f"save {path}", "save link.jsonl", "c", "save copy.jsonl")
    assert path.read_bytes() == original
    assert out.count("is the recording being replayed") == 2, out
    assert session.stop_reason is StopReason.COMPLETED and "InputError" not in out
    assert json.loads((tmp_path / "copy.jsonl").read_text(encoding="utf-8"))["stop_reason"] == "completed"


def test_diff_reads_a_run_saved_in_step_mode_against_the_original_recording(tmp_path, monkeypatch):
    """Step mode's 'save' without a transcript to copy writes the run as one JSON document;
    'diff' reads it like a transcript: the same run is the same, an injected result differs
    exactly there, and a broken document is one line naming the file and the field."""
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    path = recorded(tmp_path)
    same, changed = tmp_path / "same.json", tmp_path / "changed.json"
    step_replay(path, "c", f"save {same}")
    step_replay(path, "n", "n", 'inject 2 {"status": "lost"}', "n", "play", "c", f"save {changed}")
    assert json.loads(same.read_text(encoding="utf-8"))["format"] == "agentdbg-run"

    result = runner.invoke(app, ["diff", str(path), str(same)])
    assert result.exit_code == 0, result.output
    assert "same: every turn, call, argument, result and the stop reason match" in result.output
    assert "= turn 2: same (query_logistics)" in result.output

    result = runner.invoke(app, ["diff", str(path), str(changed), "--json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    call = doc["turns"][0]["calls"][0]
    assert call["name"] == "query_order" and call["b"]["result"] == '{"status": "lost"}'
    assert doc["b"]["stop_reason"] == "completed" and doc["b"]["tool_calls"] == 2

    broken = json.loads(changed.read_text(encoding="utf-8"))
    broken["turns"][1]["message_index"] = 99
    (tmp_path / "broken.json").write_text(json.dumps(broken, indent=2), encoding="utf-8")
    result = runner.invoke(app, ["diff", str(path), str(tmp_path / "broken.json")])
    assert result.exit_code == 2
    assert "broken.json: turn 2: 'turn', 'request_messages' and 'message_index' must be integers" \
        in " ".join(result.output.split())
    assert "Traceback" not in result.output
