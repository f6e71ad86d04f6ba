"""``agentdbg serve`` answers malformed bodies with JSON, never a plain-text 500 and a
traceback on its console (issue 11)."""

import json
import urllib.error
import urllib.request

import pytest
from proxy_helpers import Serve

BODIES = {
    "tool_choice names no function": {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                      "tools": [{"type": "function", "function": {"name": "f"}}],
                                      "tool_choice": {"function": "x"}},
    "properties is a string": {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                               "tools": [{"type": "function", "function": {
                                   "name": "f", "parameters": {"type": "object", "properties": "oops"}}}]},
    "400 levels of nesting": '{"model": "m", "messages": [{"role": "user", "content": "hi", "x": '
                             + "[" * 400 + "]" * 400 + "}]}",
    "messages is a string": {"model": "m", "messages": "hi"},
    "not JSON": "{",
    "tools is an object": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": {}},
}


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    server = Serve(tmp_path_factory.mktemp("serve"), "--offline")
    yield server
    server.stop()


@pytest.mark.parametrize("name", list(BODIES))
def test_malformed_bodies_get_json_answers(serve, name):
    body = BODIES[name]
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    req = urllib.request.Request(serve.url + "/chat/completions", data=data,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            status, payload, ctype = resp.status, resp.read(), resp.headers["content-type"]
    except urllib.error.HTTPError as exc:
        status, payload, ctype = exc.code, exc.read(), exc.headers["content-type"]
    assert status in (200, 400), (status, payload[:200])
    assert "application/json" in ctype
    doc = json.loads(payload)
    assert ("error" in doc) == (status == 400)
    assert "Traceback" not in serve.output()
