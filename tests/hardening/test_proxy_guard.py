"""Only local programs may use the proxy and serve, never a web page (issue 21): a Host that is
not the server's own address (DNS rebinding) or a browser's Origin is refused before anything is
forwarded, with a JSON 403 and one console line; official SDKs (no Origin) pass."""

import http.client
import json
import urllib.parse

import pytest
from proxy_helpers import Proxy, Serve, Upstream

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


def raw_post(url: str, headers: dict, path: str = "/v1/chat/completions", body: bytes = BODY,
             method: str = "POST"):
    """A request with exactly these headers (Host included), as a browser or an attacker sends it."""
    netloc = urllib.parse.urlsplit(url).netloc
    conn = http.client.HTTPConnection(netloc, timeout=30)
    conn.putrequest(method, path, skip_host="host" in {k.lower() for k in headers},
                    skip_accept_encoding=True)
    for name, value in headers.items():
        conn.putheader(name, value)
    conn.putheader("content-length", str(len(body)))
    conn.endheaders(body)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data, {k.lower(): v for k, v in resp.getheaders()}


def port_of(url: str) -> int:
    return urllib.parse.urlsplit(url).port


@pytest.mark.parametrize("headers", [
    {"Host": "rebound.example:{port}", "content-type": "application/json"},        # DNS rebinding
    {"Origin": "https://evil.example", "content-type": "text/plain"},             # cross-site form
    {"Origin": "null", "content-type": "text/plain"},                             # sandboxed page
    {"Sec-Fetch-Site": "cross-site", "content-type": "text/plain"},               # no-cors fetch
    {"Host": "127.0.0.1:1", "content-type": "application/json"},                  # another port
], ids=["rebinding", "origin", "null-origin", "sec-fetch-site", "wrong-port"])
def test_a_web_page_cannot_spend_the_upstream_credentials(upstream, tmp_path, headers):
    parts = urllib.parse.urlsplit(upstream.url)
    proxy = Proxy(f"http://alice:pa55-SECRET@{parts.netloc}{parts.path}", tmp_path)
    try:
        port = port_of(proxy.url)
        sent = {k: v.format(port=port) for k, v in headers.items()}
        status, data, got = raw_post(proxy.url, sent)
        assert status == 403 and got["content-type"] == "application/json", data
        error = json.loads(data)["error"]
        assert error["type"] == "invalid_request_error"
        assert error["message"].startswith("agentdbg proxy refused this request: ")
        raw_post(proxy.url, sent)                       # a page retries: still refused, said once
        assert upstream.seen == []                      # nothing forwarded, no credentials spent
    finally:
        out = proxy.stop()
    said = [line for line in out.splitlines() if "refused" in line]
    assert len(said) == 1 and "Traceback" not in out, out
    assert proxy.saved() == ""


def test_programs_on_this_machine_are_served(proxy, upstream):
    """What the official clients send: the SDKs' own Host forms, Node's fetch (sec-fetch-mode
    but no Origin), and a browser page of this very server (same origin)."""
    port = port_of(proxy.url)
    for headers in ({"Host": f"127.0.0.1:{port}"}, {"Host": f"localhost:{port}"},
                    {"Host": f"LOCALHOST.:{port}"},
                    {"Host": f"localhost:{port}", "sec-fetch-mode": "cors", "accept-language": "*"},
                    {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}):
        status, data, _ = raw_post(proxy.url, {**headers, "content-type": "application/json"})
        assert status == 200, (headers, data)
    assert len(upstream.seen) == 5


