"""Runs never collide: transcripts are created exclusively, a --save path is held while it is
written, and retention removes only agentdbg's own finished transcripts (issue 11)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
# A fixed clock (every run starts "in the same second") and a slow disk (a pause between
# looking for a free name and creating the file): the window two runs race through.
SITECUSTOMIZE = '''
import os, pathlib, time
_strftime, _exists = time.strftime, pathlib.Path.exists
time.strftime = lambda fmt, t=None: _strftime(fmt, (2026, 1, 2, 3, 4, 5, 4, 2, 0))
def _slow_exists(self, *a, **kw):
    found = _exists(self, *a, **kw)
    if str(self).endswith(".jsonl"):
        time.sleep(1.5)
    return found
pathlib.Path.exists = _slow_exists
'''


def agentdbg(*args, cwd, env=None, **kw):
    return subprocess.Popen([sys.executable, "-m", "agentdbg", *args], cwd=str(cwd),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1", **(env or {})}, **kw)


def test_runs_started_in_the_same_second_never_share_a_file(tmp_path):
    (tmp_path / "clock").mkdir()
    (tmp_path / "clock" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    env = {"PYTHONPATH": str(tmp_path / "clock"), "AGENTDBG_HOME": str(tmp_path / "home")}
    procs = [agentdbg("run", "what is the weather in Paris?", cwd=tmp_path, env=env)
             for _ in range(6)]
    for p in procs:
        p.communicate(timeout=120)
        assert p.returncode == 0
    files = sorted((tmp_path / "home" / "runs").glob("*.jsonl"))
    assert len(files) == 6, [f.name for f in files]
    for f in files:
        r = runner.invoke(app, ["replay", str(f)])
        assert r.exit_code == 0, (f.name, r.output)


SLOW = """
version: 1
tools:
  - name: slow
    description: Takes a while. Use when asked.
    parameters: {type: object, properties: {}}
    handler: {command: [sh, -c, "sleep 3; echo '{\\"ok\\": 1}'"]}
"""
SCRIPT = "turns:\n  - tool_calls: [{name: slow, id: c1, arguments: {}}]\n  - content: done\n"


def test_a_save_path_in_use_is_refused_and_nothing_is_lost(tmp_path):
    (tmp_path / "t.yaml").write_text(SLOW, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SCRIPT, encoding="utf-8")
    first = agentdbg("run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--save", "same.jsonl",
                     cwd=tmp_path)
    deadline = time.monotonic() + 20
    while not (tmp_path / "same.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    second = agentdbg("run", "other", "--save", "same.jsonl", cwd=tmp_path)
    _, err = second.communicate(timeout=60)
    first.communicate(timeout=60)
    assert second.returncode == 2 and err.count("\n") == 1
    assert "another agentdbg is writing this transcript right now" in err
    assert first.returncode == 0
    events = [json.loads(line) for line in (tmp_path / "same.jsonl").read_text().splitlines()]
    assert events[0]["question"] == "q" and events[-1]["type"] == "stop"
    assert [e["type"] for e in events].count("header") == 1


def test_two_runs_may_both_save_to_dev_null(tmp_path):
    (tmp_path / "t.yaml").write_text(SLOW, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SCRIPT, encoding="utf-8")
    runs = [agentdbg("run", "q", "--script", "s.yaml", "--tools", "t.yaml", "--save", "/dev/null",
                     cwd=tmp_path) for _ in range(2)]  # the lock is for files, not devices
    for p in runs:
        p.communicate(timeout=60)
        assert p.returncode == 0


def finished_run(folder: Path, name: str, age: float) -> Path:
    path = folder / name
    runner.invoke(app, ["run", "what is the weather in Paris?", "--save", str(path)])
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def test_retention_prunes_only_our_finished_transcripts(tmp_path):
    runs = tmp_path / "agentdbg-home" / "runs"
    runs.mkdir(parents=True)
    old = [finished_run(runs, f"old-{i}.jsonl", 1000 + i) for i in range(3)]
    notes = runs / "my-notes.jsonl"
    notes.write_text('{"type": "note", "text": "mine"}\n')
    os.utime(notes, (0, 0))
    unfinished = runs / "proxy-conversation.jsonl"  # a proxy is still recording it
    lines = old[0].read_text().splitlines()
    unfinished.write_text("\n".join(line for line in lines if '"type": "stop"' not in line) + "\n")
    os.utime(unfinished, (0, 0))
    (runs / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    r = runner.invoke(app, ["run", "what is the weather in Paris?", "--keep-runs", "1"])
    assert r.exit_code == 0, r.output
    left = {p.name for p in runs.iterdir()}
    assert {"my-notes.jsonl", "proxy-conversation.jsonl", "dangling.jsonl"} <= left
    assert not {p.name for p in old} & left
    assert len(left) == 4  # the three above and the newest run
    r = runner.invoke(app, ["runs"])
    assert r.exit_code == 0, r.output
