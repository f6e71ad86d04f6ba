"""`--lang zh` (and AGENTDBG_LANG=zh) beyond step mode: agentdbg's own one-line errors and
warnings, --help, the tools lint, `check --rules`, `diff` and the report's --diff section. The
`agentdbg: error:` / `agentdbg: warning:` prefixes stay English (scripts grep for them); --json
stays English."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()


def invoke(*args: str, **env: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "80", **env})


# -- errors and warnings ---------------------------------------------------------------------

def test_a_missing_tools_file_is_one_chinese_line_after_an_english_prefix(tmp_path):
    missing = tmp_path / "x.yaml"
    r = invoke("run", "--lang", "zh", "-t", str(missing), "你好")
    assert r.exit_code == 2
    assert r.stderr == f"agentdbg: error: {missing}：工具文件不存在\n"
    r = invoke("run", "-t", str(missing), "你好", AGENTDBG_LANG="zh")     # the variable too
    assert r.stderr == f"agentdbg: error: {missing}：工具文件不存在\n"
    r = invoke("run", "-t", str(missing), "hi")                         # English as before
    assert r.stderr == f"agentdbg: error: {missing}: no such tools file\n"


def test_bad_files_are_named_in_chinese(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    r = invoke("report", "--lang", "zh", str(bad))
    assert r.exit_code == 2
    assert r.stderr == f"agentdbg: error: {bad}:1：每一行都必须是带 'type' 的 JSON 对象\n"
    r = invoke("replay", "--lang", "zh", str(bad))
    assert r.exit_code == 2
    assert r.stderr == (f"agentdbg: error: {bad}：不是 agentdbg 的记录文件；普通的 messages 数组可以用 "
                        "'replay FILE --step' 作为起点打开\n")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user", "content": "hi"')
    r = invoke("check", "--lang", "zh", str(broken))
    assert r.exit_code == 2 and r.stderr.startswith(f"agentdbg: error: {broken}:1:")
    assert "：JSON 无效：" in r.stderr            # the parser's own words follow, verbatim
    odd = tmp_path / "odd.json"
    odd.write_text('{"x": 1}')
    r = invoke("check", "--lang", "zh", str(odd))
    assert r.stderr == (f"agentdbg: error: {odd}：应当是 messages 数组、带 'messages' 的请求体，"
                        "或 agentdbg 保存的运行\n")
    tools = tmp_path / "tools.yaml"
    tools.write_text("tools: [\n")
    r = invoke("tools", "--lang", "zh", str(tools))
    assert r.exit_code == 2 and f"agentdbg: error: {tools}:2:1：YAML 无效：" in r.stderr
    r = invoke("report", "--lang", "zh", str(tmp_path / "nothing-here"))
    assert r.stderr.startswith(f"agentdbg: error: {tmp_path / 'nothing-here'}：没有这个文件，")


def test_the_trust_warning_is_in_the_chosen_language(tmp_path, monkeypatch):
    """The warning is printed before the run starts: the language is chosen before that."""
    (tmp_path / "handlers.py").write_text("def probe():\n    return {'ok': 1}\n")
    (tmp_path / "tools.yaml").write_text(json.dumps({"version": 1, "tools": [
        {"name": "probe", "description": "Probe. Use when asked.",
         "handler": {"python": "handlers:probe"}}]}))
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", "--lang", "zh", "你好"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("agentdbg: warning: tools.yaml 未被信任：")
    assert line.endswith("要信任它：agentdbg trust tools.yaml")
    warned = runner.invoke(app, ["run", "--lang", "zh", "--explain", "你好"]).stderr
    assert "agentdbg: warning: --explain 是给单步模式配讲解的；没有 --step 时它不起作用" in warned


# -- --help ----------------------------------------------------------------------------------

def test_help_in_chinese_from_the_option_or_the_variable():
    r = invoke("run", "--lang", "zh", "--help")
    assert r.exit_code == 0
    out = r.stdout
    assert out.startswith("用法：agentdbg run [选项] [问题]")
    assert "针对给出的问题运行工具循环，并显示每一轮完整的 messages 数组。" in out and "  问题  用户的问题" in out
    assert "参数：" in out and "选项：" in out and "显示本帮助并退出。" in out
    assert "[默认：8；x>=1]" in out and "[环境变量：AGENTDBG_TOOLS]" in out
    assert "退出状态：0 completed（完成）" in out
    for line in out.splitlines():             # folded between characters, counted in cells
        assert cell_len(line) <= 80, line
    root = invoke("--help", AGENTDBG_LANG="zh").stdout
    assert "命令：" in root and "  check       按真实 API 强制执行的协议规则检查" in root
    assert invoke("run", "--help").stdout.startswith("Usage: agentdbg run")   # English stays


def test_chinese_help_loads_no_heavy_module():
    code = ("import sys\nfrom agentdbg.cli import app\n"
            "try:\n    app(['run', '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('openai', 'jsonschema', 'prompt_toolkit', 'httpx', 'httpx2', "
            "'pydantic', 'yaml') if m in sys.modules]\nprint('HEAVY', heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "AGENTDBG_LANG": "zh"}).stdout
    assert "用法：" in out and "针对给出的问题运行工具循环" in out and "HEAVY []" in out


# -- the tools lint, check --rules -----------------------------------------------------------

def test_the_tools_lint_speaks_chinese_and_its_json_stays_english(tmp_path):
    tools = tmp_path / "tools.yaml"
    tools.write_text(json.dumps({"version": 1, "tools": [
        {"name": "get_status", "description": "Returns the status.", "side_effects": True,
         "parameters": {"type": "object", "properties": {"status": {"type": "string"}}},
         "handler": {"fixture": {"ok": 1}}}]}))
    r = invoke("tools", "--lang", "zh", str(tools), COLUMNS="300")
    out = r.stdout
    assert "! 警告 description-without-when（工具 get_status）：description 只说了工具是什么，没说什么时候用它" in out
    assert "! 警告 parameter-undescribed（工具 get_status）：参数 'status' 没有 description" in out
    assert "! 警告 side-effects-without-approval（工具 get_status）：设置了 side_effects: true 却没有 approval: always" in out
    assert "0 个错误，5 个警告" in out
    doc = json.loads(invoke("tools", "--lang", "zh", str(tools), "--json").stdout)
    assert {f["message"] for f in doc["findings"]} >= {"parameter 'status' has no description"}


def test_check_rules_and_profiles_in_chinese_and_english_unchanged():
    zh = invoke("check", "--lang", "zh", "--rules", COLUMNS="200").stdout
    assert "orphan-tool-message  chat E · responses E · anthropic E · gemini E" in zh
    assert "    tool 消息不在工具块（tool_calls 与其结果）之内" in zh
    assert "arguments-invalid-json  chat W (在 qwen, vllm 下为 E)" in zh
    assert zh.rstrip().endswith("E：错误（API 会拒绝）· W：警告 · P：只在所列的 profile 下是错误 · —：不适用")
    en = invoke("check", "--rules", COLUMNS="200").stdout
    assert "    tool message not inside a tool block" in en
    assert "arguments-invalid-json  chat W (E under qwen, vllm)" in en
    profiles = invoke("check", "--lang", "zh", "--profiles", COLUMNS="200").stdout
    assert profiles.startswith("服务商 profile（--profile NAME；默认 openai）：")
    assert "mistral                   Mistral：工具调用的 id 必须正好是 9 个字母或数字" in profiles


# -- diff ------------------------------------------------------------------------------------

@pytest.fixture
def two_runs(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert invoke("run", "订单 ORD-2026-001 到哪里了?", "--save", str(a)).exit_code == 0
    assert invoke("run", "北京和上海今天哪个更热?", "--save", str(b)).exit_code == 0
    return a, b


def test_diff_in_chinese_and_its_json_in_english(two_runs, tmp_path):
    a, b = two_runs
    r = invoke("diff", "--lang", "zh", str(a), str(b), COLUMNS="300")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"A：{a} — offline · 3 轮 · 2 次工具调用 · ") and "结束：已完成" in lines[0]
    assert "第一处分歧：第 1 轮：B 没有调用 query_order" in lines
    assert "~ 第 1 轮：" in lines
    assert lines[-1].startswith("B − A：轮数 -1 · 工具调用 0 · token ")
    assert lines[-1].endswith("结束：已完成（两者相同）")
    doc = json.loads(invoke("diff", "--lang", "zh", str(a), str(b), "--json").stdout)
    assert doc["first_divergence"]["what"] == "turn 1: B does not call query_order"
    en = invoke("diff", str(a), str(b), COLUMNS="300").stdout
    assert "first divergence: turn 1: B does not call query_order" in en


def test_the_reports_diff_section_in_chinese(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "a.html"
    r = invoke("report", str(a), "--diff", str(b), "--lang", "zh", "-o", str(out))
    assert r.exit_code == 0, r.output
    section = out.read_text(encoding="utf-8").split('<section id="diff">')[1]
    assert "<h2>对比</h2>" in section and "第一处分歧：第 1 轮：B 没有调用 query_order" in section


# -- click's own usage errors, and --lang before the command ----------------------------------

def test_clicks_usage_errors_in_chinese_and_english_are_agentdbgs_one_line_errors():
    """Click's usage errors end on the line every agentdbg error is (``agentdbg: error: …``, not
    click's ``Error:``), in English too; the usage line above is all Chinese ([选项] [问题])."""
    r = invoke("run", "--lang", "zh", "--max-turns", "abc", "x")
    assert r.exit_code == 2
    assert r.stderr.splitlines() == ["用法：agentdbg run [选项] [问题]", "运行 'agentdbg run --help' 查看帮助。",
                                     "", "agentdbg: error: '--max-turns' 的值无效：'abc' 不是有效的整数。"]
    assert invoke("--lang", "zh", "--help").stdout.startswith("用法：agentdbg [选项] 命令 [参数]...")
    said = {args: invoke(*args, AGENTDBG_LANG="zh").stderr.splitlines()[-1] for args in (
        ("run", "--ste", "x"), ("diff", "a"), ("rnu",), ("run", "--approve", "maybe", "x"),
        ("run", "x", "y"), ("run", "--save"), ("run", "--lang", "fr", "x"))}
    assert said == {
        ("run", "--ste", "x"): "agentdbg: error: 没有这个选项：--ste（你是想用：--save, --step, --system？）",
        ("diff", "a"): "agentdbg: error: 缺少参数 'b'。",
        ("rnu",): "agentdbg: error: 没有命令 'rnu'。你是想用 'run' 吗？",
        ("run", "--approve", "maybe", "x"): "agentdbg: error: '--approve' 的值无效：'maybe' 不是 'all', 'none' 之一。",
        ("run", "x", "y"): "agentdbg: error: 多出了参数（y）",
        ("run", "--save"): "agentdbg: error: 选项 '--save' 需要一个值。",
        # a --lang with no catalog is said wrong in the variable's language
        ("run", "--lang", "fr", "x"): "agentdbg: error: '--lang'（环境变量 'AGENTDBG_LANG'）的值无效：'fr' 不是 'en', 'zh' 之一。",
    }
    en = invoke("run", "--max-turns", "abc", "x").stderr
    assert en.endswith("\nagentdbg: error: Invalid value for '--max-turns': 'abc' is not a valid int "
                       "range.\n")
    assert "Try 'agentdbg run --help' for help." in en and "\nError:" not in en
    assert invoke("rnu").stderr.endswith("\nagentdbg: error: No such command 'rnu'. Did you mean 'run'?\n")
    assert invoke("run", "--lang", "zh").stderr == "agentdbg: error: 需要一个问题（或者一个写有问题的 --lesson 课程文件）\n"