def test_an_allowed_origin_is_served_with_cors_answers(upstream, tmp_path):
    proxy = Proxy(upstream.url, tmp_path, "--allow-origin", "http://localhost:3000/",
                  "--allow-host", "host.docker.internal")
    try:
        port = port_of(proxy.url)
        preflight = {"Host": f"localhost:{port}", "Origin": "http://localhost:3000",
                     "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "authorization, content-type"}
        status, _, got = raw_post(proxy.url, preflight, method="OPTIONS", body=b"")
        assert status == 200 and got["access-control-allow-origin"] == "http://localhost:3000"
        status, _, got = raw_post(proxy.url, {"Host": f"localhost:{port}", "content-type":
                                              "application/json", "Origin": "http://localhost:3000"})
        assert status == 200 and got["access-control-allow-origin"] == "http://localhost:3000"
        status, _, _ = raw_post(proxy.url, {"Host": "host.docker.internal:9999",
                                            "content-type": "application/json"})
        assert status == 200                            # a name the user allowed, any port
        status, _, _ = raw_post(proxy.url, {"Host": f"localhost:{port}", "content-type":
                                            "application/json", "Origin": "http://localhost:3001"})
        assert status == 403                            # only that origin
    finally:
        proxy.stop()
    assert len(upstream.seen) == 2


def test_serve_refuses_web_pages_too(tmp_path):
    serve = Serve(tmp_path)
    try:
        port = port_of(serve.url)
        status, data, _ = raw_post(serve.url, {"Host": f"rebound.example:{port}",
                                               "content-type": "application/json"})
        assert status == 403 and "agentdbg serve refused this request" in data.decode()
        status, _, _ = raw_post(serve.url, {"Host": f"127.0.0.1:{port}", "Origin":
                                            "https://evil.example", "content-type": "text/plain"})
        assert status == 403
        status, _, _ = raw_post(serve.url, {"Host": f"127.0.0.1:{port}",
                                            "content-type": "application/json"})
        assert status == 200
    finally:
        out = serve.stop()
    assert len([line for line in out.splitlines() if "refused" in line]) == 2, out


# -- headers: hop-by-hop ones end at the proxy, key headers stay secret -----------------------

def test_headers_named_in_connection_are_not_forwarded_either_way(proxy, upstream):
    def reply(handler, body):
        data = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                           "choices": [{"index": 0, "finish_reason": "stop", "message": {
                               "role": "assistant", "content": "ok"}}]}).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header("Connection", "keep-alive, X-Upstream-Hop")
        handler.send_header("X-Upstream-Hop", "internal-routing-token")
        handler.send_header("X-Request-Id", "req-1")
        handler.end_headers()
        handler.wfile.write(data)
    upstream.reply = reply
    port = port_of(proxy.url)
    status, _, got = raw_post(proxy.url, {"Host": f"127.0.0.1:{port}", "content-type":
                                          "application/json", "Connection": "keep-alive, X-App-Hop",
                                          "X-App-Hop": "for-the-proxy-only", "X-Kept": "1"})
    assert status == 200
    sent = {k.lower() for k in upstream.seen[-1]["headers"]}
    assert "x-app-hop" not in sent and "x-kept" in sent
    assert "x-upstream-hop" not in got and got["x-request-id"] == "req-1"


SECRET = "0123456789abcdef-SECRET-fedcba9876543210"


@pytest.mark.parametrize("header,value,flags", [
    ("Authorization", f"Bearer\t{SECRET}", ()),
    ("Ocp-Apim-Subscription-Key", SECRET, ()),
    ("x-goog-api-key", SECRET, ()),
    ("X-Gateway-Token", SECRET, ("--secret-header", "X-Gateway-Token")),
], ids=["bearer-tab", "azure-apim", "gemini", "named"])
def test_key_headers_are_forwarded_and_never_printed_or_recorded(upstream, tmp_path, header, value,
                                                                  flags):
    def echo(handler, body):            # an upstream that quotes the key it rejects (without its
        key = handler.headers.get(header, "").split()[-1]   # scheme), and one that answers with it
        if b"first" in body:
            Upstream.send(handler, 401, json.dumps({"error": {
                "message": f"Access denied due to invalid key {key}", "type": "auth"}}).encode())
            return
        Upstream.send(handler, 200, json.dumps({
            "id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
                "index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": f"your key is {key}"}}]}).encode())
    upstream.reply = echo
    proxy = Proxy(upstream.url, tmp_path, *flags)
    try:
        port = port_of(proxy.url)
        for n, question in enumerate(("first", "second")):
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": question}]})
            status, data, _ = raw_post(proxy.url, {"Host": f"127.0.0.1:{port}", header: value,
                                                   "content-type": "application/json"},
                                       body=body.encode())
            assert status == (401, 200)[n] and SECRET in data.decode()   # the app gets it as sent
        sent = {k.lower(): v for k, v in upstream.seen[-1]["headers"].items()}
        assert sent[header.lower()] == value                            # and it was forwarded
    finally:
        out = proxy.stop()
    saved = proxy.saved()
    assert "your key is" in saved and "invalid key" in out, out
    assert SECRET not in out and SECRET not in saved
