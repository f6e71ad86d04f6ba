"""The proxy's conversation files (issue 21): another command never writes over one the proxy
is still writing, and the proxy never writes through a symlink planted in their folder."""

import json
import os
import subprocess
import sys
import time

from proxy_helpers import COMPLETION, Proxy
from test_proxy_safety import post


def question(*more) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": "first question"}, *more]}


def saved_files(proxy, wait_for: int = 0) -> list:
    """The transcripts in the proxy's folder (waiting up to 10 s for ``wait_for`` of them: the
    analyst writes after the relay has answered)."""
    deadline = time.time() + 10
    while True:
        found = sorted((proxy.log.parent / "saved").glob("*.jsonl"))
        if len(found) >= wait_for or time.time() > deadline:
            return found
        time.sleep(0.05)


def answered(path) -> bytes:
    """The transcript once its response is recorded."""
    deadline = time.time() + 10
    while b'"type": "response"' not in path.read_bytes() and time.time() < deadline:
        time.sleep(0.05)
    return path.read_bytes()


def test_run_save_onto_a_conversation_the_proxy_is_writing_is_refused(upstream, tmp_path):
    proxy = Proxy(upstream.url, tmp_path)
    try:
        assert post(proxy.url, question())[0] == 200
        (path,) = saved_files(proxy, 1)
        before = answered(path)
        for target in (path, tmp_path / "link.jsonl"):
            if target != path:
                target.symlink_to(path)
            r = subprocess.run([sys.executable, "-m", "agentdbg", "run", "hello", "--save",
                                str(target)], capture_output=True, text=True, timeout=60,
                               env={**os.environ, "NO_COLOR": "1"}, cwd=tmp_path)
            assert r.returncode == 2, r.stdout + r.stderr
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and "an agentdbg proxy (pid " in lines[0] and \
                "is writing this conversation's transcript right now" in lines[0], r.stderr
            assert path.read_bytes() == before
        reply = COMPLETION["choices"][0]["message"]
        assert post(proxy.url, question(reply, {"role": "user", "content": "more"}))[0] == 200
    finally:
        proxy.stop()
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [e["type"] for e in events] == ["header", "request", "response", "request",
                                           "response", "stop"]


def test_a_symlink_planted_for_a_conversation_file_is_never_written_through(upstream, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    proxy = Proxy(upstream.url, tmp_path)
    try:
        assert post(proxy.url, question())[0] == 200
        (path,) = saved_files(proxy, 1)
        answered(path)
        path.unlink()
        path.symlink_to(victim)                       # someone with access to the folder
        reply = COMPLETION["choices"][0]["message"]
        assert post(proxy.url, question(reply, {"role": "user", "content": "more"}))[0] == 200
        assert post(proxy.url, {"model": "m", "messages": [
            {"role": "user", "content": "another conversation"}]})[0] == 200
    finally:
        out = proxy.stop()
    assert victim.read_text(encoding="utf-8") == "precious\n"
    said = [line for line in out.splitlines() if "symlink" in line]
    assert said and "conversation 1: its transcript" in said[0], out
    assert "could not be written (it was replaced by a symlink; agentdbg does not write through " \
        "one); the rest of this conversation is not recorded" in said[0]
    assert "1 relayed exchange(s) are not recorded in full:" in out, out
    assert "Traceback" not in out
    other = [p for p in saved_files(proxy) if not p.is_symlink()]
    assert len(other) == 1 and "another conversation" in other[0].read_text(encoding="utf-8")
