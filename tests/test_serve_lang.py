"""`agentdbg serve --lang zh` as a real process hit by real requests: its start-up lines, the
line for each request it answered with an error, and the line for a tool whose arguments it
left unchecked (a schema over the work budget) are Chinese; the API's own error text, paths,
URLs and the tool's name stay verbatim, and the HTTP answers stay the real API's English. The
same requests in English say what they always said. Then serve's rarer lines (a body too
large, its own failure) on the real app."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from test_i18n_scan import english

#: what a chat request breaking the protocol gets from the real API (and from serve)
ORPHAN = ("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
          "message with 'tool_calls'.")


def _hostile_schema(levels: int = 40) -> dict:
    """A small schema whose references, expanded, double at every level (over the budget)."""
    defs = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(levels)}
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "required": ["x"],
            "$defs": defs}


REQUESTS = [
    {"model": "m", "messages": [{"role": "tool", "content": "hi", "tool_call_id": "c1"}]},
    {"model": "m", "tools": [{"type": "function", "function": {
        "name": "lookup", "description": "Use when asked.", "parameters": _hostile_schema()}}],
     "messages": [{"role": "user", "content": "q"},
                  {"role": "assistant", "content": None, "tool_calls": [{
                      "id": "c0", "type": "function",
                      "function": {"name": "lookup", "arguments": "{\"x\": \"a\"}"}}]}]},
]


def _serve(tmp_path, lang: str) -> tuple[list[str], list[tuple[int, str]]]:
    """serve's lines and the (status, error message) of each request."""
    log = tmp_path / f"serve-{lang}.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "serve", "--port", "0", "--lang", lang],
                                stdout=fh, stderr=subprocess.STDOUT, cwd=tmp_path,
                                env={**os.environ, "AGENTDBG_HOME": str(tmp_path), "NO_COLOR": "1"})
    answers = []
    try:
        deadline = time.monotonic() + 30
        while "/v1\n" not in log.read_text(encoding="utf-8"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(encoding="utf-8")
            time.sleep(0.05)
        url = log.read_text(encoding="utf-8").split("\n", 1)[0].split()[-1]
        for body in REQUESTS:
            request = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                             headers={"content-type": "application/json"})
            try:
                urllib.request.urlopen(request, timeout=30)
            except urllib.error.HTTPError as exc:
                answers.append((exc.code, json.loads(exc.read())["error"]["message"]))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    return log.read_text(encoding="utf-8").splitlines(), answers


def test_serves_request_lines_in_chinese_and_the_api_answers_in_english(tmp_path):
    lines, answers = _serve(tmp_path, "zh")
    assert answers[0] == (400, ORPHAN), answers     # what the app reads: the real API's text
    assert lines[2] == ("  POST /v1/chat/completions, /v1/responses, /v1/messages；"
                        "请求会被检查（profile openai）"), lines
    assert lines[3] == f"agentdbg serve: 以 400 回答了一个 chat 请求：{ORPHAN}", lines
    assert lines[4] == ("agentdbg serve: 工具 'lookup'：arguments 未检查：展开引用后，这个 schema 超过 "
                        "10000 个部分（agentdbg 对单个 schema 的工作预算）"), lines
    assert lines[5].startswith("agentdbg serve: 以 400 回答了一个 chat 请求："), lines
    # lines[1] is a shell command, lines[3] quotes the API's own words; a profile's name,
    # JSON Schema and the 'arguments' field are protocol words
    left = [line for line in lines[:1] + lines[2:3] + lines[4:5]
            if set(english(line)) - {"openai", "schema", "arguments"}]
    assert not left, left


def test_serves_request_lines_in_english_unchanged(tmp_path):
    lines, answers = _serve(tmp_path, "en")
    assert answers[0] == (400, ORPHAN), answers
    assert lines[2] == ("  POST /v1/chat/completions, /v1/responses, /v1/messages; requests checked "
                        "(profile openai)"), lines
    assert lines[3] == f"agentdbg serve: answered a chat request with 400: {ORPHAN}", lines
    assert lines[4] == ("agentdbg serve: tool 'lookup': arguments left unchecked: with its references "
                        "expanded, the schema has more than 10000 parts (agentdbg's work budget for "
                        "one schema)"), lines
    assert lines[5].startswith("agentdbg serve: answered a chat request with 400: "), lines


def test_serves_rarer_lines_in_chinese():
    """A body over the limit (413) and a failure of the model behind serve (its own error):
    one Chinese line each; the answers stay the API's English."""
    from starlette.testclient import TestClient

    from agentdbg import i18n
    from agentdbg.server.serve import make_app

    class Broken:
        name = "broken"

        def complete(self, request):
            raise KeyError("k")

    said: list[str] = []
    try:
        i18n.use("zh")
        app = make_app(Broken(), log=said.append, max_body=100)  # type: ignore[arg-type]
        with TestClient(app, base_url="http://127.0.0.1") as client:
            big = client.post("/v1/chat/completions", content=b"{" + b" " * 200 + b"}",
                              headers={"content-type": "application/json"})
            odd = client.post("/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "q"}]})
    finally:
        i18n.use("en")
    assert big.status_code == 413 and "request body larger than 100 bytes" in big.text
    assert odd.status_code == 400 and "could not read this request (KeyError)" in odd.text
    assert said[:2] == ["agentdbg serve: 以 413 回答了一个 chat 请求：它的请求体超过 100 字节",
                        "agentdbg serve: 无法回答一个 chat 请求：KeyError：'k'"], said


def test_a_failure_of_serves_own_code_is_one_chinese_line():
    """What escapes the app (``Contained``): one line in Chinese naming the request, the
    exception's name and text verbatim; the 500 body in English."""
    import asyncio

    from agentdbg import i18n
    from agentdbg.server.net import Contained

    async def app(scope, receive, send):
        raise ValueError("bad state")

    sent: list[dict] = []
    said: list[str] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    contained = Contained(app, lambda status, text: {"error": {"message": text}}, "serve", said.append)
    try:
        i18n.use("zh")
        asyncio.run(contained({"type": "http", "method": "POST", "path": "/v1/x"}, receive, send))
    finally:
        i18n.use("en")
    assert said == ["agentdbg serve: 处理 POST '/v1/x' 时失败：ValueError：bad state"], said
    assert sent[0]["status"] == 500
    assert json.loads(sent[1]["body"]) == {"error": {"message": "agentdbg serve failed on this request (ValueError)"}}
