"""The shortcuts ``check`` takes on big inputs give the verdicts the long way gives."""

import gc
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentdbg.checker import api
from agentdbg.checker.api import checked
from agentdbg.checker.findings import RULES
from agentdbg.checker.profiles import PROFILES
from agentdbg.checker.request import MISSING, CheckRequest
from agentdbg.cli import app
from agentdbg.messages import duplicate_keys, repeated_keys
from agentdbg.wire import detect

TRICKY = [
    '{"a":1,"a":2}',
    '{"a":"x:y","a":1}',            # a ':' in a string hides nothing
    '{"a":1,"b":"::","a":2}',
    '{"a:b":1}',                     # a ':' in a key
    '{"a":{"b":1,"b":2}}',
    '[{"a":1},{"a":1,"a":3}]',
    '{"a":[{"x":1,"x":2}]}',
    '{"k": "v", "k2": {"k": 1}}',    # one name at two depths is no repeat
    '{"city":"北京"}',
    '{"a": {"b": {"c": {"d": 1, "d": 2}}}, "e": "1:2:3"}',
    '{}',
    '[]',
]


@pytest.mark.parametrize("text", TRICKY)
def test_repeated_keys_agrees_with_a_full_parse(text):
    assert repeated_keys(text, json.loads(text)) == duplicate_keys(text)


def test_a_repeated_key_in_answered_arguments_is_still_reported(tmp_path):
    doc = {"messages": [
        {"role": "user", "content": "mail"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "send", "arguments": '{"to":"a@x","to":"b@y"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sent"}]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = CliRunner().invoke(app, ["check", str(path), "--json"])
    assert [f["rule"] for f in json.loads(r.stdout)["findings"]] == ["arguments-duplicate-key"]


def test_a_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "next"}]).encode())
    r = CliRunner().invoke(app, ["check", str(path), "--json"])
    assert r.exit_code == 1
    assert [f["rule"] for f in json.loads(r.stdout)["findings"]] == ["missing-tool-response"]


@pytest.mark.parametrize("content", [b'{"messages": [', b"", b"\xff\xfe"])
def test_the_collector_is_back_on_after_a_check_of_bad_input(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert gc.isenabled()
    r = CliRunner().invoke(app, ["check", str(path)])
    assert r.exit_code == 2
    assert gc.isenabled()


# -- a clean history in one pass (checker/clean.py) gives the rules' verdict ----------------

def _call(cid, name, args, kind="function"):
    call = {"type": kind, "function": {"name": name, "arguments": args}}
    if cid is not None:
        call["id"] = cid
    return call


IDS = st.sampled_from(["a", "b", "c", "", None, 7])
ARGS = st.sampled_from(['{"x": 1}', '{"x": "1"}', '{"x":1,"x":2}', "{", "[]", "", "{}"])
CALL = st.one_of(
    st.builds(_call, IDS, st.sampled_from(["f", "g", "bad name", ""]), ARGS),
    st.builds(_call, st.just("a"), st.just("f"), st.just("{}"), st.sampled_from(["custom", "x"])),
    st.just("not a call"))
ODD = st.one_of(   # one message that may be anything the rules look at
    st.builds(lambda c: {"role": "user", "content": c}, st.sampled_from(["q", "", None, 3, [{"type": "text", "text": "q"}]])),
    st.builds(lambda: {"role": "user"}),
    st.builds(lambda c: {"role": "assistant", "content": c}, st.sampled_from(["t", "", None, {}])),
    st.builds(lambda calls, c: {"role": "assistant", "content": c, "tool_calls": calls},
              st.one_of(st.lists(CALL, max_size=3), st.just(None), st.just("x")),
              st.sampled_from([None, "", "t"])),
    st.builds(lambda cid, c: {"role": "tool", "content": c, **({} if cid is None else {"tool_call_id": cid})},
              IDS, st.sampled_from(["r", "", None, [{"type": "text", "text": "r"}], 1])),
    st.builds(lambda r: {"role": r, "content": "s"}, st.sampled_from(["system", "developer", "function", "bot", None])),
    st.builds(lambda: {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}),
    st.builds(lambda: {"role": "assistant", "content": None, "tool_calls": [_call("z", "f", "{}")],
                       "reasoning_content": "r"}),
    st.just("not a message"),
)


@st.composite
def clean_turn(draw):
    """A user message, then calls answered in full (in any order), then the answer."""
    n = draw(st.integers(0, 3))
    ids = [draw(st.sampled_from([f"call_{draw(st.integers(0, 10**6))}_{k}", f"abc{k}efghi"]))
           for k in range(n)]
    turn = [{"role": "user", "content": draw(st.sampled_from(["q", "问"]))}] * draw(st.integers(1, 2))
    if ids:
        args = st.sampled_from(['{"x": 1}', '{"x": "1"}', "{}"] * 6 + [
            '{"x":1,"x":2}', "{", "[]", '{"x": NaN}', '{"x": "\\ud800"}', '{"x": {"y": 1, "y": 2}}'])
        names = st.sampled_from(["f"] * 8 + ["g", "bad name"])
        turn.append({"role": "assistant", "content": draw(st.sampled_from([None, "", "t"])),
                     "tool_calls": [_call(i, draw(names), draw(args)) for i in ids]})
        turn += [{"role": "tool", "tool_call_id": i, "content": draw(st.sampled_from(["r", "r", ""]))}
                 for i in draw(st.permutations(ids))]
    turn += [{"role": "assistant", "content": "done"}] * draw(st.integers(1, 2))
    return turn


@st.composite
def histories(draw):
    """Mostly well formed, with now and then one message of any shape at any place."""
    messages = [m for turn in draw(st.lists(clean_turn(), max_size=4)) for m in turn]
    for _ in range(draw(st.integers(0, 2))):
        messages.insert(draw(st.integers(0, len(messages))), draw(ODD))
    if messages and draw(st.booleans()):
        del messages[draw(st.integers(0, len(messages) - 1))]
    return messages[:draw(st.integers(0, len(messages)))] if draw(st.booleans()) else messages


TOOL_DEFS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}]


