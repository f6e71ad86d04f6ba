"""Schemas from untrusted places never reach the network or the disk and never hang (issue 11).

Every way in is tried: ``check`` on a request, ``run`` (the executor's validator), ``replay``
and ``check`` of the transcript, the pytest plugin, and the tools linter. The schema refers
to a server that counts requests, a server that never answers, and a local file that would
change the verdict if it were read; a ``pattern`` backtracks exponentially in a backtracking
engine.
"""

import json
import re
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
EVIL = "^(a+)+$"
SLOW_TEXT = "a" * 34 + "!"


@pytest.fixture
def refs(tmp_path):
    """The schema's references: (counting URL, silent URL, file URL, hits list)."""
    hits = []

    class Count(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            data = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Count)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # connections are accepted by the kernel and never answered
    (tmp_path / "int.json").write_text('{"type": "integer"}', encoding="utf-8")
    yield (f"http://127.0.0.1:{server.server_address[1]}/schema.json",
           f"http://127.0.0.1:{silent.getsockname()[1]}/schema.json",
           (tmp_path / "int.json").as_uri(), hits)
    server.shutdown()
    silent.close()


def parameters(refs) -> dict:
    counted, silent, file_url, _ = refs
    return {"type": "object", "properties": {
        "a": {"$ref": counted}, "b": {"$ref": silent}, "c": {"$ref": file_url},
        "d": {"type": "string", "pattern": EVIL},
        "e": {"$ref": "#/$defs/local"}},
        "$defs": {"local": {"type": "integer"}}}


ARGS = {"a": "text", "b": "text", "c": "text", "d": SLOW_TEXT, "e": "not a number"}


def agentdbg(*args, cwd, timeout=30):
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "agentdbg", *args], cwd=str(cwd), capture_output=True,
                       text=True, timeout=timeout, env={**__import__("os").environ, "NO_COLOR": "1"})
    return r, time.monotonic() - start


def test_check_never_retrieves_a_ref_and_matches_patterns_in_linear_time(tmp_path, refs):
    body = {"model": "m", "tools": [{"type": "function", "function": {
        "name": "f", "parameters": parameters(refs)}}],
        "messages": [{"role": "user", "content": "q"},
                     {"role": "assistant", "content": None, "tool_calls": [{
                         "id": "c1", "type": "function",
                         "function": {"name": "f", "arguments": json.dumps(ARGS)}}]}]}
    (tmp_path / "req.json").write_text(json.dumps(body), encoding="utf-8")
    r, took = agentdbg("check", "req.json", "--json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    problems = " ".join(f["message"] for f in json.loads(r.stdout)["findings"])
    assert f"does not match '{EVIL}'" in problems  # the pattern is really checked
    assert "e: 'not a number' is not of type 'integer'" in problems  # local refs still work
    assert not re.search(r"\b[abc]: ", problems)  # unresolved refs: nothing claimed
    assert refs[3] == [] and took < 20


def recording(tmp_path, refs):
    tools = {"version": 1, "tools": [{"name": "f", "description": "Use when asked.",
                                      "parameters": parameters(refs), "handler": {"fixture": 1}}]}
    (tmp_path / "refs.yaml").write_text(json.dumps(tools), encoding="utf-8")
    script = {"turns": [{"tool_calls": [{"name": "f", "id": "c1", "arguments": ARGS}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script), encoding="utf-8")
    r, took = agentdbg("run", "q", "--tools", "refs.yaml", "--script", "s.yaml", "--json",
                       "--save", "t.jsonl", cwd=tmp_path)
    assert took < 20 and r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_run_validates_arguments_without_retrieving(tmp_path, refs):
    doc = recording(tmp_path, refs)
    error = json.loads(doc["messages"][2]["content"])["error"]
    assert error["type"] == "invalid_arguments"
    assert f"does not match '{EVIL}'" in error["message"]
    assert "e: 'not a number' is not of type 'integer'" in error["message"]
    assert not re.search(r"\b[abc]: ", error["message"])
    assert refs[3] == []


def test_replay_check_and_the_pytest_plugin_never_retrieve(tmp_path, refs):
    recording(tmp_path, refs)
    for args in (["replay", "t.jsonl"], ["check", "t.jsonl"], ["replay", "t.jsonl", "--json"]):
        r, took = agentdbg(*args, cwd=tmp_path)
        assert took < 20 and "Traceback" not in r.stderr, (args, r.stderr)
    (tmp_path / "recordings").mkdir()
    (tmp_path / "t.jsonl").rename(tmp_path / "recordings" / "t.jsonl")
    r = subprocess.run([sys.executable, "-m", "pytest", "--agentdbg-replay", "recordings", "-q",
                        "-p", "no:cacheprovider"], cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=60)
    assert "1 passed" in r.stdout, r.stdout
    assert refs[3] == []


def test_the_linter_names_remote_refs_and_patterns_re2_cannot_run(tmp_path, refs):
    spec = {"name": "f", "description": "Use when asked.", "handler": {"fixture": 1},
            "parameters": {"type": "object", "required": ["a", "b"], "properties": {
                "a": {"$ref": refs[0], "description": "A"},
                "b": {"type": "string", "pattern": "^(?!admin)", "description": "B"}}}}
    (tmp_path / "t.yaml").write_text(json.dumps({"version": 1, "tools": [spec]}), encoding="utf-8")
    r = runner.invoke(app, ["tools", "t.yaml", "--json"])
    found = [f["message"] for f in json.loads(r.stdout)["findings"]]
    assert any(refs[0] in m and "never retrieves" in m for m in found), found
    assert any("'^(?!admin)'" in m and "RE2" in m for m in found), found
    assert refs[3] == []


def test_a_pattern_re2_cannot_run_is_skipped_not_hung_on(tmp_path):
    # a back-reference: exponential in a backtracking engine, not RE2 syntax
    hostile = r"^(a|a)*\1$"
    tools = {"version": 1, "tools": [{"name": "f", "description": "Use when asked.",
                                      "parameters": {"type": "object", "properties": {
                                          "d": {"type": "string", "pattern": hostile}}},
                                      "handler": {"fixture": {"ok": 1}}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools), encoding="utf-8")
    script = {"turns": [{"tool_calls": [{"name": "f", "id": "c1",
                                         "arguments": {"d": "a" * 40 + "!"}}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script), encoding="utf-8")
    r, took = agentdbg("run", "q", "--tools", "t.yaml", "--script", "s.yaml", "--json", cwd=tmp_path)
    assert took < 20 and r.returncode == 0
    assert json.loads(json.loads(r.stdout)["messages"][2]["content"]) == {"ok": 1}


def test_schema_checks_never_print_the_pattern_to_stderr(tmp_path):
    # RE2 logs patterns it cannot parse to stderr unless told not to
    tools = {"version": 1, "tools": [{"name": "f", "description": "Use when asked.",
                                      "parameters": {"type": "object", "properties": {
                                          "d": {"type": "string", "pattern": "(?=\x1b]52;c;x\x07)"}}},
                                      "handler": {"fixture": 1}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools), encoding="utf-8")
    r, _ = agentdbg("tools", "t.yaml", cwd=tmp_path)
    assert "\x1b]52" not in r.stderr + r.stdout and "re2.cc" not in r.stderr