def test_lang_before_the_command_is_the_commands_language(tmp_path):
    """`agentdbg --lang zh run …` (as the docs write it) speaks Chinese, though run's own --lang
    is not typed; a --lang typed after the command still wins, and so does a typed one over
    the variable."""
    assert "模型：离线模型" in invoke("--lang", "zh", "run", "你好").stdout
    assert "模型：离线模型" in invoke("--lang", "zh", "run", "你好", AGENTDBG_LANG="en").stdout
    assert "model: offline" in invoke("--lang", "zh", "run", "--lang", "en", "hi").stdout
    assert "model: offline" in invoke("run", "--lang", "en", "hi", AGENTDBG_LANG="zh").stdout
    assert "tool 消息不在工具块" in invoke("--lang", "zh", "check", "--rules", COLUMNS="200").stdout


def test_a_proxy_recordings_handout_in_chinese_says_truly_what_came_next(tmp_path):
    """The blocked request of a proxy recording: its finding (a template quoting a JSON message
    in braces) read back in Chinese, and the last sentence says the recording ends as the
    proxy recorded it, not that the model answered (it saw nothing)."""
    import html
    import re

    from support import ROOT

    out = tmp_path / "handout.html"
    src = ROOT / "tests" / "transcripts_v1" / "proxy-chat-blocked.jsonl"
    assert invoke("report", str(src), "--handout", "--lang", "zh", "-o", str(out)).exit_code == 0
    blocked = html.unescape(re.sub(r"<[^>]+>", " ", out.read_text("utf-8").split('id="phase-3"')[1]))
    assert "调用 'call_o1' 后面没有 tool 消息；请在下一条消息之前追加 {\"role\": \"tool\"" in blocked
    assert "记录到此结束：应用停在了模型的工具调用上，没有把调用结果发回去" in blocked
    assert "模型的回复里没有 tool_calls" not in blocked
    assert invoke("report", str(src), "--handout", "-o", str(out)).exit_code == 0
    assert "The recording ends here: the app ended on the model&#x27;s tool call" in out.read_text("utf-8")