@pytest.mark.parametrize("profile", sorted(PROFILES))
@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(messages=histories(), tools=st.booleans(), in_progress=st.booleans())
def test_the_one_pass_agrees_with_the_rules(monkeypatch_module, profile, messages, tools, in_progress):
    request = CheckRequest(messages=messages, tools=TOOL_DEFS if tools else MISSING)
    fast, ctx = checked(request, profile, in_progress=in_progress)
    with monkeypatch_module.context() as m:
        m.setattr(api, "clean", lambda ctx: False)
        slow, _ = checked(request, profile, in_progress=in_progress)
    assert [f.to_dict() for f in fast] == [f.to_dict() for f in slow]
    if ctx.clean:
        assert not any(f.rule in MESSAGE_RULES for f in slow)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as m:
        yield m


MESSAGE_RULES = {r for r, info in RULES.items() if info.scope == "chat"} - {
    "empty-messages", "too-many-tools", "tool-params-without-tools", "bad-tool-choice",
    "strict-schema-invalid"}


def _bench_history(rounds):
    messages = []
    for r in range(rounds):
        a, b = f"call_{r}_a", f"call_{r}_b"
        messages += [
            {"role": "user", "content": f"第 {r} 问"},
            {"role": "assistant", "content": None, "tool_calls": [
                _call(a, "get_weather", '{"city":"北京"}'), _call(b, "get_weather", '{"city":"上海"}')]},
            {"role": "tool", "tool_call_id": b, "content": "29"},
            {"role": "tool", "tool_call_id": a, "content": "24"},
            {"role": "assistant", "content": "上海更热。"}]
    return messages


def test_a_clean_history_is_judged_without_the_pairing_analysis():
    findings, ctx = checked(CheckRequest(messages=_bench_history(50)), "openai")
    assert findings == [] and ctx.clean and ctx._pairing is None


@pytest.mark.parametrize("profile", ["deepseek-thinking", "positional", "gemini", "ollama"])
def test_profiles_with_rules_of_their_own_take_the_long_way(profile):
    assert not checked(CheckRequest(messages=_bench_history(3)), profile)[1].clean


def test_a_clean_history_without_tools_is_not_noted_as_skipped(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(_bench_history(3)), encoding="utf-8")
    r = CliRunner().invoke(app, ["check", str(path), "--json"])
    assert json.loads(r.stdout) == {"ok": True, "findings": []}
    ends_on_call = _bench_history(3)[:-3]
    path.write_text(json.dumps(ends_on_call), encoding="utf-8")
    r = CliRunner().invoke(app, ["check", str(path), "--json"])
    assert "tool checks skipped" in json.loads(r.stdout)["notes"][0]


