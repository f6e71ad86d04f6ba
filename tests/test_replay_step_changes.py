"""replay --step when the user changes what the recording did: an injected fault takes effect
and makes the recording stale (said once, in the chosen language), and each recorded action
is a step of its own."""

from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
ORDER_Q = "订单 ORD-2026-001 到哪里了?"
NOT_FOUND = "'query_order' found nothing for these arguments"


def recorded(tmp_path, *args, commands=None, name="rec.jsonl"):
    path = tmp_path / name
    extra = ["--step"] if commands is not None else []
    r = runner.invoke(app, ["run", *args, *extra, "--save", str(path)], input=commands)
    assert r.exit_code in (0, 7), r.output
    return path


def replay_step(path, commands, *options):
    r = runner.invoke(app, ["replay", str(path), "--step", *options], input=commands)
    return " ".join(r.output.split())   # as read, whatever the wrapping


def test_a_fault_injected_on_a_pending_call_in_replay_answers_it(tmp_path):
    out = replay_step(recorded(tmp_path, ORDER_Q), "\ninject call_o1 not_found\n\n\n\nquit\n",
                      "--lang", "zh", "--explain")
    assert "调用 call_o1 会得到故障 not_found：工具不会执行" in out
    result = out.split("[2] tool", 1)[1].split("▶", 1)[0]
    assert NOT_FOUND in result and "shipped" not in result   # the fault, not the recording
    assert out.count("从这里起录制已过时") == 1               # said in full once
    assert "第一处不同在 messages[2].content：录制时是" in out
    assert "first difference" not in out and "recorded \"" not in out
    assert "（录制从这里起已过时：'live' 改用实时模型继续" in out   # then a reminder


def test_the_recording_of_a_replay_with_an_injection_replays_as_it_was(tmp_path):
    saved = tmp_path / "again.jsonl"
    replay_step(recorded(tmp_path, ORDER_Q), f"\ninject call_o1 not_found\n\nplay\nc\nsave {saved}\nquit\n")
    r = runner.invoke(app, ["replay", str(saved)])
    assert r.exit_code == 0, r.output
    assert NOT_FOUND in r.output


def test_narration_after_replacing_a_finished_result_says_it_is_replaced(tmp_path):
    out = replay_step(recorded(tmp_path, ORDER_Q), "\n\ninject 2 not_found\n\nquit\n",
                      "--lang", "zh", "--explain")
    assert "消息 2 现在是这个故障，不再是工具自己的结果" in out
    assert "有一个故障在等待" not in out


def test_going_live_without_tools_reads_as_chinese(tmp_path):
    out = replay_step(recorded(tmp_path, ORDER_Q), "\ninject call_o1 not_found\n\n\nlive\nquit\n",
                      "--lang", "zh")
    assert "从这里起实时运行：改用 offline 模型，没有工具文件（调用得到的是“没有录下的结果”；请用 --tools 指定）" in out


WEATHER_Q = "北京和上海今天哪个更热?"
RETRIED = "n\nn\nn\nretry\nn\nback\nrewind 1\nn\nn\nn\nquit\n"


def html_text(path):
    import html
    import re

    page = re.sub(r"<script.*?</script>|<style.*?</style>", "", path.read_text(encoding="utf-8"),
                  flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_a_replay_numbers_turns_as_the_history_does_after_retry_and_rewind(tmp_path):
    out = replay_step(recorded(tmp_path, WEATHER_Q, commands=RETRIED), "c\nc\nc\nquit\n", "--lang", "zh")
    assert "回放第 2 轮（录制中的第 3 次请求）" in out and "回放第 2 轮（录制中的第 4 次请求）" in out
    assert "回放第 3 轮" not in out and "回放第 4 轮" not in out and "第 3 轮" not in out


def test_the_report_numbers_turns_as_the_history_does_and_counts_requests_apart(tmp_path):
    rec = recorded(tmp_path, WEATHER_Q, commands=RETRIED)
    page = tmp_path / "weather.html"
    r = runner.invoke(app, ["report", str(rec), "--lang", "zh", "-o", str(page)])
    assert "（2 轮，共 4 次请求，" in r.output, r.output
    text = html_text(page)
    assert "2 轮，共 4 次请求" in text and "第 2 轮（第 4 次请求）" in text
    assert "第 3 轮" not in text and "第 4 轮" not in text
    english = runner.invoke(app, ["report", str(rec), "-o", str(page)])
    assert "(2 turn(s) in 4 request(s), " in english.output and "turn 2 (request 3)" in html_text(page)


def test_the_report_numbers_a_blocked_request_as_step_mode_did(tmp_path):
    rec = recorded(tmp_path, ORDER_Q, commands="n\nn\ndrop 1\nn\nsend\nquit\n")
    page = tmp_path / "class1.html"
    runner.invoke(app, ["report", str(rec), "--lang", "zh", "-o", str(page)])
    text = html_text(page)
    assert "第 1 轮（第 2 次请求）：请求被发送前检查拦下（未发送）" in text
    assert "第 2 次请求被发送前检查拦下" not in text


def test_each_recorded_action_is_a_step_with_its_narration(tmp_path):
    rec = recorded(tmp_path, ORDER_Q, commands="n\nn\ndrop 1\nn\nsend\nquit\n")
    r = runner.invoke(app, ["replay", str(rec), "--step", "--lang", "zh", "--explain"],
                      input="\n" * 6 + "quit\n")
    steps = r.output.split("(agentdbg)")
    drop = next(i for i, s in enumerate(steps) if "按录制，接下来是：drop 1" in s)
    assert "你删除了第 1 条消息" in steps[drop] and "未发送" not in steps[drop]
    blocked = steps[drop + 1]           # the blocked request: a phase of its own, narrated
    assert "未发送：检查器发现历史违反了 API 强制执行的规则" in blocked and "接下来是" not in blocked
    sent = steps[drop + 2]              # 'send' goes on with its request, as typing it does
    assert "按录制，接下来是：send" in sent and "HTTP 400" in sent
    assert all(s.count("（消息 0–") <= 1 for s in steps)   # each step shows the history once