BROKEN_TOOLS = ("version: 1\ntools:\n  - name: 'bad name!'\n    description: x\n    handler: {fixture: {}}\n"
                "  - name: a\n    description: Use when asked.\n    parameters: {type: object, properties: 3}\n"
                "    handler: {fixture: {}}\n  - name: a\n    description: dup\n    handler: {fixture: {}}\n")


def test_what_the_tools_file_loader_refuses_is_said_in_chinese(tmp_path):
    """The loader's one-line error (run) and the lint's findings for it (tools): Chinese after
    the position; the JSON Schema validator's words and --json stay English; a schema whose
    properties is not a mapping is a finding, not an internal error."""
    tools = tmp_path / "tools.yaml"
    tools.write_text(BROKEN_TOOLS)
    r = invoke("run", "--lang", "zh", "-t", str(tools), "你好")
    assert r.stderr == f"agentdbg: error: {tools}:3:11：工具 'bad name!'：字段 'name' 必须匹配 ^[a-zA-Z0-9_-]{{1,64}}$\n"
    out = invoke("tools", "--lang", "zh", str(tools), COLUMNS="300").stdout
    assert "✗ 错误 duplicate-tool-name：工具 'a'：名称重复（第一次定义在 tools[1]）" in out
    assert ("✗ 错误 parameters-schema-invalid：工具 'a'：字段 'parameters' 在 properties 处不是有效的 "
            "JSON Schema：3 is not of type 'object'") in out
    doc = json.loads(invoke("tools", "--lang", "zh", str(tools), "--json").stdout)
    assert "tool 'a': duplicate name (first defined as tools[1])" in {f["message"] for f in doc["findings"]}
    tools.write_text("version: 1\ntools:\n  - name: a\n    description: x\n    approval: sometimes\n"
                     "    handler: {fixture: {}}\n")
    assert invoke("run", "--lang", "zh", "-t", str(tools), "你好").stderr.endswith(
        "：工具 'a'：字段 'approval' 必须是 'never' 或 'always'，却是 'sometimes'\n")
    assert invoke("run", "-t", str(tools), "hi").stderr.endswith(
        ": tool 'a': field 'approval' must be 'never' or 'always', got 'sometimes'\n")


