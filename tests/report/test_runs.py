"""`agentdbg runs` at 80 columns (golden), and every command taking what it shows back:
a name, a number from the list, `last` (issue 12)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.errors import InputError
from agentdbg.transcript.runs import resolve_run, runs_dir, saved_runs

GOLDEN = Path(__file__).parent / "golden"
runner = CliRunner()
ORDER = "20261130-041507-订单-ORD-2026-001-到哪里了"
LONG = "20261130-041633-" + "请帮我查一下这个订单现在的物流状态以及预计送达的具体时间和快递员的联系电话谢谢你们的帮助"[:40]


def golden(name: str, text: str) -> None:
    """As tests/test_render.py: a missing golden fails; UPDATE_GOLDEN=1 writes it."""
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing; UPDATE_GOLDEN=1 writes it (then read it)"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs; UPDATE_GOLDEN=1 to accept"


def transcript(name: str, question: str | None, *, created: str, turns: int, stop: str | None,
               mtime: int, provider: str = "offline") -> Path:
    """A small transcript written by hand (fixed creation time and modification time)."""
    folder = runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    events = [{"type": "header", "format": "agentdbg-transcript", "version": 1,
               "agentdbg_version": "0.1.0", "created": created, "model": "offline",
               "provider": provider, "base_url": None, "question": question, "tools": [],
               "options": {}, "parent": None}]
    messages = [{"role": "user", "content": question or "hi"}]
    for turn in range(1, turns + 1):
        events.append({"type": "request", "seq": len(events), "turn": turn, "prefix": len(messages) - 1
                       if turn > 1 else 0, "append": messages[-1:] if turn > 1 else messages,
                       "params": {}})
        reply = {"role": "assistant", "content": f"answer {turn}"}
        events.append({"type": "response", "seq": len(events), "turn": turn, "message": reply,
                       "usage": {}, "finish_reason": "stop", "latency_ms": 1.0})
        messages.append(reply)
    if stop:
        events.append({"type": "stop", "seq": len(events), "reason": stop, "detail": "",
                       "messages": messages, "usage": {}})
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def saved():
    """Five saved runs of different kinds, newest first by modification time."""
    base = 1_795_000_000
    paths = {
        "order": transcript(ORDER, "订单 ORD-2026-001 到哪里了?", created="2026-11-30T04:15:07+0000",
                            turns=3, stop="completed", mtime=base + 50),
        "proxy": transcript("proxy-20261130-041512-conversation-1",
                            "What is the weather in Paris today? Please answer in detail, with the "
                            "temperature in Celsius and Fahrenheit\nand a forecast for tomorrow.",
                            created="2026-11-30T04:15:12+0800", turns=2, stop=None, mtime=base + 40,
                            provider="proxy"),
        "limit": transcript("20261130-041520-hello", "hello", created="2026-11-30T04:15:20+0000",
                            turns=1, stop="max_turns", mtime=base + 30),
        "long": transcript(LONG, "请帮我查一下这个订单现在的物流状态以及预计送达的具体时间和快递员的联系电话",
                           created="2026-11-30T04:16:33+0000", turns=12, stop="repeated_call",
                           mtime=base + 20),
    }
    bad = runs_dir() / "notes.jsonl"
    bad.write_text("my notes, not a transcript\n", encoding="utf-8")
    os.utime(bad, (base + 10, base + 10))
    paths["bad"] = bad
    return paths


def runs_output(monkeypatch, *args: str, columns: int = 80) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    r = runner.invoke(app, ["runs", *args])
    assert r.exit_code == 0, r.output
    return r.stdout.replace(str(runs_dir()), "<runs>")


def test_runs_at_80_columns(saved, monkeypatch):
    out = runs_output(monkeypatch)
    golden("runs_80", out)
    lines = out.splitlines()
    assert all(cell_len(line) <= 80 for line in lines if line.strip() != LONG)
    assert cell_len(f"   {LONG}") > 80                          # longer than the line, still whole
    # every timestamp whole, every name whole on its own line
    assert "2026-11-30 04:15:07  completed" in out and "2026-11-30 04:15:12  (no stop)" in out
    for path in saved.values():
        assert f"   {path.stem}" in lines[lines.index(next(x for x in lines if x.endswith(path.stem)))]


def test_a_name_never_wraps_even_when_longer_than_the_line(saved, monkeypatch):
    for columns in (60, 80, 120):
        out = runs_output(monkeypatch, columns=columns)
        assert f"   {LONG}\n" in out, columns                   # whole, on one line
        assert "2026-11-30 04:16:33" in out


def test_limit_says_how_many_more(saved, monkeypatch):
    out = runs_output(monkeypatch, "--limit", "2")
    assert ORDER in out and "hello" not in out and "… and 3 older (--limit)" in out


def test_no_runs_yet(monkeypatch):
    out = runs_output(monkeypatch)
    assert "saved runs in <runs>, newest first" in out and "(none yet" in out


def test_resolve_run_takes_what_runs_shows(saved, tmp_path):
    assert saved_runs()[0] == saved["order"]
    assert resolve_run("last") == resolve_run("1") == saved["order"]
    assert resolve_run("3") == saved["limit"]
    assert resolve_run(ORDER) == resolve_run(f"{ORDER}.jsonl") == saved["order"]
    assert resolve_run(str(saved["long"])) == saved["long"]          # a path is a path
    here = tmp_path / "mine.jsonl"
    here.write_text("x")
    assert resolve_run("mine.jsonl") == Path("mine.jsonl")            # the cwd (tests run in tmp_path)
    for text, needle in [("9", "no run #9: 'agentdbg runs' lists 5 (1 is the newest)"),
                         ("0", "no run #0"),
                         ("nope", "nope: no such file, and no saved run by that name"),
                         ("../runs/" + ORDER, "no such file"),             # names are bare names
                         ("", "no transcript given")]:
        with pytest.raises(InputError) as info:
            resolve_run(text)
        assert needle in info.value.message and "\n" not in info.value.message


def test_last_with_no_saved_runs_is_one_line():
    with pytest.raises(InputError, match="no saved runs in"):
        resolve_run("last")


def test_replay_report_diff_export_take_the_name_runs_shows(tmp_path, monkeypatch):
    """Real runs: the name printed by `runs` goes back into every command."""
    monkeypatch.setenv("COLUMNS", "80")
    for q in ("北京和上海今天哪个更热?", "订单 ORD-2026-001 到哪里了?"):
        assert runner.invoke(app, ["run", q]).exit_code == 0
    listing = runner.invoke(app, ["runs"]).stdout
    names = re.findall(r"^   (\d{8}-\d{6}-\S+)$", listing, re.M)
    assert len(names) == 2 and "ORD-2026-001" in names[0]
    newest, older = names
    r = runner.invoke(app, ["replay", newest, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["stop_reason"] == "completed"
    # replay saved a transcript of its own: it is #1 now, the order run is #2
    r = runner.invoke(app, ["report", newest, "-o", str(tmp_path / "a.html")])
    assert r.exit_code == 0 and "3 turn(s), 2 tool call(s)" in r.stdout
    r = runner.invoke(app, ["diff", newest, "last"])
    assert r.exit_code == 0 and "same: every turn" in r.stdout        # a run and its replay
    r = runner.invoke(app, ["diff", "2", older, "--json"])
    assert r.exit_code == 1 and json.loads(r.stdout)["same"] is False
    r = runner.invoke(app, ["export", older, "--format", "otlp-json", "-o", str(tmp_path / "t.json")])
    assert r.exit_code == 0 and "exported 5 span(s)" in r.stdout


@pytest.mark.parametrize("command", [["replay"], ["report"], ["diff", "last"], ["export"]])
def test_an_unknown_name_is_one_line(command, saved):
    r = runner.invoke(app, [*command, "no-such-run"])
    assert r.exit_code == 2
    (line,) = r.stderr.splitlines()
    assert line.startswith("agentdbg: error: no-such-run: no such file, and no saved run by that name")


def test_a_replay_and_a_fork_say_what_they_are(monkeypatch):
    original = transcript("20261130-050000-hello", "hello", created="2026-11-30T05:00:00+0000",
                          turns=1, stop="completed", mtime=1_795_000_100)
    transcript("20261130-050001-hello", "hello", created="2026-11-30T05:00:01+0000", turns=1,
               stop="completed", mtime=1_795_000_200, provider="replay")
    fork = transcript("20261130-050002-hello", "hello", created="2026-11-30T05:00:02+0000", turns=1,
                      stop="completed", mtime=1_795_000_300)
    head = json.loads(fork.read_text(encoding="utf-8").splitlines()[0])
    rest = fork.read_text(encoding="utf-8").splitlines()[1:]
    fork.write_text("\n".join([json.dumps({**head, "parent": {"path": str(original),
                                                               "from_index": 0}}), *rest]) + "\n",
                    encoding="utf-8")
    os.utime(fork, (1_795_000_300, 1_795_000_300))
    lines = runs_output(monkeypatch).splitlines()
    rows = [ln for ln in lines if re.match(r"^\d ", ln)]
    assert rows[0].endswith("(fork) hello") and rows[1].endswith("(replay) hello")
    assert rows[2].endswith("  hello")
