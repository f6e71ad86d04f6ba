"""README.md and the documentation pages cannot drift from the program: their example blocks
are what their commands print now (``scripts/docs_examples.py`` regenerates them), the "Debug
your own app" recipe runs as written on a machine with no API key, and the site builds with
``mkdocs build --strict``."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("readme_examples", ROOT / "scripts" / "docs_examples.py")
readme = importlib.util.module_from_spec(_spec)
sys.modules["readme_examples"] = readme  # dataclasses look their module up
_spec.loader.exec_module(readme)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs bash and a POSIX pty")


def test_every_output_block_is_an_example_with_its_command():
    names = set()
    for page in readme.pages():
        text = page.read_text(encoding="utf-8")
        lines = text.split("\n")
        marked = {b.start - 1 for b in readme.blocks(text, str(page))}
        outputs = [i for i, line in enumerate(lines) if line.strip() == "```text"]
        # program output is never hand-written
        assert all(i in marked for i in outputs), (page, [lines[i - 1] for i in outputs if i not in marked])
        names |= {b.name for b in readme.blocks(text, str(page)) if b.kind == "example"}
    assert names == set(readme.EXAMPLES)


def test_the_pages_are_the_readme_and_the_site_without_the_drafts():
    pages = [str(p.relative_to(ROOT)) for p in readme.pages()]
    assert pages[0] == "README.md" and "docs/commands/run.md" in pages
    assert not [p for p in pages if p.startswith("docs/notes/")]


def test_the_readme_is_a_landing_page():
    text = readme.README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    assert "pip install -e . && agentdbg run" in text and "pip install -e '.[test]' && python -m pytest -q" in text
    for start in ("## Quick start 1", "## Quick start 2", "## Quick start 3"):
        assert start in text
    flat = " ".join(text.split())
    assert ("offline model** unless `--model` (or `AGENTDBG_MODEL`) names one — even when "
            "`OPENAI_API_KEY` is set") in flat


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "site" / "commands" / "init" / "index.html").read_text(encoding="utf-8")
    assert "wrote tools.yaml (1 tool(s): get_weather) and handlers.py" in page


@pytest.mark.slow
def test_readme_examples_are_what_the_commands_print():
    diff = readme.differences()
    assert not diff, "a page differs; run python scripts/docs_examples.py and read the diff\n" + diff


@pytest.mark.slow
def test_the_debug_your_own_app_recipe_runs_as_written():
    commands = readme.recipe_commands()
    assert any(c.startswith("python examples/agent_app.py") for c in commands)
    with readme.scratch() as runner:
        run = readme.run_recipe(runner)
        assert run.app.returncode == 0, run.app.stderr  # no "Missing credentials"
        assert "杭州转运中心已发出" in run.app.stdout
        serve, proxy = run.servers
        assert "agentdbg serve:" in serve
        assert "request 1 · conversation 1" in proxy and "request 3 · conversation 1" in proxy
        assert "error" not in proxy.split("agentdbg proxy:")[1]  # a correct loop: no findings
        saved = sorted((run.folder / "debug").glob("*.jsonl"))
        assert len(saved) == 1
        replay = runner.run(f"agentdbg replay {saved[0]}")
        assert replay.returncode == 0, replay.stdout + replay.stderr


@pytest.mark.slow
def test_the_one_line_per_client_recipe_runs_as_written():
    commands = readme.recipe_commands(readme.CLIENT_LINES)
    app = readme.one_line_app()
    # the coding agents' lines are run by tests/oneclick/test_coding_agents.py (pinned clients)
    agents = {c.split(" -- ", 1)[1] for c in commands if c != app}
    assert commands[0] == app and agents == {"claude", "codex", "gemini"}
    tested = (ROOT / "tests" / "oneclick" / "test_coding_agents.py").read_text(encoding="utf-8")
    for name in ("claude_code", "codex", "gemini_cli"):
        assert f"def test_{name}_completes_a_tool_turn_through_the_proxy(" in tested
    with readme.scratch() as runner:
        run = runner.run(app)
        assert run.returncode == 0, run.stderr                 # no key, no network
        assert "杭州转运中心已发出" in run.stdout and "agentdbg" not in run.stdout
        assert "3 requests in 1 conversation" in run.stderr and "findings: none" in run.stderr
        [saved] = (runner.folder / "home" / "runs").glob("proxy-*-conversation-1.jsonl")
        replay = runner.run(f"agentdbg replay {saved}")
        assert replay.returncode == 0, replay.stdout + replay.stderr


def test_normalising_keeps_everything_but_timings_paths_and_ports():
    text = "turn 1 · 59 tokens · 0.7 ms\ntranscript: /tmp/agentdbg-readme-x1/home/runs/a.jsonl\n" \
           "127.0.0.1:43121 call_o1 SF123456\nagentdbg proxy: python exited with status 0 after " \
           "5.2 s\n  log: ~/runs/proxy-20261201-192949-dd98.log"
    assert readme.normalise(text) == ("turn 1 · 59 tokens · <t> ms\ntranscript: <tmp>\n"
                                      "127.0.0.1:<port> call_o1 SF123456\nagentdbg proxy: python "
                                      "exited with status 0 after <t> s\n"
                                      "  log: ~/runs/proxy-<stamp>-<id>.log")


def test_normalising_what_varies_from_day_to_day_keeps_the_rest():
    text = ('20261130-075849-订单 · 2026-11-30 07:58:49 · trace 9cb1797915199165e9147ba3fc7cd4e4\n'
            '"datetime":\n  "2026-11-30T16:56:15+09:00", "day_of_week": "Wednesday", "is_dst": true,'
            ' "time_difference": "-5.0h" · →     1.130s\n'
            '"updated_at": "2026-09-18T09:20:00+08:00", "status": "in_transit", SF123456')
    assert readme.normalise(text) == (
        '<stamp>-订单 · <created> · trace <trace-id>\n'
        '"datetime":\n  "<datetime>", "day_of_week": "<weekday>", "is_dst": <dst>,'
        ' "time_difference": "<hours>" · →     <t>s\n'
        '"updated_at": "2026-09-18T09:20:00+08:00", "status": "in_transit", SF123456')


def test_only_the_mcp_examples_are_compared_without_their_line_breaks():
    def readme_with(name: str, body: str) -> str:
        return f"intro\n<!-- example: {name} -->\n```text\n{body}\n```\nafter"

    wrapped, rewrapped = "a b c\nd e", "a b\nc d e"
    assert readme.comparable(readme_with("mcp-run", wrapped)) == \
        readme.comparable(readme_with("mcp-run", rewrapped))
    assert readme.comparable(readme_with("run-turn", wrapped)) != \
        readme.comparable(readme_with("run-turn", rewrapped))
    assert set(readme.REFLOWED) <= set(readme.EXAMPLES)


def test_the_script_checks_from_the_command_line():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "docs_examples.py"), "--check",
                           "check-missing-assistant"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"match what the commands print", done.stdout)


def test_the_handout_example_is_made_from_the_lesson_the_page_shows():
    """docs/teaching.md's handout example is what the lesson.yaml shown above it gives when run
    (it was made from another lesson: 2 exercises, 7 phases, no rewind), and is
    what the commands print now."""
    import yaml

    page = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    named = {b.name: b for b in readme.blocks(page, "docs/teaching.md")}
    lesson = yaml.safe_load(named["lesson-yaml"].body)
    shown = named["handout"].body
    assert f"（{len(lesson['exercises'])} 道练习）" in shown, shown
    for step in lesson["steps"]:
        command = step if isinstance(step, str) else step["do"]
        if command.startswith("rewind "):
            assert f"你回退到了消息 [{command.split()[1]}]" in shown, shown
    assert readme.differences(None, ["handout"]) == ""