def test_a_real_endpoint_that_is_not_there_is_said_in_chinese(tmp_path):
    """The header's model line and the stop line when the endpoint refuses the connection (a
    real connect to a closed port): agentdbg's words in Chinese, the system's reason verbatim."""
    import socket

    with socket.socket() as s:            # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    r = invoke("run", "--lang", "zh", "--model", "gpt-x", "--base-url", url, "--api-key", "k",
               "你好", COLUMNS="200")
    assert r.exit_code == 7
    assert f"模型：gpt-x，地址 {url}" in r.stdout
    assert f"停止：模型出错 — {url}/chat/completions：连接不上（" in r.stdout
    assert "）；服务器在运行吗？--base-url 对吗？" in r.stdout
    en = invoke("run", "--model", "gpt-x", "--base-url", url, "--api-key", "k", "hi", COLUMNS="200")
    assert f"model: gpt-x at {url}" in en.stdout and "is the server running and is --base-url right?" in en.stdout


def test_every_command_takes_lang_after_its_name(tmp_path):
    """`agentdbg proxy --lang zh` was refused ("No such option: --lang") by every command
    without its own --lang (proxy, serve, collect, import, export, init, trust, runs, ui,
    completion, version): each now takes it, and speaks the language it names."""
    import typer.main

    group = typer.main.get_command(app)
    lacking = [name for name, cmd in group.commands.items()
               if not any("--lang" in getattr(p, "opts", ()) for p in cmd.params)]
    assert lacking == []
    r = invoke("proxy", "--lang", "zh")
    assert r.exit_code == 2 and r.stderr.startswith("agentdbg: error: 请说明代理后面是什么：")
    r = invoke("import", "--lang", "zh", str(tmp_path / "none"))
    assert r.exit_code == 2 and "没有这个文件" in r.stderr, r.stderr
    assert invoke("runs", "--lang", "zh", "--json").exit_code == 0
    assert invoke("version", "--lang", "zh").stdout.startswith("agentdbg ")
    assert "--lang" in invoke("serve", "--help").stdout
    r = invoke("proxy", "--lang", "en")
    assert r.stderr.startswith("agentdbg: error: say what is behind the proxy:")


def test_a_lang_among_the_proxied_command_s_arguments_is_the_command_s():
    """`agentdbg proxy … python app.py --lang zh`: the `--lang zh` is the app's (proxy's options
    end at the command's name), so agentdbg keeps its own language; one before the command's
    name is agentdbg's."""
    both = ("--offline", "--upstream", "http://127.0.0.1:9")
    r = invoke("proxy", *both, "--port", "0", "python", "app.py", "--lang", "zh")
    assert r.exit_code == 2 and r.stderr.startswith("agentdbg: error: choose one of"), r.stderr
    r = invoke("proxy", "--lang", "zh", *both, "python", "app.py", "--lang", "en")
    assert r.exit_code == 2 and r.stderr.startswith("agentdbg: error: 只能选一个"), r.stderr
    r = invoke("proxy", *both, "--", "python", "app.py", "--lang", "zh")
    assert r.stderr.startswith("agentdbg: error: choose one of"), r.stderr


def test_the_redact_error_and_an_empty_transcript_in_runs_in_chinese(tmp_path, monkeypatch):
    """The --redact regex error names the pattern and quotes Python's words verbatim; `runs`
    says in Chinese why a file cannot be read (--json keeps the English)."""
    r = invoke("run", "--lang", "zh", "--redact", "(", "你好")
    assert r.exit_code == 2
    assert r.stderr == ("agentdbg: error: --redact '(' 不是有效的正则表达式：missing ), "
                        "unterminated subpattern at position 0\n")
    assert invoke("run", "--redact", "(", "hi").stderr.startswith(
        "agentdbg: error: --redact '(' is not a valid regular expression: missing ),")
    monkeypatch.setenv("AGENTDBG_HOME", str(tmp_path))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "empty.jsonl").write_bytes(b"")
    (tmp_path / "runs" / "odd.jsonl").write_text("{}\n")
    out = invoke("runs", "--lang", "zh", COLUMNS="200").stdout
    assert "无法读取            记录文件是空的" in out
    assert "第 1 行：每一行都必须是带 'type' 的 JSON 对象" in out
    doc = json.loads(invoke("runs", "--lang", "zh", "--json").stdout)
    assert {r["error"] for r in doc["runs"]} == {
        "empty transcript", "line 1: each line must be a JSON object with a 'type'"}
    assert "shown_error" not in doc["runs"][0]


