"""The HTML report opened in real headless Chromium (Debian's /usr/bin/chromium, or
``AGENTDBG_CHROMIUM``, driven by Playwright), asserting on what a person sees. The test command
installs the browser when it is missing (``tests/provision.py``); when it cannot, these tests end
in one failure saying how to install it, not an error each."""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import provision
import pytest

from agentdbg.report.html import page, render_report

from .report_fixtures import LONG_TAIL, ORDER_Q, SCRIPT_MARK

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    chromium = provision.chromium_path()  # there: the test command provisioned it
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: pip install -e '.[test]'", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=FLAGS)
        yield b
        b.close()


class Watched:
    """A page plus every request it tried and every console message it printed."""

    def __init__(self, browser, path: Path):
        self.page = browser.new_page(viewport={"width": 1100, "height": 900})
        self.requests: list[str] = []
        self.console: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.console.append(m.text))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def others(self) -> list[str]:
        return [u for u in self.requests if u != self.url]


def open_report(browser, tmp_path, transcript, name="report.html", **kw) -> Watched:
    out = tmp_path / name
    out.write_text(render_report(transcript, **kw), encoding="utf-8")
    return Watched(browser, out)


def test_calls_results_and_pairing_labels_are_shown(browser, tmp_path, made):
    w = open_report(browser, tmp_path, made["run"])
    call = w.page.locator("#h0-m1").inner_text()
    assert "→ A call_o1" in call and "query_order" in call and "✓ answered at [2]" in call
    assert '{"order_id": "ORD-2026-001"}' in call
    result = w.page.locator("#h0-m2").inner_text()
    assert "← A call_o1" in result and "✓ answers [1]" in result and "SF123456" in result
    second = w.page.locator("#h0-m3").inner_text()
    assert "→ B call_o2" in second and "query_logistics" in second
    turn = w.page.locator("#turn-1").inner_text()
    assert "turn 1 · 625 prompt + 45 completion = 670 tokens (estimated)" in turn
    assert "finish_reason=tool_calls" in turn
    assert "stopped: completed" in w.page.locator("#stop").inner_text()
    assert w.page.locator(".lab.l0, .lab.l1, .lab.l2, .lab.l3, .lab.l4, .lab.l5, .lab.l6, .lab.l7").count() == 4
    w.page.close()


def test_a_finding_sits_on_its_message_with_the_api_text(browser, tmp_path, made):
    w = open_report(browser, tmp_path, made["proxy_forget"])
    orphan = w.page.locator("#h1-m1").inner_text()   # the second request: [1] is the orphan result
    assert "✗ orphan: no assistant tool_calls before it" in orphan
    assert "✗ error orphan-tool-message" in orphan
    assert "API says: Invalid parameter: messages with role 'tool' must be a response" in orphan
    assert "response-not-appended" not in orphan       # one defect, one finding
    assert w.page.locator("#summary, .summary").inner_text().count("orphan-tool-message") >= 1
    w.page.close()


def test_a_folded_result_expands_on_click(browser, tmp_path, made):
    w = open_report(browser, tmp_path, made["evil"])
    fold = w.page.locator("#h0-m3 details.fold")
    tail = fold.locator("pre.full")
    assert not tail.is_visible()
    more = fold.locator("summary").inner_text()
    assert "more characters hidden (click to expand)" in more and LONG_TAIL not in more
    fold.locator("summary").click()
    assert tail.is_visible() and LONG_TAIL in tail.inner_text()
    assert not fold.locator("pre.preview").is_visible()
    w.page.close()


def test_a_script_in_a_tool_result_is_shown_never_run(browser, tmp_path, made):
    w = open_report(browser, tmp_path, made["evil"])
    w.page.wait_for_timeout(300)
    assert SCRIPT_MARK not in w.page.title()
    assert w.page.title().startswith("agentdbg report")
    text = w.page.locator("#h0-m2").inner_text()
    assert "<script>document.title='PWNED-BY-TOOL-RESULT'" in text      # shown as text
    assert "<img src=x onerror=" in text
    assert w.page.locator("script, img, a[href^='javascript']").count() == 0
    assert w.others() == []                                            # no request at all
    w.page.close()


