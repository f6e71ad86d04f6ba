"""The live page in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright),
fed by a real `agentdbg proxy --live` in front of a real `agentdbg serve`: a request shows up
within a second of the proxy relaying it, with its findings, folds and request diff; nothing
is reachable without the token; a recorded <script> stays text. Then `agentdbg ui`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from .helpers import EXAMPLES, QUESTION, Serve, agentdbg, clean_env

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INJECTED = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"
TOOLS = [{"type": "function", "function": {"name": "lookup_weather", "description": "天气",
                                           "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the live view's tests need a real browser", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class LiveProxy:
    """`agentdbg proxy --upstream SERVE --live --port 0` as a real process."""

    def __init__(self, tmp: Path, upstream: str):
        self.log = tmp / "proxy.log"
        self.fh = open(self.log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentdbg", "proxy", "--upstream", upstream, "--live",
             "--port", "0", "--save", str(tmp / "saved")],
            stdout=self.fh, stderr=subprocess.STDOUT, env=clean_env(COLUMNS="120"))
        deadline = time.time() + 30
        while time.time() < deadline:
            text = self.log.read_text(encoding="utf-8")
            live = re.search(r"live view: (http://\S+/)\n", text)
            if live:
                self.url = re.search(r"agentdbg proxy: (http://\S+/v1) ", text).group(1)
                self.live = live.group(1)
                return
            assert self.proc.poll() is None, text
            time.sleep(0.05)
        raise AssertionError(self.log.read_text())

    def ask(self, messages: list, **extra) -> dict:
        body = {"model": "demo", "messages": messages, **extra}
        req = urllib.request.Request(f"{self.url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json",
                                              "authorization": "Bearer sk-live-test-key-0000"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)["choices"][0]["message"]

    def stop(self) -> str:
        self.proc.send_signal(2)
        self.proc.wait(30)
        self.fh.close()
        return self.log.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("live")
    serve = Serve(tmp / "serve.log", "--offline", "--lenient")   # answers broken loops too
    proxy = LiveProxy(tmp, serve.url)
    yield proxy
    out = proxy.stop()
    serve.stop()
    assert "sk-live-test-key-0000" not in out


def open_live(browser, url: str):
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.requested = []
    page.on("request", lambda r: page.requested.append(r.url))
    response = page.goto(url)
    assert response.status == 200
    page.wait_for_selector("#live-status.ok", timeout=10_000)    # the event stream is open
    return page


def shown(page, text: str, timeout: float = 10_000) -> float:
    """Wait until the run's sections show ``text``; returns when (time.monotonic)."""
    page.wait_for_function("(t) => (document.getElementById('convs') || document.body)"
                           ".innerText.includes(t)", arg=text, polling=25, timeout=timeout)
    return time.monotonic()


def test_a_relayed_request_shows_within_a_second_with_its_diff(browser, live):
    page = open_live(browser, live.live)
    mark = f"live-{uuid.uuid4().hex[:8]}"
    first = [{"role": "user", "content": f"{mark} 天气怎么样?"}]
    reply = live.ask(first, tools=TOOLS)
    relayed = time.monotonic()
    seen = shown(page, mark)
    assert seen - relayed <= 1.0, f"shown {seen - relayed:.2f} s after the proxy relayed it"
    second = [*first, reply, {"role": "user", "content": f"{mark} 明天呢?"}]
    live.ask(second, tools=TOOLS, temperature=0.5)
    relayed = time.monotonic()
    seen = shown(page, f"{mark} 明天呢?")
    assert seen - relayed <= 1.0
    section = page.locator("article.conv", has_text=mark)
    diff = section.locator(".rdiff").last.inner_text()
    assert "since request 1:" in diff and "+ [2] user" in diff
    assert "temperature: (absent) → 0.5" in diff
    assert "+ [1] assistant" in diff
    page.close()


def test_a_finding_is_drawn_on_its_message(browser, live):
    page = open_live(browser, live.live)
    mark = f"orphan-{uuid.uuid4().hex[:8]}"
    live.ask([{"role": "user", "content": mark},
              {"role": "tool", "tool_call_id": "call_gone", "content": "{}"}])
    shown(page, mark)
    section = page.locator("article.conv", has_text=mark)
    finding = section.locator(".finding.error").first
    assert "orphan-tool-message" in finding.inner_text()
    # the run's summary follows its sections (fetched after them)
    page.wait_for_function("() => document.getElementById('run-summary').innerText"
                           ".includes('orphan-tool-message')", timeout=5000)
    page.close()


