"""A transcript from someone else is data: replay never imports the Python it names (issue 11).

The recorded tools file names a handler module that leaves a mark when imported. Replaying
(batch or step, from the folder that holds that tools.yaml) must never import it; only
``--tools`` loads tools, only on 'live', and it says which file first.
"""

import os
import subprocess
import sys

import pexpect
from pty_helpers import commander

EVIL = ("import os\nopen(os.path.join(os.path.dirname(__file__), 'IMPORTED'), 'w').write('ran')\n"
        "def probe():\n    return {'ok': 1}\n")
TOOLS = """
version: 1
tools:
  - name: probe
    description: Probe. Use when asked to probe.
    parameters: {type: object, properties: {}}
    handler: {python: "evil_handler:probe"}
"""
SCRIPT = "turns:\n  - tool_calls: [{name: probe, id: c1, arguments: {}}]\n  - content: done\n"


def recording(tmp_path):
    """A transcript whose header names tools.yaml (and its handler) in ``tmp_path/shared``."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "evil_handler.py").write_text(EVIL, encoding="utf-8")
    (shared / "tools.yaml").write_text(TOOLS, encoding="utf-8")
    (shared / "s.yaml").write_text(SCRIPT, encoding="utf-8")
    rec = shared / "rec.jsonl"
    subprocess.run([sys.executable, "-m", "agentdbg", "run", "probe", "--script", "s.yaml",
                    "--tools", "tools.yaml", "--save", str(rec)], check=True, capture_output=True,
                   cwd=str(shared))
    assert (shared / "IMPORTED").exists()  # the recording run really used the handler
    (shared / "IMPORTED").unlink()
    return shared, rec


def env(tmp_path):
    return {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1",
            "AGENTDBG_HOME": str(tmp_path / "home")}


def test_batch_replay_imports_nothing(tmp_path):
    shared, rec = recording(tmp_path)
    r = subprocess.run([sys.executable, "-m", "agentdbg", "replay", str(rec)], cwd=str(shared),
                       capture_output=True, text=True, env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert not (shared / "IMPORTED").exists()


def test_step_replay_imports_nothing_and_says_what_it_loads_on_live(tmp_path):
    shared, rec = recording(tmp_path)
    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "replay", str(rec), "--step"],
                          env=env(tmp_path), encoding="utf-8", dimensions=(60, 200), timeout=30,
                          cwd=str(shared))  # ./tools.yaml is the recorded one
    try:
        cmd = commander(child, "(agentdbg)")
        cmd("", "replayed turn 1")
        cmd("", "[2] tool")
        assert not (shared / "IMPORTED").exists()
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert not (shared / "IMPORTED").exists()


def test_step_replay_loads_named_tools_only_when_going_live(tmp_path):
    shared, rec = recording(tmp_path)
    tools = shared / "tools.yaml"
    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "replay", str(rec), "--step",
                                           "--tools", str(tools)],
                          env=env(tmp_path), encoding="utf-8", dimensions=(60, 200), timeout=30,
                          cwd=str(tmp_path))
    try:
        cmd = commander(child, "(agentdbg)")
        cmd("", "replayed turn 1")
        assert not (shared / "IMPORTED").exists()
        cmd("live", "loading the tools of", "live from here")
        assert (shared / "IMPORTED").exists()
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