def test_the_other_formats_views_say_their_notes_in_chinese(tmp_path):
    """The Anthropic, Gemini and Responses views' own notes (an empty content, an empty text
    block, an input that is not an object, no parts, a result answering a stored call, the
    pairing's note about it) through the catalog; English unchanged."""
    anthropic = tmp_path / "anthropic.json"
    anthropic.write_text(json.dumps({"model": "claude-x", "max_tokens": 9, "messages": [
        {"role": "user", "content": []},
        {"role": "assistant", "content": [{"type": "text", "text": ""}, {
            "type": "tool_use", "id": "toolu_1", "name": "f", "input": [1]}]},
        {"role": "user", "content": None}]}))
    out = invoke("check", "--lang", "zh", str(anthropic), COLUMNS="200").stdout
    for said in ("[0] user      content: []（空）", ".content[0] （空的文本块）",
                 "[1]   （input 是数组，不是对象）", "[2] user      （没有 content）"):
        assert said in out
    en = invoke("check", str(anthropic), COLUMNS="200").stdout
    assert "content: [] (empty)" in en and "(empty text block)" in en
    assert "(input is an array, not an object)" in en and "(no content)" in en
    gemini = tmp_path / "gemini.json"
    gemini.write_text(json.dumps({"contents": [{"role": "user", "parts": []},
                                               {"role": "user", "parts": 3}]}))
    out = invoke("check", "--lang", "zh", str(gemini), COLUMNS="200").stdout
    assert "parts: []（空）" in out and "3   （parts 不是数组）" in out
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps({"model": "gpt-x", "previous_response_id": "resp_1", "input": [
        {"type": "function_call_output", "call_id": "call_9", "output": "ok"},
        {"type": "message", "role": "user", "content": "hi"}]}))
    out = invoke("check", "--lang", "zh", str(responses), COLUMNS="300").stdout
    assert "… 回答的是保存在服务器端响应里的调用" in out
    assert ("提示：input[0] 回答的是 call_9，而这个请求里没有它：这个请求接着服务器端保存的响应 resp_1"
            "（previous_response_id）；这里无法知道那个调用是否存在") in out
    en = invoke("check", str(responses), COLUMNS="300").stdout
    assert ("note: input[0] answers call_9, which this request does not contain: it continues the "
            "stored response resp_1 (previous_response_id); whether that call exists cannot be "
            "known here") in en


def test_a_replays_verdict_in_chinese():
    """The last line of replaying the proxy's blocked recording: the problem's shape and the
    first difference in Chinese, the recorded JSON verbatim; English as before."""
    from support import ROOT

    src = str(ROOT / "tests" / "transcripts_v1" / "proxy-chat-blocked.jsonl")
    r = invoke("replay", "--lang", "zh", src, COLUMNS="200")
    assert r.stderr.splitlines()[-1] == (
        'agentdbg: error: 回放：最终的 messages 不同：第一处不同在 messages[2]：录制时是 '
        '{"role": "user", "content": "再查一下物流?"}，现在是 null')
    assert invoke("replay", src, COLUMNS="200").stderr.splitlines()[-1] == (
        'agentdbg: error: replay final messages: first difference at messages[2]: recorded '
        '{"role": "user", "content": "再查一下物流?"}, now null')


def test_a_replayed_model_note_is_read_back_piece_by_piece(tmp_path):
    """The offline model's recorded note (English in the transcript) shown in Chinese by a
    replay: each piece in its own template (a call, its parameters, why each value), values
    verbatim; the same note made in Chinese directly reads the same."""
    from agentdbg import i18n
    from agentdbg.i18n import Join, Msg
    from agentdbg.providers.offline_note import CALL, PARAM, read_note

    run = tmp_path / "order.jsonl"
    assert invoke("run", "Where is order ORD-2026-001?", "--save", str(run)).exit_code == 0
    out = invoke("replay", "--lang", "zh", str(run), COLUMNS="200").stdout
    assert ("录制时的说明：query_order：order_id='ORD-2026-001'（问题与 pattern ^ORD-\\d{4}-\\d{3}$ 匹配）"
            in out)
    assert "录制时的说明：query_logistics：tracking_no='SF123456'（之前工具结果里的字段 'tracking_no'）" in out
    assert "录制时的说明：没有要调用的了：根据 2 个工具结果作答" in out
    en = invoke("replay", str(run), COLUMNS="200").stdout
    assert "recorded note: query_order: order_id='ORD-2026-001' (question matches pattern" in en
    # two calls, two parameters each, values holding the separators themselves
    note = [Msg(CALL, {"tool": "send_email", "why": Join((
                Msg(PARAM, {"key": "subject", "value": repr("Hi, (you); x"),
                            "why": Msg("question matches pattern {pattern}", {"pattern": "^H.*$"})}),
                Msg(PARAM, {"key": "to", "value": repr("a@b.c"),
                            "why": Msg("field {field} of an earlier tool result", {"field": "'to'"})})))}),
            Msg("nothing left to call: answering from {n} tool result(s)", {"n": 2})]
    english = "; ".join(str(n) for n in note)
    try:
        i18n.use("zh")
        assert read_note(english) == "；".join(n.tr() for n in note)   # joined as Chinese is
        assert "send_email：subject='Hi, (you); x'（问题与 pattern ^H.*$ 匹配），to='a@b.c'" in read_note(english)
    finally:
        i18n.use("en")
    assert read_note(english) == english