class Beacon:
    """A loopback HTTP server that counts the requests a page makes to it."""

    def __init__(self):
        self.hits: list[str] = []
        beacon = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                beacon.hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_the_content_security_policy_blocks_scripts_and_requests_even_if_escaping_failed(
        browser, tmp_path):
    """Defence in depth: markup that reached the page unescaped still cannot run or call out."""
    beacon = Beacon()
    try:
        raw = (f"<p id=x>body</p><script>document.title='{SCRIPT_MARK}'</script>"
               f"<img src=\"{beacon.url}/img\"><link rel=stylesheet href=\"{beacon.url}/css\">"
               f"<iframe src=\"{beacon.url}/frame\"></iframe><p style=\"color:red\" id=y>styled</p>")
        path = tmp_path / "raw.html"
        path.write_text(page("raw", raw), encoding="utf-8")
        w = Watched(browser, path)
        w.page.wait_for_timeout(500)
        assert w.page.title() == "raw"
        assert beacon.hits == []
        assert w.page.locator("#x").inner_text() == "body"
        # our own stylesheet is allowed by its hash, the inline style attribute is not
        assert w.page.eval_on_selector("body", "e => getComputedStyle(e).margin") == "0px"
        assert w.page.eval_on_selector("#y", "e => getComputedStyle(e).color") != "rgb(255, 0, 0)"
        w.page.close()
    finally:
        beacon.close()


@pytest.mark.parametrize("kind", ["run", "parallel", "limit", "fork", "replay", "step", "proxy",
                                  "proxy_forget", "evil"])
def test_every_kind_of_transcript_renders_without_errors(browser, tmp_path, made, kind):
    w = open_report(browser, tmp_path, made[kind], name=f"{kind}.html")
    body = w.page.locator("body").inner_text()
    assert "stopped:" in body
    assert w.console == [] and w.others() == []
    w.page.close()


def test_a_diff_shows_in_the_page(browser, tmp_path, made):
    w = open_report(browser, tmp_path, made["run"], diff_with=made["limit"])
    diff = w.page.locator("#diff").inner_text()
    assert "B − A: turns -2" in diff and "stop completed → max_turns" in diff
    w.page.close()


def cli(*args) -> str:
    from typer.testing import CliRunner

    from agentdbg.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exit_code in (0, 1), r.output
    return r.stdout


def test_the_cli_report_of_the_last_run(browser, tmp_path):
    """`agentdbg run`, then `agentdbg report last`: the page a user attaches, as they see it."""
    cli("run", ORDER_Q)
    page = tmp_path / "last.html"
    said = cli("report", "last", "-o", page)
    assert said.startswith(f"report: {page} (3 turn(s), 2 tool call(s), 0 finding(s), stop completed)")
    w = Watched(browser, page)
    assert "✓ answered at [2]" in w.page.locator("#h0-m1").inner_text()
    assert "✓ answers [3]" in w.page.locator("#h0-m4").inner_text()
    budget = w.page.locator("#budget")
    assert budget.is_visible()
    text = budget.inner_text()
    assert "Context budget of the last request (turn 3)" in text
    assert "[4] query_logistics result" in text and "[2] query_order result" in text
    assert "o200k_base tokenizer" in text
    assert w.page.locator("#budget meter").count() == 6
    assert w.console == [] and w.others() == []
    w.page.close()


def test_the_cli_report_with_a_diff(browser, tmp_path, made):
    page = tmp_path / "diff.html"
    cli("report", made["fork"], "--diff", made["run"], "-o", page)
    w = Watched(browser, page)
    diff = w.page.locator("#diff").inner_text()
    assert "A is a fork of B at message 2" in diff
    w.page.close()


def test_screenshot_of_the_sample_run(browser, tmp_path, made):
    """The sample run's report (`agentdbg report` of `agentdbg run "订单 ORD-2026-001 到哪里了?"`)
    as a picture. The README's docs/report.png is this picture, made with Debian's
    fonts-noto-cjk installed so the Chinese shows:

        AGENTDBG_REPORT_SCREENSHOT=docs/report.png python -m pytest tests/report -k screenshot
        optipng -o5 docs/report.png        # lossless, to about 170 KB
    """
    import os

    page = tmp_path / "order.html"
    cli("report", made["run"], "-o", page)
    w = Watched(browser, page)
    png = tmp_path / "report.png"
    w.page.screenshot(path=str(png), full_page=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    keep = os.environ.get("AGENTDBG_REPORT_SCREENSHOT")
    if keep:
        shutil.copyfile(png, keep)
    w.page.close()
