"""A lesson file written for a Chinese class (``options: {lang: zh}``) says its own mistakes in
Chinese, as the run it prepares would speak; --lang or AGENTDBG_LANG still choose. The lesson's
report says its model error's status the Chinese way too."""

from typer.testing import CliRunner

from agentdbg.cli import app

BAD_OPTION = "question: 订单 ORD-2026-001 到哪里了?\noptions: {lang: zh, colour: true}\n"
BAD_TOOL = "question: 订单 ORD-2026-001 到哪里了?\noptions: {lang: zh}\nbreakpoints:\n  - tool: nope\n"


def run(tmp_path, text, *extra, env=None):
    lesson = tmp_path / "lesson.yaml"
    lesson.write_text(text, encoding="utf-8")
    return CliRunner().invoke(app, ["run", "--lesson", str(lesson), *extra], env=env or {})


def test_a_chinese_lessons_mistakes_are_said_in_chinese(tmp_path):
    said = run(tmp_path, BAD_OPTION)
    assert said.exit_code == 2
    assert said.output.strip().endswith("lesson.yaml:2：options：'colour' 不是课程选项；可用的有 lang, "
                                        "explain, present, profile, approve, max_turns, system, full")
    said = run(tmp_path, BAD_TOOL)
    assert said.exit_code == 2 and "lesson.yaml:4：breakpoints：没有名为 'nope' 的工具" in said.output


def test_the_command_lines_language_still_chooses(tmp_path):
    said = run(tmp_path, BAD_OPTION, "--lang", "en")
    assert said.output.strip().endswith("lesson.yaml:2: options: 'colour' is not a lesson option; "
                                        "one of lang, explain, present, profile, approve, "
                                        "max_turns, system, full")
    said = run(tmp_path, BAD_TOOL, env={"AGENTDBG_LANG": "en"})
    assert "lesson.yaml:4: breakpoints: no tool 'nope'; the tools are " in said.output


def test_the_reports_model_error_says_its_status_in_chinese(tmp_path):
    rec, page = tmp_path / "rec.jsonl", tmp_path / "report.html"
    r = CliRunner().invoke(app, ["run", "订单 ORD-2026-001 到哪里了?", "--step", "--save", str(rec)],
                           input="n\nn\ndrop 1\nn\nsend\nquit\n")
    assert r.exit_code == 7, r.output
    assert CliRunner().invoke(app, ["report", str(rec), "--lang", "zh", "-o", str(page)]).exit_code == 0
    assert "模型出错（HTTP 400）：HTTP 400（离线模型像" in page.read_text("utf-8")
    assert CliRunner().invoke(app, ["report", str(rec), "-o", str(page)]).exit_code == 0
    assert "model error (HTTP 400): HTTP 400 (the offline model answers" in page.read_text("utf-8")
