"""Replaying long recordings: the verdict of a long replay is the one it always was, the
``--json`` document is strict JSON, and a recording with many user actions prints a bounded
summary of them."""

import json
import math

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

TURNS = 300


def record(path, turns=TURNS):
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.scripted import ScriptedModel, parse_turns
    from agentdbg.toolspec import bundled_tools_path, load_tools
    from agentdbg.transcript import start_transcript

    cities = ["北京", "上海", "杭州"]
    script = [{"tool_calls": [{"name": "get_weather", "id": f"call_{i}",
                               "arguments": {"city": cities[i % 3]}}]} for i in range(turns - 1)]
    script.append({"content": "done"})
    s = Session.for_question(ScriptedModel(parse_turns(script, "b"), "b"),
                             load_tools(bundled_tools_path()), "q",
                             RunConfig(max_turns=turns, max_tool_calls=turns, repeat_limit=turns),
                             precheck=check_model_request)
    writer = start_transcript(s, path, model="m", provider="scripted", base_url=None, question="q")
    list(s.run())
    writer.close()


def events(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write(path, evs):
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in evs), encoding="utf-8")


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_long_replays_verdict_is_unchanged(tmp_path, monkeypatch):
    """Requests 120 and 200 of a 300-turn recording sent defects (a result answering no call,
    an assistant message without content or calls): the verdict names each once, at the request
    that first sent it, as before replay was made faster (the expected lines are main's)."""
    monkeypatch.setenv("AGENTDBG_HOME", str(tmp_path / "home"))
    path = tmp_path / "long.jsonl"
    record(path)
    evs = events(path)
    for e in evs:
        if e.get("type") == "request" and e.get("turn") == 120:
            e["append"].append({"role": "tool", "tool_call_id": "call_nobody", "content": "x"})
        if e.get("type") == "request" and e.get("turn") == 200:
            e["append"].append({"role": "assistant", "content": None})
    write(path, evs)
    r = invoke("replay", path, "--json", "--save", tmp_path / "again.jsonl")
    assert r.exit_code == 1, r.output
    problems = [line for line in r.stderr.splitlines() if line.startswith("agentdbg: error: replay ")]
    assert problems == EXPECTED, problems


EXPECTED = [
    "agentdbg: error: replay diverged: first difference at messages[239]: recorded {\"role\": \"tool\", \"tool_call_id\": \"call_nobody\", \"content\": \"x\"}, now null",
    "agentdbg: error: replay stop reason: recorded completed, replayed model_error",
    "agentdbg: error: replay final messages: first difference at messages[239]: recorded {\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"call_119\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"杭州\\\"}\"}}]}, now null",
    "agentdbg: error: replay request 120: tool-call-id-mismatch at message 239: tool_call_id 'call_nobody' is not an id of the tool_calls in message 237 ('call_118'); use the exact id the model returned",
    "agentdbg: error: replay request 200: null-content at message 399: content is null on an assistant message; send a string (\"\" if there is nothing to say)",
]


def test_the_json_document_is_strict_json():
    """A non-finite number is written as null: the document is JSON every parser reads
    (Python's encoder wrote ``NaN``, which jq and JavaScript refuse)."""
    from agentdbg.drivers.batch import document_text

    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    doc = {"duration_ms": math.nan, "usage": {"x": math.inf}, "ok": 1.5}
    assert json.loads(document_text(doc), parse_constant=refuse) == {
        "duration_ms": None, "usage": {"x": None}, "ok": 1.5}


@pytest.mark.parametrize("value", [1e-05, 123.456, 1e16, -0.0])
def test_numbers_keep_their_value(value):
    from agentdbg.drivers.batch import document_text

    doc = {"a": [value, {"b": value}], "c": "北京\n\u2028", "d": [], "e": {}}
    assert json.loads(document_text(doc)) == doc
    assert math.copysign(1, json.loads(document_text({"v": value}))["v"]) == math.copysign(1, value)


def test_what_orjson_refuses_is_written_as_before():
    from agentdbg.drivers.batch import document_text

    doc = {"big": 2**70, "lone": "\ud800", "deep": [[[[]]]]}
    assert document_text(doc) == json.dumps(doc, indent=2, ensure_ascii=True)


def test_many_recorded_actions_print_a_bounded_summary(tmp_path, monkeypatch):
    """150 recorded 'send' actions: the first ACTIONS_SHOWN one line each where they were
    re-applied, then one line counting the rest; the replay still ends as recorded."""
    from agentdbg.drivers.batch import ACTIONS_SHOWN
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import bundled_tools_path, load_tools
    from agentdbg.transcript import start_transcript

    monkeypatch.setenv("AGENTDBG_HOME", str(tmp_path / "home"))
    path = tmp_path / "sends.jsonl"
    s = Session.for_question(OfflineModel(), load_tools(bundled_tools_path()), "北京天气怎么样?",
                             RunConfig(approve="all"))
    writer = start_transcript(s, path, model="offline", provider="offline", base_url=None,
                              question="q")
    s.step()
    for _ in range(ACTIONS_SHOWN + 50):
        s.send_once()
    while not s.done:
        s.step()
    writer.close()
    r = invoke("replay", path, "--save", tmp_path / "again.jsonl")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    first = next(k for k, line in enumerate(lines) if line.startswith("✎"))
    marked = [line for line in lines if line.startswith("✎")]
    assert marked[:ACTIONS_SHOWN] == [
        "✎ you sent a request the checker had blocked (recorded; re-applied here)"] * ACTIONS_SHOWN
    assert marked[ACTIONS_SHOWN:] == [
        f"✎ 50 more recorded action(s) re-applied here, not shown one by one (a replay shows its "
        f"first {ACTIONS_SHOWN})"]
    assert lines.index(marked[-1]) == first + ACTIONS_SHOWN    # where they were re-applied


