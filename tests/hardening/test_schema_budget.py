"""A schema's work is bounded for every keyword, decided before it runs (issue 21).

``$defs/d_i = {allOf: [{$ref: d_i+1}, {$ref: d_i+1}]}`` doubles the work per level: 1.2 s at
16 levels, unbounded at 40, in ``check``, ``run``, ``serve`` and the proxy; the offline
planner blew up on ``allOf`` x16 per level. Now a schema over the budget is a lint finding,
left unchecked where it is met (said once), and a check whose instance makes it costly stops
at its step budget. ``uniqueItems`` is linear. Every hostile input here is small, and every
process has a timeout, so a regression fails instead of hanging.
"""

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from proxy_helpers import Proxy, Serve, Upstream

from agentdbg import schemas

LEVELS = 40


def chain(levels: int = LEVELS, fan: int = 2, keyword: str = "allOf", leaf=None, name: str = "x",
          description: str = "x") -> dict:
    """A 1-4 KB schema whose references, expanded, double (``fan``) at every level."""
    defs = {f"d{i}": {keyword: [{"$ref": f"#/$defs/d{i + 1}"}] * fan} for i in range(levels)}
    defs[f"d{levels}"] = leaf or {"type": "string"}
    return {"type": "object", "properties": {name: {"$ref": "#/$defs/d0", "description": description}},
            "required": [name], "$defs": defs}


def overlapping(depth: int = 30) -> tuple[dict, dict]:
    """A small recursive schema (within the static budget) and an instance that makes its
    check exponential: three patterns match the same key at every level."""
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}, "$defs": {"n": {
        "type": "object", "patternProperties": {p: {"$ref": "#/$defs/n"} for p in ("^a", "a$", "a")}}}}
    value: dict = {}
    cur = value
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return schema, {"x": value}


def body(schema: dict, *arguments: dict) -> dict:
    """A request ending on the model's calls (pending: the checker judges their arguments)."""
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": json.dumps(a)}}
             for i, a in enumerate(arguments)]
    return {"model": "m", "tools": [{"type": "function", "function": {
        "name": "t", "description": "Use when asked.", "parameters": schema}}],
        "messages": [{"role": "user", "content": "q"},
                     {"role": "assistant", "content": None, "tool_calls": calls}]}


def agentdbg(*args, cwd, timeout=60):
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "agentdbg", *args], cwd=str(cwd), capture_output=True,
                       text=True, timeout=timeout)
    return r, time.monotonic() - start


# -- the budget itself -----------------------------------------------------------------------

