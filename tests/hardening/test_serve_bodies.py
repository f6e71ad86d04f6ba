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


def send(url: str, data: bytes, timeout: float = 60) -> tuple[int, bytes, str]:
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read(), resp.headers["content-type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers["content-type"]


# a lone surrogate, as the JSON escape (valid JSON; not encodable as UTF-8), where the answer
# echoes it back (the model name; Responses' instructions) and where it does not (the content)
SURROGATE = {
    "chat": ("/chat/completions",
             '{"model": "m\\ud800", "messages": [{"role": "user", "content": "\\ud800"}]'),
    "responses": ("/responses", '{"model": "m\\ud800", "instructions": "\\udfff", "input": "\\ud800"'),
    "anthropic": ("/messages", '{"model": "m\\ud800", "max_tokens": 50, '
                               '"messages": [{"role": "user", "content": "\\ud800"}]'),
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("fmt", list(SURROGATE))
def test_a_lone_surrogate_is_answered_and_echoed_as_its_escape(serve, fmt, stream):
    path, body = SURROGATE[fmt]
    data = (body + (', "stream": true}' if stream else "}")).encode()
    status, payload, ctype = send(serve.url + path, data)
    assert status == 200, payload[:300]
    assert ("text/event-stream" if stream else "application/json") in ctype
    payload.decode("utf-8")                               # what went out is UTF-8 ...
    assert b"m\\ud800" in payload                         # ... with the surrogate as its escape
    if not stream:
        assert json.loads(payload)["model"] == "m\ud800"
    assert "Traceback" not in serve.output() and "UnicodeEncodeError" not in serve.output()


@pytest.mark.parametrize("fmt", list(SURROGATE))
def test_a_body_over_32_mb_gets_a_413_in_the_formats_own_shape(serve, fmt):
    path, _ = SURROGATE[fmt]
    big = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "' + \
        b"x" * (33 << 20) + b'"}]}'
    status, payload, ctype = send(serve.url + path, big, timeout=120)
    assert status == 413 and "application/json" in ctype, payload[:300]
    doc = json.loads(payload)
    if fmt == "anthropic":
        assert doc["type"] == "error" and "larger than 33554432 bytes" in doc["error"]["message"]
    else:
        assert doc["error"]["code"] == "request_too_large"
    status, _, _ = send(serve.url + path, SURROGATE[fmt][1].encode() + b"}")   # and it goes on
    assert status == 200


def test_nan_is_not_json(serve):
    status, payload, _ = send(serve.url + "/chat/completions",
                              b'{"model": "m", "messages": [{"role": "user", "content": NaN}]}')
    assert status == 400 and "could not parse the JSON body" in json.loads(payload)["error"]["message"]


def test_an_unknown_path_gets_a_json_404(serve):
    status, payload, ctype = send(serve.url.replace("/v1", "") + "/elsewhere", b"{}")
    assert status == 404 and "application/json" in ctype
    assert json.loads(payload)["error"]["message"] == "Not Found"
