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
    assert "调用 call_o1 不会执行，而是得到故障 not_found" in out
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