@pytest.mark.parametrize("keyword", ["allOf", "anyOf", "oneOf"])
def test_an_exponential_schema_is_over_budget_before_it_runs(keyword):
    assert schemas.over_budget(chain(LEVELS, keyword=keyword)) is not None
    assert schemas.cost(chain(LEVELS, keyword=keyword)) == schemas.MAX_COST + 1   # counting stops
    assert schemas.over_budget(chain(4, keyword=keyword)) is None
    tree = {"$defs": {"n": {"type": "object", "properties": {
        "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}}, "$ref": "#/$defs/n"}
    assert schemas.over_budget(tree) is None   # recursion is paid per level of the instance


def test_a_check_the_instance_makes_costly_stops_at_its_step_budget():
    schema, value = overlapping()
    assert schemas.over_budget(schema) is None
    started = time.process_time()
    with pytest.raises(schemas.TooCostly):
        schemas.problems(schemas.validator(schema), value)
    assert time.process_time() - started < 5
    v = schemas.validator(schema)                 # a cheap instance is still checked
    assert set(schemas.problems(v, {"x": {"a": 5}})) == {"x/a: 5 is not of type 'object'"}


def test_one_requests_checks_share_one_budget():
    schema, value = overlapping()
    v = schemas.validator(schema)
    with schemas.budget():
        with pytest.raises(schemas.TooCostly):
            schemas.problems(v, value)
        with pytest.raises(schemas.TooCostly):      # nothing left for the next call
            schemas.problems(v, {"x": {"a": {}}})
    assert schemas.problems(v, {"x": {"a": {}}}) == []


# -- where schemas are met -------------------------------------------------------------------

@pytest.mark.parametrize("keyword", ["allOf", "anyOf", "oneOf"])
def test_check_leaves_it_unchecked_and_says_so_once(tmp_path, keyword):
    (tmp_path / "req.json").write_text(json.dumps(body(chain(keyword=keyword), {"x": 5}, {"x": 6})))
    r, took = agentdbg("check", "req.json", cwd=tmp_path)
    assert took < 20 and "Traceback" not in r.stderr, r.stderr
    notes = [line for line in r.stdout.splitlines() if "arguments left unchecked" in line]
    assert len(notes) == 1 and "note: tool 't'" in notes[0] and "more than 10000 parts" in notes[0]
    r, _ = agentdbg("check", "req.json", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert not any(f["rule"] == "arguments-schema-mismatch" for f in doc["findings"])
    assert sum("arguments left unchecked" in n for n in doc["notes"]) == 1


def test_check_stops_a_costly_instance_and_says_so(tmp_path):
    schema, value = overlapping()
    (tmp_path / "req.json").write_text(json.dumps(body(schema, value, value, value)))
    r, took = agentdbg("check", "req.json", cwd=tmp_path)
    assert took < 20, r.stderr
    assert sum("schema steps" in line for line in r.stdout.splitlines()) == 1, r.stdout


def test_the_linter_names_it(tmp_path):
    tools = {"version": 1, "tools": [{"name": "t", "description": "Use when asked.",
                                      "parameters": chain(), "handler": {"fixture": 1}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    r, took = agentdbg("tools", "t.yaml", "--json", cwd=tmp_path)
    assert took < 20
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "schema-too-costly"]
    assert len(found) == 1 and found[0]["tool"] == "t" and found[0]["severity"] == "warning"


def test_run_warns_once_and_runs_the_calls_unchecked(tmp_path):
    tools = {"version": 1, "tools": [{"name": "t", "description": "Use when asked.",
                                      "parameters": chain(), "handler": {"fixture": {"ok": 1}}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    script = {"turns": [{"tool_calls": [{"name": "t", "id": "c1", "arguments": {"x": "a"}},
                                        {"name": "t", "id": "c2", "arguments": {"x": 5}}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script))
    r, took = agentdbg("run", "q", "--tools", "t.yaml", "--script", "s.yaml", cwd=tmp_path)
    assert r.returncode == 0 and took < 30, r.stderr
    warnings = [line for line in r.stderr.splitlines() if "arguments left unchecked" in line]
    assert len(warnings) == 1 and warnings[0].startswith("agentdbg: warning: tool 't'")
    assert "stop: completed" in r.stdout


def test_run_leaves_a_costly_instance_unchecked_and_shows_it(tmp_path):
    schema, value = overlapping()
    tools = {"version": 1, "tools": [{"name": "t", "description": "Use when asked.",
                                      "parameters": schema, "handler": {"fixture": {"ok": 1}}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    script = {"turns": [{"tool_calls": [{"name": "t", "id": "c1", "arguments": value}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script))
    r, took = agentdbg("run", "q", "--tools", "t.yaml", "--script", "s.yaml", "--json", cwd=tmp_path)
    assert r.returncode == 0 and took < 30, r.stderr
    (outcome,) = [m for m in json.loads(r.stdout)["messages"] if m["role"] == "tool"]
    assert json.loads(outcome["content"]) == {"ok": 1}    # run, not refused for what was not found


def test_the_offline_planner_is_bounded(tmp_path):
    leaf = {"type": "string", "pattern": "^ORD-\\d{4}-\\d{3}$"}
    tools = {"version": 1, "tools": [{"name": "u", "description": "查询订单。当用户询问订单时使用。",
                                      "parameters": chain(7, fan=16, leaf=leaf, name="order_id",
                                                          description="订单号，例如 ORD-2026-001"),
                                      "handler": {"fixture": {"ok": 1}}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    assert len(json.dumps(tools)) < 4000
    r, took = agentdbg("run", "订单 ORD-2026-001 到哪里了?", "--tools", "t.yaml", cwd=tmp_path)
    assert r.returncode == 0 and took < 30, r.stderr


def test_serve_answers_and_says_so_once(tmp_path):
    serve = Serve(tmp_path, "--offline")
    try:
        for _ in range(2):
            started = time.monotonic()
            request = urllib.request.Request(serve.url + "/chat/completions", headers={
                "content-type": "application/json"}, data=json.dumps(body(chain(), {"x": 5})).encode())
            with pytest.raises(urllib.error.HTTPError) as answer:   # the call has no result: 400
                urllib.request.urlopen(request, timeout=30)
            assert answer.value.code == 400 and time.monotonic() - started < 20
    finally:
        log = serve.stop()
    assert log.count("arguments left unchecked") == 1, log


def test_the_proxy_records_every_conversation_after_a_hostile_schema(tmp_path):
    upstream = Upstream()
    proxy = Proxy(upstream.url, tmp_path)
    try:
        for i in range(6):
            sent = body(chain(), {"x": 5}) if i == 0 else {
                "model": "m", "messages": [{"role": "user", "content": f"question {i}"}]}
            request = urllib.request.Request(proxy.url + "/chat/completions", headers={
                "content-type": "application/json"}, data=json.dumps(sent).encode())
            urllib.request.urlopen(request, timeout=30).read()
    finally:
        log = proxy.stop()
        upstream.stop()
    assert len(list((tmp_path / "saved").glob("*.jsonl"))) == 6, log
    assert log.count("arguments left unchecked") == 1, log


ANALYSE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from recordings import analyse
exchanges = json.loads(sys.stdin.read())
paths, printed = analyse("chat", exchanges, sys.argv[2])
print(json.dumps([len(paths), printed]))
"""


def test_the_proxys_analysis_says_so_once(tmp_path):
    exchanges = [(body(chain(), {"x": 5}), {"choices": []}), (body(chain(), {"x": 6}), {"choices": []})]
    r = subprocess.run([sys.executable, "-c", ANALYSE, str(Path(__file__).parent), str(tmp_path)],
                       input=json.dumps(exchanges), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    written, printed = json.loads(r.stdout)
    assert written >= 1
    assert sum("arguments left unchecked" in line for line in printed) == 1


# -- uniqueItems ---------------------------------------------------------------------------

UNIQUE = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True,
                                                  "items": {"type": "object"}}}, "required": ["xs"]}


def distinct(n: int, duplicate: bool) -> dict:
    xs = [{"a": i, "b": str(i)} for i in range(n)]
    return {"xs": xs + ([{"b": "7", "a": 7.0}] if duplicate else [])}


def test_unique_items_is_linear_and_still_finds_the_duplicate():
    v = schemas.validator(UNIQUE)
    started = time.process_time()
    assert schemas.problems(v, distinct(8000, duplicate=False)) == []
    assert schemas.problems(v, distinct(8000, duplicate=True)) == [
        "xs: items 7 and 8000 are equal; the items must be unique"]
    assert time.process_time() - started < 10
    assert schemas.problems(v, {"xs": [{"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]}]}) == []


def test_unique_items_in_check_and_run(tmp_path):
    (tmp_path / "req.json").write_text(json.dumps(body(UNIQUE, distinct(3000, duplicate=True))))
    r, took = agentdbg("check", "req.json", "--json", cwd=tmp_path)
    assert took < 30
    (found,) = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "arguments-schema-mismatch"]
    assert "items 7 and 3000 are equal" in found["message"]
    tools = {"version": 1, "tools": [{"name": "t", "description": "Use when asked.",
                                      "parameters": UNIQUE, "handler": {"fixture": {"ok": 1}}}]}
    (tmp_path / "t.yaml").write_text(json.dumps(tools))
    script = {"turns": [{"tool_calls": [{"name": "t", "id": "c1", "arguments": distinct(3000, True)}]},
                        {"content": "done"}]}
    (tmp_path / "s.yaml").write_text(json.dumps(script))
    r, took = agentdbg("run", "q", "--tools", "t.yaml", "--script", "s.yaml", "--json", cwd=tmp_path)
    assert r.returncode == 0 and took < 30, r.stderr
    (result,) = [m for m in json.loads(r.stdout)["messages"] if m["role"] == "tool"]
    assert "items 7 and 3000 are equal" in json.loads(result["content"])["error"]["message"]


def test_the_proxy_says_a_skipped_schema_in_chinese(tmp_path):
    """`proxy --lang zh`: the schema left unchecked is said in Chinese on the proxy's console
    (the tool's name verbatim, the reason in its own words); `check --json` keeps English."""
    upstream = Upstream()
    proxy = Proxy(upstream.url, tmp_path, "--lang", "zh")
    try:
        request = urllib.request.Request(proxy.url + "/chat/completions", headers={
            "content-type": "application/json"}, data=json.dumps(body(chain(), {"x": 5})).encode())
        urllib.request.urlopen(request, timeout=30).read()
    finally:
        log = proxy.stop()
        upstream.stop()
    assert (f"工具 't'：arguments 未检查：展开引用后，这个 schema 超过 {schemas.MAX_COST} 个部分"
            "（agentdbg 对单个 schema 的工作预算）") in log, log
    assert "arguments left unchecked" not in log and "with its references" not in log, log
    assert "✗ 1 个错误，0 个警告：missing-tool-response@1" in log, log   # the call has no result
