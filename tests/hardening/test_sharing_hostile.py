"""Sharing a run someone else recorded (issue 21): ``report``, ``diff``, ``export``, ``replay``,
``assert_replays`` and ``pytest --agentdbg-replay`` take hostile and odd transcripts as data.

* escapes in the recorded stop reason and in the transcript's file name never reach the
  terminal (report's summary line, assert_replays' and the plugin's failure messages);
* ``NaN``, ``Infinity`` and ``1e400`` in usage counts are data, never an internal error;
* ``-o`` naming the transcript being read is refused, the transcript left untouched.
"""

import json
import subprocess
import sys

import pytest
from hostile import HOSTILE, assert_inert
from recordings import recording_events, write_events
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
EVIL_NAME = "evil\x1b]0;title\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def write_ascii(path, events) -> str:
    """The events as JSON Lines with \\u escapes (a lone surrogate is valid JSON text)."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return str(path)


def with_stop_reason(reason: str) -> list[dict]:
    events = recording_events()
    events[-1]["reason"] = reason
    return events


# -- escapes --------------------------------------------------------------------------------

def test_reports_summary_line_escapes_the_stop_reason_and_the_file_name(tmp_path):
    path = tmp_path / f"{EVIL_NAME}.jsonl"
    write_ascii(path, with_stop_reason(HOSTILE + "\ud800"))
    r = invoke("report", path)                   # the page goes to ./NAME.html (a hostile name)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("report: ") and "stop " in r.stdout
    assert_inert(r.output)
    assert "\\x1b]0;title" in r.stdout and "\\ud800" in r.stdout   # shown, as visible escapes
    assert (tmp_path / f"{EVIL_NAME}.html").read_text(encoding="utf-8").startswith("<!DOCTYPE")


def test_exports_line_escapes_the_file_it_wrote(tmp_path):
    path = write_events(tmp_path / "run.jsonl", recording_events())
    r = invoke("export", path, "--format", "otlp-json", "-o", tmp_path / f"{EVIL_NAME}.otlp")
    assert r.exit_code == 0, r.output
    assert_inert(r.output)


def test_assert_replays_failure_message_is_escaped(tmp_path):
    from agentdbg.testing import ReplayMismatch, assert_replays

    path = write_events(tmp_path / f"{EVIL_NAME}.jsonl", with_stop_reason(HOSTILE))
    with pytest.raises(ReplayMismatch) as caught:
        assert_replays(path)
    assert "stop reason: recorded " in str(caught.value)
    assert_inert(str(caught.value))


def test_pytest_plugin_failure_is_escaped(tmp_path):
    folder = tmp_path / "recordings"
    folder.mkdir()
    write_events(folder / "run.jsonl", with_stop_reason(HOSTILE))
    broken = with_stop_reason("completed")
    broken[0]["options"] = {"max_turns": "x" + HOSTILE}     # unreadable: its one line, escaped
    write_events(folder / "odd.jsonl", broken)
    r = subprocess.run([sys.executable, "-m", "pytest", "--agentdbg-replay", str(folder), "-q",
                        "-p", "no:cacheprovider", "-p", "no:randomly"],
                       capture_output=True, text=True, cwd=str(tmp_path))
    assert "2 failed" in r.stdout, r.stdout[-2000:]
    assert "stop reason: recorded " in r.stdout and "field 'options.max_turns'" in r.stdout
    assert_inert(r.stdout + r.stderr)


# -- numbers that are not numbers -------------------------------------------------------------

@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_odd_usage_numbers_are_data(tmp_path, value):
    lines = []
    for event in recording_events():
        text = json.dumps(event, ensure_ascii=False)
        if event["type"] == "response" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            text = text.replace(f'"prompt_tokens": {usage["prompt_tokens"]}', f'"prompt_tokens": {value}')
            text = text.replace('"latency_ms": ', f'"latency_ms": {value}, "x": ')
        lines.append(text)
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["report", path, "-o", tmp_path / "odd.html"], ["diff", path, path],
                 ["export", path, "--format", "otlp-json", "-o", tmp_path / "odd.otlp"],
                 ["replay", path], ["replay", path, "--json"]):
        r = invoke(*args)
        assert r.exit_code == 0, (args[0], r.output)
    r = invoke("replay", path, "--json")
    assert json.loads(r.stdout)["usage"]["prompt_tokens"] >= 0


# -- -o onto the transcript -----------------------------------------------------------------

@pytest.mark.parametrize("command", ["report", "export"])
@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink"])
def test_output_onto_the_transcript_being_read_is_refused(tmp_path, command, spelling):
    path = tmp_path / "run.jsonl"
    write_events(path, recording_events())
    before = path.read_bytes()
    target = {"same": lambda: tmp_path / "." / "run.jsonl",
              "symlink": lambda: (tmp_path / "link.jsonl").symlink_to(path) or tmp_path / "link.jsonl",
              "hardlink": lambda: (tmp_path / "hard.jsonl").hardlink_to(path) or tmp_path / "hard.jsonl",
              }[spelling]()
    extra = ["--format", "otlp-json"] if command == "export" else []
    r = invoke(command, path, *extra, "-o", target)
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("agentdbg: error: -o ") and "transcript being read" in line, line
    assert path.read_bytes() == before


def test_report_output_onto_the_diffed_transcript_is_refused(tmp_path):
    a = write_events(tmp_path / "a.jsonl", recording_events())
    b = write_events(tmp_path / "b.jsonl", recording_events())
    before = (tmp_path / "b.jsonl").read_bytes()
    r = invoke("report", a, "--diff", b, "-o", b)
    assert r.exit_code == 2 and "--diff transcript being read" in r.stderr, r.output
    assert (tmp_path / "b.jsonl").read_bytes() == before


# -- a recording with very many actions --------------------------------------------------------

def test_a_report_of_a_recording_with_very_many_actions_stays_small(tmp_path):
    """A shared recording may carry any number of action lines; the report draws the first
    ``ACTIONS_SHOWN`` and counts the rest (before: every one became a card in a page of
    hundreds of MB, and reading 10^6 of them took 1.6 GB)."""
    from agentdbg.report.timeline import ACTIONS_SHOWN

    events = recording_events()
    extra = ACTIONS_SHOWN + 2500
    many = [{"seq": 10_000 + i, "type": "action", "action": "inject", "at_ms": 1.0,
             "tool_call_id": "call_zz", "fault": "timeout", "kind": "timeout", "pending": True}
            for i in range(extra)]
    path = write_events(tmp_path / "many.jsonl", events[:-1] + many + events[-1:])
    out = tmp_path / "many.html"
    result = invoke("report", path, "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    total = extra + sum(e["type"] == "action" for e in events)
    assert f"{total} action(s) by you" in page
    assert f"the other {total - ACTIONS_SHOWN:,} are in the transcript" in page
    assert page.count('class="card action') <= ACTIONS_SHOWN
    assert len(page) < 2_000_000
