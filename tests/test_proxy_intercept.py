"""`agentdbg proxy --intercept` in a real pseudo-terminal: pause, show, edit, inject, respond."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pexpect
from pty_helpers import commander, on_screen
from test_proxy import APP, ORDER_Q, SECRET, Proc


def test_intercept_session(tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text(  # the "edit": another tracking number in the order's tool result
        "import json, sys\np = sys.argv[1]\nb = json.load(open(p, encoding='utf-8'))\n"
        "b['messages'][2]['content'] = json.dumps({'status': 'shipped', 'tracking_no': 'SF000000'})\n"
        "json.dump(b, open(p, 'w', encoding='utf-8'))\n")
    serve = Proc(["serve", "--offline", "--port", "0"], tmp_path / "serve.log")
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "xterm", "NO_COLOR": "1",
           "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "200"}
    proxy = pexpect.spawn(sys.executable, ["-m", "agentdbg", "proxy", "--intercept", "--upstream",
                                           serve.url, "--port", "0", "--save", str(tmp_path / "saved")],
                          env=env, encoding="utf-8", dimensions=(60, 200), timeout=30)
    apps = []
    try:
        proxy.expect(r"agentdbg proxy: (http://\S+) ->")
        url = proxy.match.group(1)

        def app():
            p = subprocess.Popen([sys.executable, str(APP), ORDER_Q], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": SECRET})
            apps.append(p)
            return p

        cmd = commander(proxy, "(intercept)")

        first = app()
        proxy.expect(on_screen("paused before forwarding (conversation 1)"))
        cmd("show", '"messages"', ORDER_Q)
        cmd("forward")
        proxy.expect(on_screen("request 2 · conversation 1"))
        cmd("edit", "body edited; the checker now says: no findings")
        cmd("forward", "SF000000")
        proxy.expect(on_screen("request 3 · conversation 1"))
        cmd("inject 4 not_found", "message 4 now holds the not_found fault")
        cmd("forward")
        # the edit changed only what the model saw: the app's own history still holds
        # SF123456, so the model asks for it too
        proxy.expect(on_screen("request 4 · conversation 1"))
        cmd("forward")
        out, err = first.communicate(timeout=30)
        assert first.returncode == 0, err
        assert "没能获取物流单 SF000000（query_logistics）：not_found" in out
        assert "杭州转运中心已发出" in out

        second = app()
        proxy.expect(on_screen("paused before forwarding (conversation 2)"))
        cmd("respond 我直接回答：已经发货", "scripted by you, not the upstream")
        out, err = second.communicate(timeout=30)
        assert second.returncode == 0 and "我直接回答：已经发货" in out, err
        proxy.sendintr()
        proxy.expect(on_screen("transcript:"))
        proxy.expect(pexpect.EOF)
    finally:
        proxy.close()
        for p in apps:
            if p.poll() is None:
                p.kill()
        serve.stop()
    saved = sorted(Path(tmp_path / "saved").glob("*.jsonl"))
    assert len(saved) == 2
    assert all(SECRET not in p.read_text(encoding="utf-8") for p in saved)


def test_intercept_speaks_chinese(tmp_path):
    """`proxy --intercept --lang zh`: the pause, the help's descriptions, an unknown command and
    every refusal are Chinese; command words, fault kinds and the API's words stay verbatim."""
    editor = tmp_path / "editor.py"   # an edit that leaves the body unparsable
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('{\"messages\": [')\n")
    serve = Proc(["serve", "--offline", "--port", "0"], tmp_path / "serve.log")
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "xterm", "NO_COLOR": "1",
           "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "200"}
    proxy = pexpect.spawn(sys.executable, ["-m", "agentdbg", "proxy", "--lang", "zh", "--intercept",
                                           "--upstream", serve.url, "--port", "0"],
                          env=env, encoding="utf-8", dimensions=(60, 200), timeout=30)
    proxy.logfile_read = screen = io.StringIO()
    apps = []
    try:
        proxy.expect(r"(http://127\.0\.0\.1:\d+)")
        url = proxy.match.group(1)
        apps.append(subprocess.Popen([sys.executable, str(APP), ORDER_Q], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "OPENAI_BASE_URL": url,
                                          "OPENAI_API_KEY": SECRET}))
        cmd = commander(proxy, "(intercept)")
        proxy.expect(on_screen("转发前已暂停（对话 1）；'help' 列出所有命令"))
        cmd("help", "把请求转发给上游", "inject N KIND", "把第 N 条 tool 消息的内容换成一个故障", "停止代理")
        cmd("bogus", "*** 未知命令 'bogus'；'help' 列出所有命令")
        cmd("inject 99 timeout", "*** 用法：inject N KIND，N 是消息编号 0..")
        cmd("inject 0 timeout", "*** 第 0 条消息不是工具结果")
        cmd("respond", "*** 用法：respond TEXT，或 respond {assistant 消息的 JSON}")
        cmd("respond {oops", "*** 不是合法的 JSON（")
        cmd('respond {"role": "user"}', '*** 自己编写的回复必须是一条 assistant 消息：{"role": "assistant", ...}')
        cmd("edit", "*** 不是合法的 JSON（", "；请求体未做修改")
        cmd("")   # Enter forwards; the app runs the tool and asks again
        proxy.expect(on_screen("转发前已暂停（对话 1）"))
        cmd("inject 2 nonsense", "*** 未知的故障 'nonsense'")
        cmd("quit")
        proxy.expect(on_screen("记录文件："))
        proxy.expect(pexpect.EOF)
        for english in ("paused before", "unknown command", "usage:", "is not a tool result",
                        "not valid JSON", "unknown fault", "send the request", "unchanged",
                        "request 1 ·", "← response for"):
            assert english not in screen.getvalue()
        # the proxy's own lines about each request and response, between the prompts
        assert "请求 2 · 对话 1 · 3 条消息" in screen.getvalue()
        assert "← 对话 1 的响应（" in screen.getvalue()
    finally:
        proxy.close()
        for p in apps:
            if p.poll() is None:
                p.kill()
        serve.stop()