# -- a one-document file is told from other tools' records by its bytes ---------------------

def test_a_messages_file_is_judged_without_loading_the_importers(tmp_path):
    """What another tool's record would need (the transcript package, the trace readers) is
    not loaded for a file whose bytes say it is none (issue 26: 0.1 s of a 100k check)."""
    path = tmp_path / "h.json"
    path.write_text(json.dumps(_bench_history(3)), encoding="utf-8")
    code = ("import sys; from agentdbg.cli import main; sys.argv = ['agentdbg', 'check', sys.argv[1], "
            "'--json']\ntry: main()\nexcept SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('agentdbg.transcript', "
            "'agentdbg.traces.'))))")
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         timeout=60)
    assert run.stdout.splitlines() == ['{"ok": true, "findings": []}', "[]"], run.stderr[-2000:]


def test_a_session_whose_start_shows_no_marks_is_still_imported(tmp_path):
    """A Claude Code session whose first 64 KB hold none of its marks is recognised once read
    (the marks only spare reading a large session whole)."""
    from tests.traces.support import CLAUDE

    path = tmp_path / "session.jsonl"
    filler = json.dumps({"type": "file-history-snapshot", "note": "x" * 70_000})
    path.write_text(filler + "\n" + CLAUDE.read_text(encoding="utf-8"), encoding="utf-8")
    r = CliRunner().invoke(app, ["check", str(path)])
    assert r.exit_code == 0, r.output
    assert "no findings (3 recorded request(s)" in r.output


# -- format recognition counts Chat marks only when an Anthropic mark is there --------------

def _marks_in_one_pass(messages):
    """The count as it was made before (one pass counting both), the reference."""
    a = c = 0
    for m in messages:
        if not isinstance(m, dict):
            continue
        c += 3 * (m.get("role") in ("tool", "function", "developer"))
        c += 3 * ("tool_calls" in m or "tool_call_id" in m or "function_call" in m)
        content = m.get("content")
        for part in content if isinstance(content, list) else []:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in detect.ANTHROPIC_BLOCKS or (isinstance(kind, str) and kind.endswith("_tool_result")) \
                    or (kind == "image" and "source" in part):
                a += 3
            elif kind in detect.CHAT_PARTS:
                c += 2
    return a, c


def _reference(doc):
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list) and not (
            isinstance(doc.get("contents"), list) and "messages" not in doc):
        a1, c1 = detect._body_marks(doc)
        a2, c2 = _marks_in_one_pass(doc["messages"])
        return "anthropic" if a1 + a2 > c1 + c2 else "chat"
    if isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc) and not all(
            isinstance(x.get("parts"), list) and "content" not in x for x in doc):
        a, c = _marks_in_one_pass(doc)
        r = detect._responses_marks(doc)
        return "responses" if r and r >= max(a, c) else "anthropic" if a > c else "chat"
    return detect.detect_format(doc)


PART = st.one_of(st.sampled_from(["tool_use", "image_url", "text", "input_text",
                                  "web_search_tool_result", "refusal", 5]).map(lambda t: {"type": t}),
                 st.just({"type": "image", "source": {}}), st.just("text"))
ANY_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "developer", "function", None])},
    optional={"content": st.one_of(st.just("t"), st.none(), st.lists(PART, max_size=3)),
              "tool_calls": st.just([]), "tool_call_id": st.just("a"), "function_call": st.just({}),
              "type": st.sampled_from(["message", "function_call", "other"])})
BODY = st.fixed_dictionaries({"messages": st.lists(st.one_of(ANY_MESSAGE, st.just(3)), max_size=6)},
                             optional={"system": st.just("s"), "max_completion_tokens": st.just(9),
                                       "tool_choice": st.sampled_from(["auto", {"type": "any"}]),
                                       "tools": st.just([{"name": "f", "input_schema": {}}])})


@settings(max_examples=1000, deadline=None)
@given(st.one_of(BODY, st.lists(ANY_MESSAGE, max_size=6)))
def test_format_recognition_agrees_with_counting_both_in_one_pass(doc):
    assert detect.detect_format(doc) == _reference(doc)
