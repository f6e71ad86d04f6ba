"""`agentdbg diff`: runs aligned turn by turn and call by call, on transcripts made for real."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest
from rich.console import Console

from agentdbg.errors import ExitStatus, InputError
from agentdbg.report.adapter import render_text
from agentdbg.report.commands import run_diff
from agentdbg.report.diff import diff_transcripts, json_differences, render_diff

from .report_fixtures import ORDER_Q


def console():
    return Console(width=120, no_color=True, record=True, highlight=False, file=io.StringIO())


def test_a_replay_is_the_same_run(made):
    d = diff_transcripts(made["run"], made["replay"])
    assert d.same and d.first is None and d.messages is None
    assert [t.status for t in d.turns] == ["same"] * 3
    assert d.delta()["turns"] == 0 and d.delta()["stop_reason"]["same"]


def test_a_fork_is_aligned_after_its_inherited_turns(made):
    d = diff_transcripts(made["run"], made["fork"])
    assert d.fork == "B is a fork of A at message 2"
    assert d.same
    text = render_text(render_diff(d), width=140)
    assert "= turn 1 (A) / inherited (B): same (query_order)" in text
    assert "B − A: turns -1 · tool calls -1" in text


def test_different_questions_diverge_at_the_first_turn(made):
    d = diff_transcripts(made["run"], made["parallel"])
    assert not d.same
    assert d.first["what"] == "turn 1: B does not call query_order"
    first = d.turns[0]
    assert [(c.status, c.name) for c in first.calls] == [
        ("dropped", "query_order"), ("added", "get_weather"), ("added", "get_weather")]
    assert d.messages.startswith('first difference at messages[0].content: A "订单 ORD-2026-001')


def test_a_limit_shows_in_turns_and_stop_reason(made):
    d = diff_transcripts(made["run"], made["limit"])
    delta = d.delta()
    assert delta["turns"] == -2 and delta["tool_calls"] == -1
    assert delta["stop_reason"] == {"a": "completed", "b": "max_turns", "same": False}
    assert [t.status for t in d.turns] == ["same", "dropped", "dropped"]
    assert d.first["what"].startswith("A's turn 2 is missing from B")


def scripted_run(tmp_path, name, turns_yaml):
    script = tmp_path / f"{name}.yaml"
    script.write_text(textwrap.dedent(turns_yaml), encoding="utf-8")
    out = tmp_path / f"{name}.jsonl"
    env = {**os.environ, "AGENTDBG_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-m", "agentdbg", "run", ORDER_Q, "--script", str(script),
                           "--save", str(out)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return out


def test_arguments_compare_as_json_not_as_text(tmp_path):
    a = scripted_run(tmp_path, "a", """
        turns:
          - tool_calls:
              - {name: query_order, id: call_1, arguments: '{"order_id": "ORD-2026-001"}'}
          - content: 订单已发货。
    """)
    b = scripted_run(tmp_path, "b", """
        turns:
          - tool_calls:
              - {name: query_order, id: call_x, arguments: '{ "order_id":"ORD-2026-001" }'}
          - content: 订单已发货。
    """)
    c = scripted_run(tmp_path, "c", """
        turns:
          - tool_calls:
              - {name: query_order, id: call_1, arguments: '{"order_id": "ORD-2026-002"}'}
          - content: 订单已发货。
    """)
    same = diff_transcripts(a, b)
    assert same.same, same.first      # spacing and call ids do not matter
    changed = diff_transcripts(a, c)
    (call,) = changed.turns[0].calls
    assert call.status == "changed"
    assert call.arguments == [("$.order_id", "ORD-2026-001", "ORD-2026-002")]
    assert call.result[0][0] == "$.status" or call.result[0][0].startswith("$.")   # the tool answered differently
    assert changed.first["what"] == ('turn 1: query_order arguments differ at $.order_id: '
                                     'A "ORD-2026-001", B "ORD-2026-002"')
    doc = changed.to_dict()
    assert doc["turns"][0]["calls"][0]["arguments_differ"][0] == {
        "path": "$.order_id", "a": "ORD-2026-001", "b": "ORD-2026-002",
        "absent_in_a": False, "absent_in_b": False}


def test_json_differences_name_paths():
    assert json_differences({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}) == []
    diffs = json_differences({"a": 1, "b": [1, 2], "c": True}, {"a": 1.0, "b": [1, 3], "d": 0})
    paths = [p for p, _, _ in diffs]
    assert paths == ["$.a", "$.b[1]", "$.c", "$.d"]        # 1 vs 1.0 differ in type: reported


def test_the_proxied_buggy_loop_differs_from_the_correct_one(made):
    d = diff_transcripts(made["proxy"], made["proxy_forget"])
    assert not d.same
    assert d.delta()["turns"] > 0     # the buggy app keeps asking for query_order


def test_run_diff_plain_and_json(made, capsys):
    c = console()
    assert run_diff(made["run"], made["replay"], False, c) is ExitStatus.OK
    assert "same: every turn, call, argument, result and the stop reason match" in c.export_text()
    assert run_diff(made["run"], made["limit"], True, console()) is ExitStatus.FINDINGS
    doc = json.loads(capsys.readouterr().out)       # exactly one JSON document on stdout
    assert doc["format"] == "agentdbg-diff" and doc["same"] is False
    assert doc["delta"]["stop_reason"]["b"] == "max_turns"
    assert doc["a"]["turns"] == 3 and doc["b"]["turns"] == 1


def test_hostile_text_stays_inert_in_the_plain_diff(made, tmp_path):
    text = made["run"].read_text(encoding="utf-8").replace("SF123456", "SF123456\\u001b]52;c;aGk=\\u0007")
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(text, encoding="utf-8")
    out = render_text(render_diff(diff_transcripts(made["run"], hostile)), width=200)
    assert "\x1b" not in out and "\x07" not in out
    assert "]52;c;aGk=" in out          # shown, as an escape


def test_unreadable_input_is_one_line(made, tmp_path):
    with pytest.raises(InputError, match="no such transcript"):
        run_diff(made["run"], tmp_path / "missing.jsonl", False, console())
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:1:2: invalid JSON"):
        run_diff(bad, made["run"], False, console())


def test_a_formats_round_trip_data_is_not_a_difference(tmp_path):
    """The same run spoken over the Anthropic API keeps each block's original under "wire"
    (agentdbg's own round trip data): two such runs are the same conversation."""
    a = scripted_run(tmp_path, "a", """
        turns:
          - tool_calls:
              - {name: query_order, id: call_1, arguments: '{"order_id": "ORD-2026-001"}'}
          - content: 订单已发货。
    """)
    lines = []
    for line in a.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        for m in ([event.get("message")] + (event.get("messages") or [])):
            for c in (m or {}).get("tool_calls") or []:
                c["wire"] = {"type": "tool_use", "id": "toolu_1", "name": "query_order"}
        lines.append(json.dumps(event, ensure_ascii=False))
    b = tmp_path / "b.jsonl"
    b.write_text("\n".join(lines) + "\n", encoding="utf-8")
    d = diff_transcripts(a, b)
    assert d.same and d.messages is None, d.messages
