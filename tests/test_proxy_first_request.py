"""The proxy's first request does no start-up work: what it needs is loaded before the proxy
prints its URL (a real ``agentdbg proxy`` process in front of a real ``agentdbg serve``)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

#: runs ``agentdbg proxy`` and says, on stderr, each module its relay (the main thread of the
#: main process) imports after the URL was printed
WATCHED = r'''
import os, sys, threading
from agentdbg.cli import main

pid, thread, printed = os.getpid(), threading.get_ident(), []

def hook(event, args):
    if event == "import" and printed and os.getpid() == pid and threading.get_ident() == thread:
        sys.__stderr__.write(f"IMPORTED-AFTER-READY {args[0]}\n")

class Out:
    def __init__(self, out):
        self.out = out
    def write(self, text):
        if "point your app at it" in text:
            printed.append(True)
        return self.out.write(text)
    def __getattr__(self, name):
        return getattr(self.out, name)

sys.stdout = Out(sys.stdout)
sys.addaudithook(hook)
sys.argv = ["agentdbg", *sys.argv[1:]]
main()
'''


def started(args: list[str], log: Path, script: str | None = None) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-c", script, *args] if script else [sys.executable, "-m", "agentdbg", *args]
    proc = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            env={**os.environ, "NO_COLOR": "1"})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = log.read_text()
        if "point your app at it" in text or ("serve" in args[0] and "http://" in text and "\n" in text):
            url = next(w for w in text.split() if w.startswith("http://"))
            return proc, url
        assert proc.poll() is None, text
        time.sleep(0.05)
    raise AssertionError(log.read_text())


def test_the_first_requests_import_nothing(tmp_path):
    serve, upstream = started(["serve", "--offline", "--port", "0"], tmp_path / "serve.log")
    proxy = None
    try:
        proxy, url = started(["proxy", "--upstream", upstream, "--port", "0", "--save",
                              str(tmp_path / "saved")], tmp_path / "proxy.log", WATCHED)
        history = [{"role": "user", "content": "北京天气?"}]
        with httpx.Client(timeout=60) as client:
            for stream in (False, True):
                r = client.post(url + "/chat/completions", json={
                    "model": "offline", "messages": history, "stream": stream})
                assert r.status_code == 200, r.text
                r = client.post(url[:-len("/v1")] + "/v1/messages", headers={"x-api-key": "k"},
                                json={"model": "offline", "max_tokens": 64, "messages": history,
                                      "stream": stream})
                assert r.status_code == 200, r.text
    finally:
        for proc in (proxy, serve):
            if proc is not None:
                proc.terminate()
                proc.wait(60)
    out = (tmp_path / "proxy.log").read_text()
    assert "no findings" in out  # the requests were relayed and analysed
    assert [line for line in out.splitlines() if "IMPORTED-AFTER-READY" in line] == []
