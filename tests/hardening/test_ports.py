"""A server command whose port is taken (or not a port, or whose address is not an address)
says so in one line and exits 2, leaving nothing running; the proxy used to hang for ever with
its analyst process alive, and every server printed 'internal error'."""

import os
import socket
import subprocess
import sys

import pytest


@pytest.fixture
def taken():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    yield s.getsockname()[1]
    s.close()


COMMANDS = {
    "serve": ["serve", "--offline"],
    "proxy": ["proxy", "--upstream", "http://127.0.0.1:9/v1"],
    "proxy --offline": ["proxy", "--offline"],
    "proxy --live": ["proxy", "--live", "--upstream", "http://127.0.0.1:9/v1"],
    "proxy -- CMD": ["proxy", "--offline", "--", sys.executable, "-c", "pass"],
    "collect": ["collect"],
    "ui": ["ui"],
}


def run(args, tmp_path, lang="en"):
    env = {**os.environ, "AGENTDBG_HOME": str(tmp_path / "home"), "AGENTDBG_LANG": lang}
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_port_in_use_is_one_line_and_exit_2(name, taken, tmp_path):
    done = run([*COMMANDS[name][:1], "--port", str(taken), *COMMANDS[name][1:]], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"agentdbg: error: cannot listen on 127.0.0.1 port {taken}: "
                                   "Address already in use"), done.stderr


def test_a_port_out_of_range_and_a_bad_address_are_one_line(tmp_path):
    done = run(["serve", "--offline", "--port", "99999"], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot listen on 127.0.0.1 port 99999" in done.stderr
    done = run(["serve", "--offline", "--host", "0.0.0.0.0"], tmp_path, lang="zh")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "无法在 0.0.0.0.0 的端口" in done.stderr and "internal error" not in done.stderr
