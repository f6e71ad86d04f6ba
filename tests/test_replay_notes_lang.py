"""A proxy recording replayed in --lang zh: the stream's shape lines the proxy recorded as the
response's note ('reasoning item rs_1', 'redacted_thinking block 0' …) are said in Chinese
wherever the note is shown (the run view, step mode, the report), as the proxy's console said
them live; the note stays English in what is written (the replay's own recording, --json)."""

import io
import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from agentdbg import i18n
from agentdbg.cli import app
from agentdbg.server.proxy.analyst import Analysis, _run_job
from agentdbg.server.proxy.conversations import Tracker
from agentdbg.server.proxy.view import ProxyView

CODEX = Path(__file__).parent / "fixtures" / "traces" / "codex" / "proxy-conversation-1.jsonl"
QUESTION = {"role": "user", "content": "北京和上海今天哪个更热?"}


def sse(*events: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


#: an Anthropic stream with a redacted thinking block (no deltas), then the answer's text
STREAM = sse(
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                          "content": [], "model": "m", "stop_reason": None,
                                          "usage": {"input_tokens": 9, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking",
                                                                   "data": "EmwKAhgB"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "上海更热"}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "。"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
    {"type": "message_stop"})


def proxied(tmp_path) -> tuple[Path, str]:
    """The transcript the proxy's analysis writes for one streamed Anthropic exchange, and what
    its console said (in Chinese)."""
    tracker = Tracker(tmp_path / "saved", "http://upstream.invalid/v1")
    out = io.StringIO()
    analysis = Analysis(tracker, ProxyView(Console(file=out, width=200), tracker.redactor), "openai")
    body = {"model": "m", "max_tokens": 100, "stream": True, "messages": [QUESTION]}
    i18n.use("zh")
    try:
        _run_job(analysis, ("request", 1, json.dumps(body).encode(), "127.0.0.1:1", False, "anthropic"))
        _run_job(analysis, ("response", 1, 200, STREAM, 1.0, True))
        (path,) = _run_job(analysis, ("close",))
    finally:
        i18n.use("en")
    return Path(path), out.getvalue()


def test_the_short_shape_lines_of_a_proxy_recording_replay_in_chinese(tmp_path):
    path, live = proxied(tmp_path)
    note = next(json.loads(line)["note"] for line in path.read_text("utf-8").splitlines()
                if '"type": "response"' in line)
    assert note == "redacted_thinking block 0; text block 1: 2 delta(s)"     # recorded English
    assert "redacted_thinking 块 0" in live                                  # said live
    shown = CliRunner().invoke(app, ["replay", str(path), "--lang", "zh", "--save",
                                     str(tmp_path / "again.jsonl")]).output
    assert "模型说明：回放第 1 轮；录制时的说明：redacted_thinking 块 0；text 块 1：2 个 delta" in shown
    codex = CliRunner().invoke(app, ["replay", str(CODEX), "--lang", "zh"]).output
    assert codex.count("录制时的说明：reasoning 项 rs_") == 3 and "reasoning item" not in codex
    again = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text("utf-8").splitlines()]
    assert [e["note"] for e in again if e["type"] == "response"] == \
        [f"replayed turn 1; recorded note: {note}"]                         # written: English
    doc = json.loads(CliRunner().invoke(app, ["replay", str(CODEX), "--lang", "zh", "--json"]).output)
    notes = json.dumps(doc, ensure_ascii=False)
    assert notes.count("recorded note: reasoning item rs_") == 3 and "回放" not in notes
    # a replay of the replay's recording reads both levels back
    twice = CliRunner().invoke(app, ["replay", str(tmp_path / "again.jsonl"), "--lang", "zh"]).output
    assert "回放第 1 轮；录制时的说明：回放第 1 轮；录制时的说明：redacted_thinking 块 0；" in twice


def test_step_replay_and_the_report_say_the_recorded_note_in_chinese(tmp_path):
    rec = tmp_path / "codex.jsonl"
    rec.write_bytes(CODEX.read_bytes())
    stepped = CliRunner().invoke(app, ["replay", str(rec), "--step", "--lang", "zh"],
                                 input="n\nn\nquit\n").output
    assert "模型说明：回放第 1 轮；录制时的说明：reasoning 项 rs_" in stepped, stepped
    assert "reasoning item" not in stepped
    page = tmp_path / "report.html"
    r = CliRunner().invoke(app, ["report", str(rec), "--lang", "zh", "-o", str(page)])
    assert r.exit_code == 0, r.output
    html = page.read_text("utf-8")
    assert "reasoning 项 rs_" in html and "reasoning item rs_" not in html


def test_a_gemini_streams_shape_lines_are_said_in_chinese():
    """The Gemini stream's lines (a call in one part, a part that is not an object, a stream cut
    before its finishReason) are catalog templates too: English as recorded, Chinese when said."""
    from agentdbg.wire.common import stream_note
    from agentdbg.wire.gemini_codec import GeminiAccumulator

    acc = GeminiAccumulator()
    parts = [{"functionCall": {"name": "get_weather", "args": {"city": "北京"}}, "thoughtSignature": "c2ln"},
             {"functionCall": {"name": "get_weather", "args": {"city": "上海"}}}, [1]]
    acc.feed(f"data: {json.dumps({'candidates': [{'content': {'role': 'model', 'parts': parts}}]})}\n\n"
             .encode())
    acc.close()
    lines = acc.shape()
    assert lines[0].startswith("a part that is an array: '{")
    assert lines[1:] == ["the stream ended before a candidate's finishReason: the response is partial",
                         "call get_weather in one part, with its thoughtSignature",
                         "call get_weather in one part"]
    i18n.use("zh")
    try:
        said = [stream_note(line) for line in lines]
    finally:
        i18n.use("en")
    assert said[0].startswith("一个 part 是数组：'{")
    assert said[1:] == ["流在 candidate 的 finishReason 之前就结束了：这个响应不完整",
                        "调用 get_weather 在一个 part 中发送，带着它的 thoughtSignature",
                        "调用 get_weather 在一个 part 中发送"]


def test_live_tools_without_tools_is_refused_in_chinese():
    said = CliRunner().invoke(app, ["replay", str(CODEX), "--lang", "zh", "--live-tools"])
    assert said.exit_code == 2
    assert said.output.strip() == ("agentdbg: error: --live-tools 会运行工具：用 --tools 路径 或 --mcp "
                                   "指定它们（记录文件自带的工具文件永远不会被加载）")
    english = CliRunner().invoke(app, ["replay", str(CODEX), "--live-tools"])
    assert english.output.strip() == ("agentdbg: error: --live-tools runs tools: name them with --tools "
                                      "PATH or --mcp (a transcript's own tools file is never loaded)")
