"""Replaying a lesson's recording in class: its texts in the chosen language, and the batch
verdict on a request the lesson sent broken on purpose."""

from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.i18n import Msg

ORDER_Q = "订单 ORD-2026-001 到哪里了?"
ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."


def record(tmp_path, commands: str):
    rec = tmp_path / "rec.jsonl"
    r = CliRunner().invoke(app, ["run", ORDER_Q, "--step", "--save", str(rec)], input=commands)
    assert r.exit_code in (0, 7), r.output
    return rec


def test_a_replayed_lesson_speaks_chinese_and_keeps_the_apis_words(tmp_path):
    rec = record(tmp_path, "n\nn\ndrop 1\nn\nsend\nquit\n")
    r = CliRunner().invoke(app, ["replay", str(rec), "--lang", "zh"])
    assert "回放第 1 轮；录制时的说明：" in r.output and "replayed turn" not in r.output
    stop = next(line for line in r.output.splitlines() if line.startswith("停止："))
    assert "离线模型像 OpenAI Chat Completions API 一样回答" in stop and "the offline model" not in stop
    assert ORPHAN in stop                                  # what the API says stays verbatim
    english = CliRunner().invoke(app, ["replay", str(rec)])
    assert "model note: replayed turn 1; recorded note: " in english.output
    assert "(the offline model answers as the OpenAI Chat Completions API would" in english.output


def test_a_request_sent_broken_on_purpose_replays_as_recorded(tmp_path):
    """The lesson's drop+send is reproduced faithfully: no replay problem; the exit status is
    the recorded run's own (7, a model error), as `agentdbg run` exited."""
    rec = record(tmp_path, "n\nn\ndrop 1\nn\nsend\nquit\n")
    r = CliRunner().invoke(app, ["replay", str(rec)])
    assert r.exit_code == 7, r.output
    assert "agentdbg: error: replay" not in r.output and "orphan-tool-message at" not in r.output


def test_a_broken_request_sent_without_send_still_fails_the_replay(tmp_path):
    """Only a request the checker blocked and the user then sent is excused: the same broken
    request in a recording with no 'send' (an app that sent it by itself) is a replay problem."""
    rec = record(tmp_path, "n\nn\ndrop 1\nn\nsend\nquit\n")
    lines = rec.read_text(encoding="utf-8").splitlines(keepends=True)
    rec.write_text("".join(line for line in lines if '"action": "send"' not in line), encoding="utf-8")
    r = CliRunner().invoke(app, ["replay", str(rec)])
    assert r.exit_code == 1 and "orphan-tool-message at message 1" in r.output, r.output


def test_a_recorded_message_is_read_back_into_its_template():
    template = "HTTP {status} (the offline model answers as the {api} would, --profile {profile}): {error}"
    text = f"HTTP 400 (the offline model answers as the Anthropic Messages API would, --profile openai): {ORPHAN}"
    found = Msg.parse(template, text)
    assert found is not None and str(found) == text and found.values["error"] == ORPHAN
    assert Msg.parse(template, "Rate limit reached (HTTP 429)") is None
