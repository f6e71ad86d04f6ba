"""`agentdbg report --lang zh --handout`: a lesson's recording as a handout, a page per phase
(narration, the messages, what changed) and the lesson's exercises, printed one phase per page
in real headless Chromium."""

from __future__ import annotations

import re

import provision
import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LESSON = """\
title: 订单在哪里
question: 订单 ORD-2026-001 到哪里了?
options: {lang: zh, explain: true}
steps:
  - next
  - next
  - drop 1
  - next
  - send
exercises:
  - 为什么 drop 1 之后 API 返回 400？
  - tool_call_id 起什么作用？
"""


def handout(tmp_path, *extra: str):
    lesson = tmp_path / "lesson.yaml"
    lesson.write_text(LESSON, encoding="utf-8")
    rec = tmp_path / "lesson.jsonl"
    r = CliRunner().invoke(app, ["run", "--lesson", str(lesson), "--save", str(rec)], input="")
    assert r.exit_code == 7, r.output        # the lesson ends on the API's 400
    out = tmp_path / "handout.html"
    r = CliRunner().invoke(app, ["report", str(rec), "--handout", "--lesson", str(lesson),
                                 "-o", str(out), *extra])
    assert r.exit_code == 0, r.output
    return out


def test_a_handout_has_a_section_per_phase_and_the_exercises(tmp_path):
    text = handout(tmp_path, "--lang", "zh").read_text(encoding="utf-8")
    assert '<html lang="zh">' in text and "<h1>订单在哪里</h1>" in text
    titles = re.findall(r'<section class="phase" id="phase-\d+"><h2>([^<]*)</h2>', text)
    assert titles == ["第 1 步：提问", "第 2 步：模型回答（第 1 轮）", "第 3 步：应用执行 1 个调用",
                      "第 4 步：你删除了消息 [1]", "第 5 步：请求被拦下（未发送）",
                      "第 6 步：你发送了一个被检查器拦下的请求",
                      "第 7 步：API 拒绝了这个请求（HTTP 400），循环停止"]
    drop = text.split('id="phase-4"')[1].split("</section>")[0]
    assert "你删除了第 1 条消息" in drop                            # narration of what happened
    assert "消息 1–2 被截去或替换了；新增：消息 1<" in drop           # what changed (not 1–1)
    assert drop.count('class="msg') == 2 and "← call_o1" in drop     # the messages then
    # the blocked request is a phase of its own: the checker's finding, the API's words,
    # "not sent" and nothing changed
    blocked = text.split('id="phase-5"')[1].split("</section>")[0]
    assert "✗ 错误 orphan-tool-message" in blocked and "API 的原话：Invalid parameter" in blocked
    assert "未发送：检查器发现历史违反了 API 强制执行的规则" in blocked
    assert "消息没有变化" in blocked and blocked.count('class="msg') == 2
    assert "API 拒绝了这个请求（HTTP 400）" in text.split('id="phase-7"')[1]
    assert "<li>为什么 drop 1 之后 API 返回 400？</li>" in text and "<h2>练习</h2>" in text


def test_lesson_goes_with_handout(tmp_path):
    r = CliRunner().invoke(app, ["report", "last", "--lesson", str(tmp_path / "x.yaml")])
    assert r.exit_code == 2 and "--lesson goes with --handout" in r.output


@pytest.mark.browser
@pytest.mark.slow
def test_the_handout_prints_one_phase_per_page(tmp_path):
    from playwright.sync_api import sync_playwright

    out = handout(tmp_path, "--lang", "zh")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=provision.chromium_path(), args=FLAGS)
        page = browser.new_page()
        page.goto(out.resolve().as_uri())
        sections = page.locator("section.phase").count()
        pdf = page.pdf(format="A4")
        browser.close()
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    assert sections == 8 and pages == sections     # seven phases and the exercises, a page each


def test_a_request_the_proxy_blocked_is_a_phase_of_its_own(tmp_path):
    """A proxy recording (--block-invalid answered the app's broken request with a 400): the
    blocked request is the handout's last phase, with the checker's finding and the API's words."""
    from support import ROOT

    out = tmp_path / "handout.html"
    r = CliRunner().invoke(app, ["report", str(ROOT / "tests" / "transcripts_v1" / "proxy-chat-blocked.jsonl"),
                                 "--handout", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    titles = re.findall(r'<section class="phase" id="phase-\d+"><h2>([^<]*)</h2>', text)
    assert titles == ["Phase 1: The question", "Phase 2: The model answers (turn 1)",
                      "Phase 3: The request is blocked (not sent)"]
    blocked = text.split('id="phase-3"')[1]
    assert "✗ error missing-tool-response" in blocked and "API says: An assistant message" in blocked
    assert "Not sent: the checker found" in blocked
