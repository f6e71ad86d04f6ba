"""An MCP server that answers junk is one line, never the SDK's traceback (issue 21): a line
on a stdio server's stdout that is not JSON-RPC (the SDK printed 34 lines of traceback), an
HTTP URL that answers something else than JSON-RPC (67 lines before agentdbg's error)."""

import json
import shlex
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "demo_server.py"
SCRIPT = {"turns": [{"tool_calls": [{"name": "lookup_city", "id": "c1", "arguments": {"city": "Paris"}}]},
                    {"content": "done"}]}


def agentdbg(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120)


def test_a_stdio_server_printing_junk_is_one_warning_and_works(tmp_path):
    (tmp_path / "s.yaml").write_text(json.dumps(SCRIPT))
    server = f"sh -c {shlex.quote(f'echo not json at all; exec {sys.executable} {DEMO}')}"
    r = agentdbg(tmp_path, "run", "q", "--mcp", server, "--script", "s.yaml")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentdbg: warning: MCP: "), r.stderr
    assert "not json at all" in lines[0] and "Traceback" not in r.stderr
    assert "stop: completed" in r.stdout


@pytest.fixture
def junk_url():
    """An HTTP server answering every request with 200 and JSON that is not JSON-RPC."""
    class Junk(BaseHTTPRequestHandler):
        def _any(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.dumps({"hello": "not json-rpc"}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = do_DELETE = _any

        def log_message(self, *a):
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), Junk)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()


def test_an_http_url_answering_junk_is_one_error_line(tmp_path, junk_url):
    r = agentdbg(tmp_path, "run", "q", "--mcp", junk_url)
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("agentdbg: error: MCP server '127.0.0.1-") and "failed to initialise" in line