def test_a_scripted_models_notes_in_chinese_live_and_replayed(tmp_path):
    """A script's note ('scripted turn 1 of 2') and the offline model answering a request the
    script waits out (why, in pieces) are Chinese in a run and, recorded in English, in a
    replay."""
    script = tmp_path / "script.yaml"
    script.write_text("turns:\n  - tool_calls: [{name: get_weather, arguments: {city: 北京}}]\n"
                      "  - {content: second, when: {tool: nope}}\n")
    aside = ("不是脚本要回答的（脚本的第 2 轮在等这样的请求：提供工具 'nope'）：由离线模型回答 — "
             "没有要调用的了：根据 1 个工具结果作答")
    out = invoke("run", "--lang", "zh", "--script", str(script), "北京天气", COLUMNS="250").stdout
    assert "模型说明：脚本第 1 轮（共 2 轮）" in out and f"模型说明：{aside}" in out
    run = tmp_path / "run.jsonl"
    en = invoke("run", "--script", str(script), "weather?", "--save", str(run), COLUMNS="250").stdout
    assert ("model note: not the script's (turn 2 of the script waits for a request that offers the "
            "tool 'nope'): the offline model answered — nothing left to call") in en
    out = invoke("replay", "--lang", "zh", str(run), COLUMNS="250").stdout
    assert "录制时的说明：脚本第 1 轮（共 2 轮）" in out and f"录制时的说明：{aside}" in out


@pytest.mark.parametrize(("args", "zh", "en"), [
    (["serve", "--offline"], "agentdbg serve: 离线模型，地址 http://127.0.0.1:",
     "agentdbg serve: the offline model at http://127.0.0.1:"),
    (["proxy", "--offline"], "  让你的应用指向这里：export OPENAI_BASE_URL=",
     "  point your app at it: export OPENAI_BASE_URL="),
    (["collect"], "agentdbg collect: 在 http://127.0.0.1:",
     "agentdbg collect: receiving OTLP/HTTP traces at http://127.0.0.1:"),
], ids=["serve", "proxy", "collect"])
def test_the_servers_say_where_they_listen_in_the_chosen_language(tmp_path, args, zh, en):
    """`serve`, `proxy` and `collect` (real processes on a free port): their first lines in
    Chinese with --lang after the command; English unchanged."""
    import select
    import signal
    import time

    for lang, expected in (("zh", zh), ("en", en)):
        proc = subprocess.Popen([sys.executable, "-m", "agentdbg", *args, "--port", "0", "--lang", lang],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env={**os.environ, "AGENTDBG_HOME": str(tmp_path)}, cwd=tmp_path)
        try:
            deadline, said = time.monotonic() + 20, b""
            while time.monotonic() < deadline and ("\n" + expected).encode() not in b"\n" + said:
                if not select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
                    break
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                said += chunk
            assert ("\n" + expected).encode() in b"\n" + said, said.decode()
        finally:   # how it stops is not what this test is about: stopped either way
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def test_collect_with_a_forward_that_is_no_url_ends_at_once(tmp_path):
    """`collect --forward ftp://x` said so and then never ended: its worker process had been
    started before the URL was read (the scan of `collect --forward ftp://x` hung whenever
    port 4318 was free). Now one line naming --forward, exit 2, nothing left running; and
    the URL is read before the port is taken, so a port in use does not hide it."""
    import socket

    with socket.socket() as held:      # the port is in use: the bad URL is still what is said
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = str(held.getsockname()[1])
        proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "collect", "--forward",
                                 "ftp://x", "--port", port, "--lang", "zh"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=tmp_path, env={**os.environ, "AGENTDBG_HOME": str(tmp_path)})
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError("collect --forward ftp://x did not end") from None
    assert proc.returncode == 2 and out == ""
    assert err == "agentdbg: error: --forward 'ftp://x'：不是 http(s) URL（例如 http://127.0.0.1:4318）\n"