def test_a_replay_in_process_leaves_the_garbage_collector_as_it_found_it(tmp_path, monkeypatch):
    """Batch replay collects less often while it runs (drivers/replay.fewer_collections);
    a test's CliRunner runs it inside a longer process, which must get its own settings
    back, with nothing left frozen."""
    import gc

    monkeypatch.setenv("AGENTDBG_HOME", str(tmp_path / "home"))
    path = tmp_path / "short.jsonl"
    record(path, turns=5)
    before = gc.get_threshold()
    r = invoke("replay", path, "--json")
    assert r.exit_code == 0, r.output
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_verdict_judges_the_requests_the_replay_read(tmp_path):
    """The verdict judges the requests as the replay read them, in the same pass: a request
    appended to the file after the replay reached its end (a proxy still recording the
    conversation) was not replayed and is not judged. The verdict used to read the file again
    and report a defect of a request it never replayed."""
    from agentdbg.engine.replaying import Replay, replay_problems, replay_session

    path = tmp_path / "long.jsonl"
    record(path, turns=30)
    evs = events(path)
    session, model = replay_session(path)
    for _ in Replay(session, model).steps():
        pass
    later = json.loads(json.dumps(next(e for e in evs if e.get("type") == "request"
                                       and e.get("turn") == 30)))
    later.update(seq=evs[-1]["seq"] + 1, turn=31, prefix=0,
                 append=[{"role": "tool", "tool_call_id": "call_nobody", "content": "x"}])
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(later, ensure_ascii=False) + "\n")
    assert replay_problems(path, session, model) == []
    # the same file replayed from the start: that request is replayed and judged
    session, model = replay_session(path)
    for _ in Replay(session, model).steps():
        pass
    assert any("request 31: " in p for p in replay_problems(path, session, model))


def test_replay_json_does_without_rich(tmp_path):
    """``replay --json`` writes its document itself and prints nothing through the console:
    Rich (45 ms of a 1,000-turn replay's second) is not imported; the text view still is.
    Nor is the conversation model (its dataclasses: 20 ms), which a chat recording needs not."""
    import subprocess
    import sys

    path = tmp_path / "short.jsonl"
    record(path, turns=3)
    code = ("import sys\nfrom agentdbg.cli import main\nsys.argv = ['agentdbg', 'replay', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print('RICH', 'rich.console' in sys.modules, code, file=sys.stderr)\n"
            "print('MODEL', 'agentdbg.conversation' in sys.modules, file=sys.stderr)\n")
    env = {**__import__("os").environ, "AGENTDBG_HOME": str(tmp_path / "home")}
    json_run = subprocess.run([sys.executable, "-c", code, str(path), "--json", "--save",
                               str(tmp_path / "a.jsonl")], capture_output=True, text=True, env=env)
    assert json.loads(json_run.stdout)["stop_reason"] == "completed"
    assert "RICH False 0" in json_run.stderr, json_run.stderr
    assert "MODEL False" in json_run.stderr, json_run.stderr
    text_run = subprocess.run([sys.executable, "-c", code, str(path), "--save",
                               str(tmp_path / "b.jsonl")], capture_output=True, text=True, env=env)
    assert "RICH True 0" in text_run.stderr, text_run.stderr
    assert "replayed turn 3" in text_run.stdout


def test_replay_json_loads_nothing_it_does_not_use(tmp_path):
    """``replay --json --save`` of a recording made with tools reads no tools file and runs no
    MCP server nor command tool: the MCP configuration parser (its dataclass, 5 ms), the run
    tree of a multi-agent run (only to list one) and ``tempfile`` are not imported, and the
    CJK character set of YAML folding (7.6 ms to compile) is not compiled. Each was paid at
    every replay."""
    import re
    import subprocess
    import sys

    from agentdbg.toolspec import CJK_CHARS

    path = tmp_path / "short.jsonl"
    record(path, turns=3)
    unused = ["agentdbg.mcp.config", "agentdbg.transcript.tree", "tempfile"]
    # what the interpreter had before agentdbg (a site .pth may import tempfile) is not ours
    code = ("import re, sys\nbefore = set(sys.modules)\nfrom agentdbg.cli import main\n"
            "sys.argv = ['agentdbg', 'replay', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            f"print('LOADED', [m for m in {unused!r} if m in set(sys.modules) - before], code,"
            " file=sys.stderr)\n"
            "print('PATTERNS', [k[1] for k in re._cache], file=sys.stderr)\n")
    env = {**__import__("os").environ, "AGENTDBG_HOME": str(tmp_path / "home")}
    run = subprocess.run([sys.executable, "-c", code, str(path), "--json", "--save",
                          str(tmp_path / "a.jsonl")], capture_output=True, text=True, env=env)
    assert json.loads(run.stdout)["stop_reason"] == "completed"
    assert "LOADED [] 0" in run.stderr, run.stderr
    patterns = next(line for line in run.stderr.splitlines() if line.startswith("PATTERNS"))
    assert repr(CJK_CHARS) not in patterns and "\\u2e80" not in patterns, patterns
    assert re.match(CJK_CHARS, "的") and not re.match(CJK_CHARS, "한")
