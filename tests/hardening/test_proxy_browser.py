"""A real web page against the proxy (issue 21), in headless Chromium (Debian's /usr/bin/chromium,
driven by Playwright): a page on another site cannot make the proxy spend the upstream's
credentials, a DNS-rebound name cannot read through it, and a page the user allows works."""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from proxy_helpers import COMPLETION, Proxy, Upstream

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP rebound.test 127.0.0.1"]   # a rebound name, resolved locally

PAGE = """<!doctype html><meta charset="utf-8"><title>a page</title><script>
window.results = {};
const body = JSON.stringify({model: "m", messages: [{role: "user", content: "from a page"}]});
fetch("%(proxy)s/chat/completions", {method: "POST", mode: "no-cors",
      headers: {"content-type": "text/plain"}, body})
  .then(() => results.simple = "sent", () => results.simple = "failed");
fetch("%(proxy)s/chat/completions", {method: "POST", body,
      headers: {"content-type": "application/json", "authorization": "Bearer page-key"}})
  .then(r => r.text()).then(t => results.cors = t, () => results.cors = "failed");
</script>"""


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)",
                    pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Site:
    """A web page served from its own origin (http://127.0.0.1:PORT); ``html`` may be set after
    it started (the page names the proxy, the proxy may name the page's origin)."""

    def __init__(self):
        self.html = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                data = site.html.encode()
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def visit(browser, url: str) -> dict:
    page = browser.new_page()
    try:
        page.goto(url)
        page.wait_for_function("results.simple && results.cors", timeout=20000)
        return page.evaluate("results")
    finally:
        page.close()


def with_credentials(upstream: Upstream) -> str:
    parts = urllib.parse.urlsplit(upstream.url)
    return f"http://alice:pa55-SECRET@{parts.netloc}{parts.path}"


def test_a_page_on_another_site_spends_nothing_and_reads_nothing(browser, upstream, tmp_path):
    proxy = Proxy(with_credentials(upstream), tmp_path)
    site = Site()
    site.html = PAGE % {"proxy": proxy.url}
    try:
        results = visit(browser, site.origin + "/")
        assert results["cors"] == "failed"              # the page cannot read an answer
        assert upstream.seen == []                      # and no request left with the credentials
        port = urllib.parse.urlsplit(proxy.url).port
        page = browser.new_page()                       # DNS rebinding: the page's own name now
        try:                                            # points at 127.0.0.1
            response = page.goto(f"http://rebound.test:{port}/v1/models")
            assert response.status == 403
            error = json.loads(page.inner_text("body"))["error"]["message"]
            assert "is not this proxy's address" in error
        finally:
            page.close()
        assert upstream.seen == []
    finally:
        site.stop()
        out = proxy.stop()
    assert "pa55-SECRET" not in out
    refused = [line for line in out.splitlines() if "refused" in line]
    assert any(site.origin in line for line in refused), out
    assert any("rebound.test" in line for line in refused), out


def test_a_page_the_user_allows_can_use_the_proxy(browser, upstream, tmp_path):
    site = Site()
    proxy = Proxy(upstream.url, tmp_path, "--allow-origin", site.origin)
    site.html = PAGE % {"proxy": proxy.url}
    try:
        results = visit(browser, site.origin + "/")
    finally:
        site.stop()
        proxy.stop()
    assert json.loads(results["cors"]) == COMPLETION    # preflight, request, answer read
    assert len(upstream.seen) == 2                      # both of the page's requests went