def test_a_launched_commands_summary_in_chinese_and_english_unchanged(tmp_path):
    """`agentdbg proxy --lang zh --offline -- python -c pass` (a real proxy and a real command
    that sends nothing): the summary on stderr in Chinese, paths verbatim; English unchanged."""
    said = {}
    for lang in ("zh", "en"):
        r = subprocess.run([sys.executable, "-m", "agentdbg", "proxy", "--lang", lang, "--offline",
                            "--port", "0", "--", sys.executable, "-c", "pass"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env={**os.environ, "AGENTDBG_HOME": str(tmp_path)})
        assert r.returncode == 0, r.stderr
        said[lang] = r.stderr.splitlines()
    zh, en = said["zh"], said["en"]
    name = os.path.basename(sys.executable)
    assert zh[0].startswith(f"agentdbg proxy: {name} 运行 ") and zh[0].endswith(" 秒后退出，状态码 0"), zh
    assert zh[1].startswith("  没有任何请求到达代理：") and "--client NAME" in zh[1], zh
    assert any(line.startswith("  日志：") and line.endswith(".log") for line in zh), zh
    assert en[0].startswith(f"agentdbg proxy: {name} exited with status 0 after "), en
    assert en[0].endswith(" s"), en
    assert en[1] == ("  no request reached the proxy: is the command's model client one that reads "
                     "the variables agentdbg sets? (--client NAME forces a kind; see the log)"), en
    assert any(line.startswith("  log: ") for line in en), en


def test_the_summary_of_a_run_with_findings_and_a_subagent_in_chinese():
    """The counts, findings and a subagent's line of the summary: Chinese templates, not
    English words; English unchanged."""
    from pathlib import Path
    from types import SimpleNamespace

    from agentdbg import i18n
    from agentdbg.report.runpage import Conversation, RunSummary
    from agentdbg.server.launch.summary import summary_lines
    from agentdbg.transcript.events import StartedBy

    bad = SimpleNamespace(severity="error", rule="tool_call_id")
    convs = [Conversation(path=Path("a.json"), number=1, requests=2, findings=[bad]),
             Conversation(path=Path("b.json"), number=2, requests=1, agent="Billing agent",
                          started_by=StartedBy(conversation=1, call_id="call_7"))]
    summary = RunSummary(convs)
    try:
        i18n.use("zh")
        zh = summary_lines("app", summary, None, Path("run.log"), [], 2)
    finally:
        i18n.use("en")
    en = summary_lines("app", summary, None, Path("run.log"), [], 2)
    assert zh[1:3] == ["  3 个请求，分属 2 个对话", "  发现的问题：1 个错误，0 个警告"], zh
    assert "  └─ 对话 2（Billing agent） ← 由对话 1 启动的子代理（调用 call_7）：1 个请求 ✓  b.json" in zh, zh
    assert zh[-1] == "  已结束命令遗留下来仍在运行的 2 个进程", zh
    assert en[1:3] == ["  3 requests in 2 conversations", "  findings: 1 error, 0 warnings"], en
    assert ("  └─ conversation 2 (Billing agent) ← subagent from conversation 1 (call call_7): "
            "1 request ✓  b.json") in en, en
    assert en[-1] == "  ended 2 processes the command left running", en


def test_collects_summary_and_forward_lines_in_chinese(capsys):
    """collect's closing summary and a forward to a collector that is not there (a real closed
    port, the real HTTP client): Chinese lines, the URL and exception name verbatim."""
    import asyncio
    import socket

    from agentdbg import i18n
    from agentdbg.server.collect.app import Forwarder
    from agentdbg.server.collect.feed import Stats, summary

    with socket.socket() as s:    # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    said: list[str] = []

    async def forward() -> None:
        f = Forwarder(f"http://127.0.0.1:{port}", said.append)
        f.start()
        f.put(b"{}", {"content-type": "application/json"})
        await f.stop()

    try:
        i18n.use("zh")
        summary(Stats(exports=2, spans=5, calls=1, dropped=1), [])
        asyncio.run(forward())
    finally:
        i18n.use("en")
    summary(Stats(exports=2, spans=5, calls=1, dropped=1), [])
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == ["agentdbg collect: 2 次导出，5 个 span，1 次模型调用，分属 0 个对话；发现的问题：无",
                       "agentdbg collect: 1 次导出未被读取：积压队列已满，或 collect 在处理到它们之前就停止了"], err
    assert err[2:] == ["agentdbg collect: 2 export(s), 5 span(s), 1 model call(s) in 0 conversation(s); "
                       "findings: none",
                       "agentdbg collect: 1 export(s) not read: the backlog was full, or collect stopped "
                       "before it got to them"], err
    assert said == [f"forward：无法连接 http://127.0.0.1:{port}/v1/traces（ConnectError）"], said


def test_a_refused_web_page_is_said_in_chinese_and_its_403_stays_english():
    """A request from a web page to collect's receiver: the console line in Chinese (the Origin
    and path verbatim), the HTTP 403 body in English (what the API client reads)."""
    from starlette.testclient import TestClient

    from agentdbg import i18n
    from agentdbg.server.collect.app import make_app

    said: list[str] = []
    try:
        i18n.use("zh")
        with TestClient(make_app(lambda export: None, said.append), base_url="http://127.0.0.1") as client:
            r = client.post("/v1/traces", content=b"{}", headers={
                "origin": "https://evil.example", "content-type": "application/json"})
    finally:
        i18n.use("en")
    assert r.status_code == 403
    assert "refused this request: it comes from the web page 'https://evil.example'" in r.text, r.text
    assert said == ["agentdbg collect：已拒绝 POST '/v1/traces'：它来自网页 'https://evil.example'（Origin）；"
                    "除非用 --allow-origin 放行，网页不能使用这个 collect；之后同类请求会被直接拒绝，不再提示"], said


def test_the_proxys_stop_lines_in_chinese_for_exchanges_and_collects_exports():
    """The stop's backlog lines name what the worker analyses (the proxy's exchanges, collect's
    exports) in a template per kind; English unchanged."""
    from agentdbg import i18n
    from agentdbg.server.proxy.workers import ProcessAnalyst

    proxy, collect = object.__new__(ProcessAnalyst), object.__new__(ProcessAnalyst)
    proxy.unit, collect.unit = "exchange", "export"

    def lines() -> list[str]:
        return [w._units(*pair, n=6, seconds="1") for w in (proxy, collect) for pair in [(
            "stopped analysing after {seconds} s: recording the {n} exchange(s) left without "
            "analysing them",
            "stopped analysing after {seconds} s: recording the {n} export(s) left without "
            "analysing them")]]

    try:
        i18n.use("zh")
        zh = lines()
    finally:
        i18n.use("en")
    assert zh == ["1 秒后停止分析：剩下的 6 次交互只记录，不分析", "1 秒后停止分析：剩下的 6 次导出只记录，不分析"], zh
    assert lines()[1] == "stopped analysing after 1 s: recording the 6 export(s) left without analysing them"


def test_a_transcript_that_could_not_be_written_is_said_in_chinese():
    """The proxy's line for a transcript it could not write (a full disk): Chinese, the path
    and the system's own reason verbatim; English unchanged."""
    import errno
    from types import SimpleNamespace

    from agentdbg import i18n
    from agentdbg.server.proxy.conversations import _write_failure

    writer = SimpleNamespace(error=OSError(errno.ENOSPC, "No space left on device"), path="/r/c-1.jsonl")
    template = ("conversation {n}: its transcript {path} could not be written ({why}); its "
                "transcript stops before its end")
    try:
        i18n.use("zh")
        zh = _write_failure(template, 3, writer)
    finally:
        i18n.use("en")
    assert zh == "对话 3：无法写入它的记录 /r/c-1.jsonl（No space left on device）；记录在对话结束前就中断了", zh
    assert _write_failure(template, 3, writer) == (
        "conversation 3: its transcript /r/c-1.jsonl could not be written (No space left on device); "
        "its transcript stops before its end")


def test_a_launched_clients_notes_and_the_proxys_log_in_chinese(tmp_path):
    """`agentdbg proxy --lang zh --offline --client gemini -- python -c pass` (real processes):
    what agentdbg learnt about Gemini CLI's settings (a file that is not JSON, no sign-in chosen)
    is said in Chinese in the summary and in the log, as are the log's own lines (the command,
    where each API is relayed, where the proxy listens, how the command ended); settings, paths,
    URLs and the client's own error text verbatim. English unchanged."""
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text("{oops")
    said = {}
    for lang in ("zh", "en"):
        runs = tmp_path / f"runs-{lang}"
        r = subprocess.run([sys.executable, "-m", "agentdbg", "proxy", "--lang", lang, "--offline",
                            "--client", "gemini", "--port", "0", "--save", str(runs), "--",
                            sys.executable, "-c", "pass"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env={**os.environ, "AGENTDBG_HOME": str(tmp_path),
                                "HOME": str(tmp_path / "home"), "GEMINI_CLI_HOME": str(tmp_path / "home")})
        assert r.returncode == 0, r.stderr
        [log] = runs.glob("*.log")
        said[lang] = (r.stderr, log.read_text(encoding="utf-8"))
    (zh, zh_log), (en, en_log) = said["zh"], said["en"]
    bad = str(tmp_path / ".gemini" / "settings.json")
    setting = '{"security": {"auth": {"selectedType": "gemini-api-key"}}}'
    assert f"  提示：{bad}：不是纯 JSON；其中的登录设置不予考虑\n" in zh, zh
    assert ("  提示：Gemini CLI 的设置里没有选择登录方式（security.auth.selectedType）：设置了 "
            "GOOGLE_GEMINI_BASE_URL 时，用 -p 运行会因 'Invalid auth method selected.' 而停止；"
            f"请把 {setting} 写进 ~/.gemini/settings.json（agentdbg 不会替你写）\n") in zh, zh
    assert zh_log.startswith(f"agentdbg proxy: 正在运行 {sys.executable} -c pass（客户端：gemini）\n"), zh_log
    assert "  gemini：转发到 http://127.0.0.1:" in zh_log and "agentdbg proxy: 正在 http://" in zh_log
    assert f"agentdbg: 提示：{bad}：不是纯 JSON" in zh_log and " 秒后退出，状态码 0" in zh_log
    for english in ("note:", "not plain JSON", "pick no sign-in", "running ", "relayed to",
                    "listening at", "exited with"):
        assert english not in zh + zh_log, english
    assert f"  note: {bad}: not plain JSON; its sign-in setting is not taken into account\n" in en
    assert ("  note: Gemini CLI's settings pick no sign-in (security.auth.selectedType): with "
            "GOOGLE_GEMINI_BASE_URL set, it stops with 'Invalid auth method selected.' when run "
            f"with -p; put {setting} in ~/.gemini/settings.json (agentdbg does not write it)\n") in en
    assert en_log.startswith(f"agentdbg proxy: running {sys.executable} -c pass (client: gemini)\n")
    assert "  gemini: relayed to http://127.0.0.1:" in en_log and "agentdbg proxy: listening at" in en_log
    assert f"agentdbg: {sys.executable} exited with status 0 after " in en_log