def test_a_fold_expands_and_a_recorded_script_stays_text(browser, live):
    page = open_live(browser, live.live)
    mark = f"fold-{uuid.uuid4().hex[:8]}"
    tail = "END-OF-THE-LONG-MESSAGE"
    live.ask([{"role": "user", "content": f"{mark} {INJECTED} " + "长" * 900 + tail}])
    shown(page, mark)
    msg = page.locator("article.conv", has_text=mark).locator(".msg.role-user").first
    fold = msg.locator("details.fold")
    assert not fold.locator("pre.full").is_visible()
    fold.locator("summary").click()
    assert fold.locator("pre.full").is_visible() and tail in fold.locator("pre.full").inner_text()
    assert "<script>window.__pwned = 1</script>" in msg.inner_text()      # shown as text
    page.wait_for_timeout(300)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("main script, main img").count() == 0
    base = live.live.rstrip("/")
    assert all(u.startswith(base) for u in page.requested), page.requested
    page.close()


def test_keys_move_between_cards_and_search_finds_messages_and_tools(browser, live):
    page = open_live(browser, live.live)
    mark = f"keys-{uuid.uuid4().hex[:8]}"
    live.ask([{"role": "user", "content": mark}], tools=TOOLS)
    shown(page, mark)
    page.keyboard.press("j")
    page.keyboard.press("j")
    cards = page.locator("main .card")
    assert cards.nth(1).evaluate("e => e.classList.contains('focus')")
    page.keyboard.press("k")
    assert cards.nth(0).evaluate("e => e.classList.contains('focus')")
    page.keyboard.press("/")
    page.keyboard.type("lookup_weather")
    page.wait_for_function("() => /\\d+ match/.test(document.getElementById('search-count').innerText)")
    assert page.locator(".hit").count() >= 1
    page.keyboard.press("Enter")
    assert page.locator(".hit-current").count() == 1
    page.close()


def test_nothing_without_the_token(browser, live):
    page = browser.new_page()
    root = live.live.rsplit("/", 2)[0] + "/"
    assert page.goto(root).status == 403
    assert page.goto(root + "assets/live.js").status == 403
    assert "403 Forbidden" in page.content()
    page.close()
    req = urllib.request.Request(live.live, headers={"Host": "attacker.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert refused.value.code == 403


WAITING_APP = """
import json, os, sys, urllib.request
body = {"model": "demo", "messages": [{"role": "user", "content": sys.argv[1]}]}
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps(body).encode(), headers={"content-type": "application/json",
    "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
urllib.request.urlopen(req, timeout=60).read()
print("asked", flush=True)
sys.stdin.readline()                      # until the test has looked at the page
print("done", flush=True)
"""


def test_the_live_view_of_a_command_says_its_url_once_and_ends_with_it(browser, tmp_path):
    mark = f"cmd-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "proxy", "--offline", "--live",
                             "--save", str(tmp_path), "--", sys.executable, "-c", WAITING_APP, mark],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=clean_env())
    try:
        said = proc.stderr.readline().decode()
        url = re.fullmatch(r"agentdbg: live view: (http://127\.0\.0\.1:\d+/[\w-]{20,}/)\n", said)
        assert url, said
        assert proc.stdout.readline() == b"asked\n"
        page = open_live(browser, url.group(1))
        shown(page, mark)
        page.close()
        out, err = proc.communicate(b"\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out == b"done\n"
    assert url.group(1) not in err.decode()                   # said once
    [log] = tmp_path.glob("*.log")
    assert url.group(1).rsplit("/", 2)[1] not in log.read_text()   # the token is not logged
    with pytest.raises(urllib.error.URLError):                # the view ended with the command
        urllib.request.urlopen(url.group(1), timeout=5)


def test_ui_browses_the_runs_opens_one_and_diffs_two(browser, tmp_path):
    for flags in ([], ["--forget-assistant"]):
        agentdbg("proxy", "--offline", "--save", str(tmp_path), "--", sys.executable,
                 str(EXAMPLES / "agent_app.py"), QUESTION, *flags)
    log = tmp_path / "ui.log"
    with open(log, "w") as fh:
        ui = subprocess.Popen([sys.executable, "-m", "agentdbg", "ui", "--folder", str(tmp_path)],
                              stdout=fh, stderr=subprocess.STDOUT, env=clean_env())
    try:
        deadline = time.time() + 30
        while not re.search(r"agentdbg ui: (http://\S+/) ", log.read_text()):
            assert ui.poll() is None and time.time() < deadline, log.read_text()
            time.sleep(0.05)
        url = re.search(r"agentdbg ui: (http://\S+/) ", log.read_text()).group(1)
        page = browser.new_page()
        page.goto(url)
        assert page.locator("table.runs tr.run").count() == 2
        page.locator("button.pick[data-pick='a']").nth(0).click()
        page.locator("button.pick[data-pick='b']").nth(1).click()
        page.locator("#diff-link").click()
        page.wait_for_selector("#diff")
        assert "Diff" in page.locator("#diff").inner_text()
        page.go_back()
        page.locator("table.runs tr.run a").nth(0).click()
        page.wait_for_selector("article.conv")
        assert page.locator("article.conv .card.turn").count() >= 2
        page.close()
    finally:
        ui.send_signal(2)
        ui.wait(20)
    assert ui.returncode == 0
