"""Runs never collide: transcripts are created exclusively, a --save path is held while it is
written, and retention removes only agentdbg's own finished transcripts (issue 11)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
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


# -- retention never removes a transcript a process is still writing -------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_retention_keeps_the_transcript_of_an_open_step_session(tmp_path):
    """A step session at its prompt after 'stopped: completed': the transcript ends with a stop
    event, yet the session goes on (rewind, continue) and writes more: it is held with the lock."""
    import pexpect
    from pty_helpers import commander

    runs = tmp_path / "agentdbg-home" / "runs"
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "run", "--step", "weather in Paris"],
                          env=env, encoding="utf-8", dimensions=(60, 200), timeout=60,
                          cwd=str(tmp_path))
    try:
        cmd = commander(child, "(agentdbg)")
        cmd("c", "■ stopped: completed")
        (session,) = runs.glob("*.jsonl")
        assert json.loads(session.read_text(encoding="utf-8").splitlines()[-1])["type"] == "stop"
        other = agentdbg("run", "Where is ORD-2026-001", "--keep-runs", "1", cwd=tmp_path)
        _, err = other.communicate(timeout=60)
        assert other.returncode == 0 and "removed" not in err, err
        assert session.exists()
        cmd("rewind 0", "rewound to message 0")
        cmd("c", "■ stopped: completed")
        cmd("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    events = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    assert [e["type"] for e in events].count("stop") == 2 and events[-1]["type"] == "stop"
    # the session has ended: now its transcript is finished, and the oldest
    other = agentdbg("run", "Where is ORD-2026-001", "--keep-runs", "1", "--debug", cwd=tmp_path)
    _, err = other.communicate(timeout=60)
    assert "removed 2 older one(s)" in err and not session.exists()


def test_retention_skips_transcripts_a_second_process_holds_without_keeping_them_open(tmp_path):
    """The proxy writes any number of conversations without a descriptor each: one locked claim
    file in their folder lists them, and retention leaves them alone while it is held."""
    runs = tmp_path / "agentdbg-home" / "runs"
    runs.mkdir(parents=True)
    held = finished_run(runs, "held.jsonl", 1000)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import pathlib, sys\n"
         "from agentdbg.transcript.runs import Claim\n"
         "claim = Claim(pathlib.Path(sys.argv[1]))\n"
         "claim.add(pathlib.Path(sys.argv[1]) / 'held.jsonl')\n"
         "print('held', flush=True)\nsys.stdin.read()\n", str(runs)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        r = runner.invoke(app, ["run", "what is the weather in Paris?", "--keep-runs", "1"])
        assert r.exit_code == 0 and "removed" not in r.stderr, r.output
        assert held.exists()
    finally:
        holder.communicate(timeout=30)  # it ends without letting go: as if killed
    assert [p.name for p in runs.glob(".*")], "its claim is left behind, no longer held"
    r = runner.invoke(app, ["run", "what is the weather in Paris?", "--keep-runs", "1", "--debug"])
    assert "removed 2 older one(s)" in r.stderr and not held.exists()
    assert not list(runs.glob(".*")), "a claim nobody holds is removed"


def test_a_stop_nested_in_the_last_event_is_not_the_end(tmp_path):
    """Only a last line whose own type is 'stop' ends a transcript: not a recorded response
    that carries {"type": "stop"} inside it, nor a stop line still being written."""
    runs = tmp_path / "agentdbg-home" / "runs"
    runs.mkdir(parents=True)
    base = finished_run(runs, "base.jsonl", 3000)
    lines = base.read_text(encoding="utf-8").splitlines()
    response = json.loads(next(line for line in reversed(lines) if '"type": "response"' in line))
    response["message"]["annotations"] = [{"type": "stop"}]
    nested = runs / "nested.jsonl"
    nested.write_text("\n".join([*lines[:-1], json.dumps(response)]) + "\n", encoding="utf-8")
    cut = runs / "cut.jsonl"
    cut.write_text("\n".join(lines), encoding="utf-8")  # the stop line's newline not written yet
    for path in (nested, cut):
        os.utime(path, (time.time() - 2000, time.time() - 2000))
    r = runner.invoke(app, ["run", "what is the weather in Paris?", "--keep-runs", "1", "--debug"])
    assert "removed 1 older one(s)" in r.stderr, r.output
    assert not base.exists() and nested.exists() and cut.exists()


def test_a_running_proxy_conversation_that_nests_a_stop_is_kept(tmp_path):
    from proxy_helpers import COMPLETION, Proxy, Upstream

    runs = tmp_path / "agentdbg-home" / "runs"
    upstream = Upstream()
    answer = json.loads(json.dumps(COMPLETION))
    answer["choices"][0]["message"]["annotations"] = [{"type": "stop"}]
    upstream.reply = lambda handler, body: upstream.send(handler, 200, json.dumps(answer).encode())
    proxy = Proxy(upstream.url, tmp_path, "--save", str(runs))  # the runs folder
    try:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        subprocess.run([sys.executable, "-c", (
            "import sys, urllib.request\n"
            "req = urllib.request.Request(sys.argv[1] + '/chat/completions', sys.argv[2].encode(),"
            " {'content-type': 'application/json'})\n"
            "urllib.request.urlopen(req, timeout=30).read()\n"), proxy.url, json.dumps(body)],
            check=True, timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and '"annotations"' not in "".join(
                p.read_text(encoding="utf-8") for p in runs.glob("proxy-*.jsonl")):
            time.sleep(0.05)
        (conversation,) = runs.glob("proxy-*.jsonl")
        assert '"type": "stop"' in conversation.read_text(encoding="utf-8").splitlines()[-1]
        from agentdbg.transcript.runs import claimed

        assert claimed(runs) == {conversation.name}  # held by the proxy, not only by its content
        os.utime(conversation, (0, 0))
        r = runner.invoke(app, ["run", "what is the weather in Paris?", "--keep-runs", "1"])
        assert r.exit_code == 0 and "removed" not in r.stderr, r.output
        assert conversation.exists()
    finally:
        proxy.stop()
        upstream.stop()
    events = [json.loads(line) for line in conversation.read_text(encoding="utf-8").splitlines()]
    assert events[-1]["type"] == "stop" and not list(runs.glob(".*"))


# -- replay never writes over what it plays ---------------------------------------------------

SAMPLE_TOOLS = str(Path(__file__).resolve().parents[2] / "tools.yaml")


@pytest.mark.parametrize("mode", [[], ["--json"], ["--step"], ["--from", "1", "--tools", SAMPLE_TOOLS]])
def test_replay_refuses_to_save_over_the_recording_it_plays(tmp_path, mode):
    rec = tmp_path / "rec.jsonl"
    assert runner.invoke(app, ["run", "what is the weather in Paris?", "--save", str(rec)]).exit_code == 0
    original = rec.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(rec)
    os.link(rec, tmp_path / "hard.jsonl")
    for target in ("rec.jsonl", str(rec), f"../{tmp_path.name}/rec.jsonl", "link.jsonl", "hard.jsonl"):
        for played in ("rec.jsonl", "link.jsonl"):
            r = runner.invoke(app, ["replay", played, *mode, "--save", target], input="c\nq\n")
            assert r.exit_code == 2 and r.stderr.count("\n") == 1, (played, target, r.output)
            assert "is the file being replayed" in r.stderr, r.stderr
            assert rec.read_bytes() == original
    # a run named as 'agentdbg runs' shows it, saved over by its path in the runs folder
    assert runner.invoke(app, ["run", "what is the weather in Paris?"]).exit_code == 0
    (saved,) = (tmp_path / "agentdbg-home" / "runs").glob("*.jsonl")
    kept = saved.read_bytes()
    r = runner.invoke(app, ["replay", "last", *mode, "--save", str(saved)], input="c\nq\n")
    assert r.exit_code == 2 and "is the file being replayed" in r.stderr and saved.read_bytes() == kept
    # another path is fine
    r = runner.invoke(app, ["replay", "rec.jsonl", *mode, "--save", "copy.jsonl"], input="c\nq\n")
    assert r.exit_code in (0, 130) and (tmp_path / "copy.jsonl").is_file(), r.output  # 130: quit


def test_a_starting_state_is_never_saved_over(tmp_path):
    start = tmp_path / "start.json"
    start.write_text(json.dumps([{"role": "user", "content": "weather in Paris?"}]), encoding="utf-8")
    original = start.read_bytes()
    r = runner.invoke(app, ["replay", "start.json", "--step", "--tools", SAMPLE_TOOLS,
                            "--save", "start.json"], input="q\n")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "is the file being replayed" in r.stderr
    assert start.read_bytes() == original
