"""Property-based: generated messages arrays, transcripts and tools files go through the
loaders, the checker and the renderer; nothing escapes but ``AgentdbgError``.

CI runs a short session; a long one (10,000+ inputs per target) is:

    AGENTDBG_FUZZ_EXAMPLES=10000 python -m pytest tests/hardening/test_fuzz.py -q
"""

import contextlib
import io
import json
import os
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recordings import EXCHANGES, analyse, proxy_exchanges, proxy_recording_events, recording_events
from rich.console import Console

from agentdbg.checker import check
from agentdbg.checker.inputs import load_check_input
from agentdbg.errors import AgentdbgError
from agentdbg.render.view import render_messages
from agentdbg.toolspec import load_tools
from agentdbg.transcript import load_transcript

EXAMPLES = int(os.environ.get("AGENTDBG_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

text = st.text(alphabet=st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["", "call_1", "get_weather", '{"city": "北京"}', '{"city": ', "[]", "null", "\x1b]52;c;x\x07",
     "[bold]x[/bold]"])
json_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=4) |
                          st.dictionaries(text, inner, max_size=4), max_leaves=12)
call = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["call_1", "call_2", "", None]) | text | json_value,
    "type": st.sampled_from(["function", "tool"]) | json_value,
    "function": st.fixed_dictionaries({}, optional={
        "name": st.sampled_from(["get_weather", "a.b", ""]) | json_value,
        "arguments": st.sampled_from(['{"city": "北京"}', "{", '"x"', "{}"]) | json_value}) | json_value,
}) | json_value
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "function"])},
    optional={"content": json_value, "tool_calls": st.lists(call, max_size=3) | json_value,
              "tool_call_id": st.sampled_from(["call_1", "call_2", ""]) | json_value,
              "name": json_value, "reasoning_content": json_value})
body = st.fixed_dictionaries({"messages": st.lists(message, max_size=8)}, optional={
    "tools": st.lists(st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries(
        {"name": st.sampled_from(["get_weather", "bad name"]) | text},
        optional={"parameters": json_value, "strict": st.booleans()})}) | json_value, max_size=3) | json_value,
    "tool_choice": st.sampled_from(["auto", "none", "required", None]) | json_value | st.fixed_dictionaries(
        {"type": st.sampled_from(["function", "tool", "custom"]) | json_value},
        optional={"name": json_value, "function": st.fixed_dictionaries({"name": json_value})}),
    "parallel_tool_calls": json_value, "functions": json_value, "function_call": json_value})
anything = json_value | body | st.lists(message, max_size=6)


def render(messages, findings):
    Console(file=io.StringIO(), width=80).print(render_messages(messages, findings=findings))


@SETTINGS
@given(doc=anything, profile=st.sampled_from(["openai", "ollama", "anthropic-proxy", "mistral",
                                              "positional", "kimi-thinking", "deepseek-reasoner-legacy"]))
def test_messages_arrays_and_bodies(tmp_path_factory, doc, profile):
    path = tmp_path_factory.mktemp("f") / "in.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    try:
        items = load_check_input(str(path))
    except AgentdbgError:
        return
    for item in items:
        findings = check(item.request, profile)
        render(item.request.messages, findings)


@SETTINGS
@given(lines=st.lists(json_value.map(lambda v: json.dumps(v, ensure_ascii=False)) | text, max_size=6),
       cut=st.integers(min_value=0, max_value=40))
def test_transcripts(tmp_path_factory, lines, cut):
    header = json.dumps({"type": "header", "format": "agentdbg-transcript", "version": 1})
    data = "\n".join([header, *lines]) + "\n"
    path = tmp_path_factory.mktemp("t") / "t.jsonl"
    path.write_text(data[: len(data) - cut] if cut < len(data) - len(header) else data, encoding="utf-8")
    try:
        t = load_transcript(path)
        messages = t.final_messages()
        if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
            render(messages, check(messages))
    except AgentdbgError:
        pass


yaml_text = st.text(alphabet=string.printable + "中文", max_size=200)


@SETTINGS
@given(raw=yaml_text | json_value.map(lambda v: "version: 1\ntools: " + json.dumps(v, ensure_ascii=False)))
def test_tools_files(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("y") / "tools.yaml"
    path.write_text(raw, encoding="utf-8")
    try:
        load_tools(path, resolve=False)
        load_tools(path, resolve=False, lenient=True)
    except AgentdbgError:
        pass


# -- transcripts with odd field types: a real recording, one field changed ------------------

odd = json_value | st.sampled_from([-1, 10**6, 2.5, "x", "", [], {}, [1], ["a"], {"role": 1}, True])


@st.composite
def mutated_recording(draw) -> list[dict]:
    events = recording_events()
    node: Any = draw(st.sampled_from(events))
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, (dict, list)) and child and draw(st.booleans()):
            node = child
            continue
        if isinstance(node, dict) and draw(st.integers(0, 5)) == 0:
            del node[key]
        else:
            node[key] = draw(odd)
        break
    return events


def test_mutated_recordings_are_replayed_or_refused_in_one_line(tmp_path_factory):
    from hostile import assert_inert
    from typer.testing import CliRunner

    from agentdbg.cli import app

    runner = CliRunner()

    @settings(max_examples=max(20, EXAMPLES // 3), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(events=mutated_recording())
    def replay_it(events):
        path = tmp_path_factory.mktemp("m") / "t.jsonl"
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                        encoding="utf-8")
        for args in (["replay", str(path)], ["replay", str(path), "--json"], ["check", str(path)]):
            # a runs folder per example: replays save there, and past 50 of them it is pruned
            # (a line on stderr)
            r = runner.invoke(app, args, env={"AGENTDBG_HOME": str(path.parent / "home")})
            assert r.exit_code in (0, 1, 2, 3, 4, 5, 6, 7, 8), (args, r.output, r.exception)
            assert "internal error" not in r.output and "Traceback" not in r.output, r.output
            if r.exit_code == 2:
                assert r.stderr.count("\n") == 1 and ":" in r.stderr, r.stderr
            if "--json" not in args:      # --json output keeps the data exactly (README, Safety)
                assert_inert(r.output)
    replay_it()


# -- ids and names that are not strings: a real recording, the proxy's analysis --------------

ID_KEYS = {"id", "tool_call_id", "call_id", "tool_use_id", "name", "tool", "previous_response_id",
           "type", "role"}
not_a_string = st.sampled_from([[], {}, ["call_1"], {"id": "call_1"}, 1, 2.5, True, None]) | \
    json_value.filter(lambda v: not isinstance(v, str))


def id_places(node: Any, path: tuple = ()) -> list[tuple]:
    """Where ``node`` holds an id or a name (the paths of those keys)."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, (list, tuple)) \
        else ()
    for key, child in items:
        if key in ID_KEYS and isinstance(node, dict):
            out.append((*path, key))
        out += id_places(child, (*path, key))
    return out


@st.composite
def odd_ids(draw, doc: Any) -> Any:
    """``doc`` with one to three of its ids or names set to something that is not a string."""
    places = id_places(doc)
    for _ in range(draw(st.integers(1, 3))):
        *parents, key = draw(st.sampled_from(places))
        node = doc
        for k in parents:
            node = node[k]
        node[key] = draw(not_a_string)
    return doc


RECORDINGS = {"run": recording_events, **{w: (lambda w=w: proxy_recording_events(w)) for w in EXCHANGES}}


def test_recordings_with_non_string_ids_are_replayed_reported_or_refused(tmp_path_factory):
    """A tool_call_id of [] or {}, a call id that is an object: each command reads it as data
    (the checker's rules name it), never an internal error."""
    from hostile import assert_inert
    from typer.testing import CliRunner

    from agentdbg.cli import app

    runner = CliRunner()
    bases = {name: make() for name, make in RECORDINGS.items()}

    @settings(max_examples=max(20, EXAMPLES // 3), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(events=st.sampled_from(list(bases)).flatmap(
        lambda name: odd_ids(json.loads(json.dumps(bases[name])))))
    def commands(events):
        folder = tmp_path_factory.mktemp("i")
        path = folder / "t.jsonl"
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                        encoding="utf-8")
        for args in (["replay", str(path)], ["replay", str(path), "--json"], ["check", str(path)],
                     ["report", str(path), "-o", str(folder / "r.html")],
                     ["diff", str(path), str(path)],
                     ["export", str(path), "--format", "otlp-json", "--content",
                      "-o", str(folder / "e.json")]):
            r = runner.invoke(app, args, env={"AGENTDBG_HOME": str(folder / "home")})
            assert r.exit_code in (0, 1, 2, 3, 4, 5, 6, 7, 8), (args, r.output, r.exception)
            assert "internal error" not in r.output and "Traceback" not in r.output, r.output
            if r.exit_code == 2:
                assert r.stderr.count("\n") == 1 and ":" in r.stderr, r.stderr
            if "--json" not in args:      # --json output keeps the data exactly (README, Safety)
                assert_inert(r.output)
    commands()


def test_the_proxy_analyses_bodies_with_non_string_ids(tmp_path_factory):
    """Requests and responses whose ids or names are not strings, through the proxy's analysis:
    every exchange is judged and recorded, and what was recorded reads back."""
    from typer.testing import CliRunner

    from agentdbg.cli import app

    runner = CliRunner()

    @settings(max_examples=max(20, EXAMPLES // 3), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(wire=st.sampled_from(list(EXCHANGES)), data=st.data())
    def analysed(wire, data):
        exchanges = data.draw(odd_ids(proxy_exchanges(wire)))
        folder = tmp_path_factory.mktemp("p")
        paths, printed = analyse(wire, exchanges, folder)
        assert not [line for line in printed if "could not analyse" in line], printed
        assert len(paths) >= 1
        for path in paths:
            lines = path.read_text(encoding="utf-8").split("\n")   # not splitlines: U+0085 is text
            types = [json.loads(line)["type"] for line in lines if line]
            assert "request" in types and types[-1] == "stop", types
            for args in (["replay", str(path), "--json"], ["check", str(path)]):
                r = runner.invoke(app, args, env={"AGENTDBG_HOME": str(folder / "home")})
                assert r.exit_code in (0, 1, 2, 3, 4, 5, 6, 7, 8), (args, r.output, r.exception)
                assert "internal error" not in r.output, r.output
    analysed()


# -- streams the proxy relays, with events of any shape ----------------------------------------

def streamed(wire_name: str) -> list[tuple[dict, list[bytes]]]:
    """Each exchange of one conversation in ``wire_name``: its request, and its response as
    the server-sent events of a real stream (the encoders serve uses)."""
    from agentdbg.wire.codec import get as codec

    wire = codec(wire_name)
    out = []
    for request, response in proxy_exchanges(wire_name):
        reply = wire.reply(response)
        native = wire.answer(reply.message, request, {"prompt_tokens": 1, "completion_tokens": 1},
                             None)
        events = b"".join(wire.stream(native, {**request, "stream": True})).split(b"\n\n")
        out.append((request, [e + b"\n\n" for e in events if e.strip()]))
    return out


odd_event = st.sampled_from([b"[]", b'"str"', b"null", b"5", b'{"choices":5}', b"{bad json",
                             b'{"choices":[5]}', b'{"choices":[{"delta":[]}]}',
                             b'{"choices":[{"delta":{"tool_calls":{}}}]}',
                             b'{"choices":[{"delta":{"tool_calls":[{"index":[]}]}}]}',
                             b'{"type": 5}', b'{"type": "content_block_delta", "index": {}}',
                             b"[" * 3000]) | json_value.map(lambda v: json.dumps(v).encode())


@st.composite
def odd_stream(draw, events: list[bytes]) -> bytes:
    """``events`` with some data lines replaced by odd JSON, or with a field of theirs changed."""
    events = list(events)
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, len(events) - 1))
        head, _, data = events[k].rstrip(b"\n").rpartition(b"data: ")
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):  # an odd event an earlier round put there
            doc = None
        if isinstance(doc, dict) and draw(st.booleans()):
            node: Any = doc
            while True:
                keys = list(node) if isinstance(node, dict) else list(range(len(node)))
                if not keys:
                    break
                key = draw(st.sampled_from(keys))
                if isinstance(node[key], (dict, list)) and node[key] and draw(st.booleans()):
                    node = node[key]
                    continue
                node[key] = draw(odd)
                break
            data = json.dumps(doc).encode()
        else:
            data = draw(odd_event)
        events[k] = head + b"data: " + data + b"\n\n"
    return b"".join(events)


def test_streams_with_events_of_any_shape_are_recorded_with_notes(tmp_path_factory):
    """A relayed stream whose events are arrays, strings, numbers or objects of the wrong shape:
    the analysis reads what it can, notes the rest, and records the request and the response."""
    from agentdbg.server.proxy.reading import read_reply
    from agentdbg.wire.codec import get as codec

    bases = {w: streamed(w) for w in EXCHANGES}

    @settings(max_examples=max(20, EXAMPLES // 3), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(wire=st.sampled_from(list(EXCHANGES)), data=st.data())
    def relayed(wire, data):
        exchanges = [(request, data.draw(odd_stream(events))) for request, events in bases[wire]]
        for _, stream in exchanges:
            read_reply(codec(wire), 200, stream, True)     # never raises
        paths, printed = analyse(wire, exchanges, tmp_path_factory.mktemp("s"), stream=True)
        # the analysis got through (an event it could not read is the stream's note, not this)
        assert not [line for line in printed if line.startswith("agentdbg could not")], printed
        for path in paths:
            lines = path.read_text(encoding="utf-8").split("\n")
            types = [json.loads(line)["type"] for line in lines if line]
            assert types[1] == "request" and types[2] in ("response", "model_error"), types
    relayed()


# -- schemas with hostile patterns and refs --------------------------------------------------

PATTERNS = ["^(a+)+$", "(a|aa)*b", r"^(\w+\s?)*$", "(?=a)", r"(a)\1", "[", "(?<n>a)\\k<n>",
            "\\u00e9", "^[a-z]{1,64}$", "\ud800", "a{1000}{1000}"]
REFS = ["http://127.0.0.1:9/x.json", "https://example.invalid/s", "file:///etc/passwd", "#",
        "#/$defs/a", "#/nope", "other.json#/a", "urn:x", ""]
schema = st.recursive(
    st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["object", "string", "integer", "array"]) | json_value,
        "pattern": st.sampled_from(PATTERNS) | text,
        "$ref": st.sampled_from(REFS) | text,
        "$schema": st.sampled_from(["http://json-schema.org/draft-07/schema#",
                                    "https://json-schema.org/draft/2019-09/schema",
                                    "http://json-schema.org/draft-04/schema#"]) | json_value,
        "format": st.sampled_from(["regex", "email", "uri"])}),
    lambda inner: st.fixed_dictionaries({}, optional={
        "properties": st.dictionaries(st.sampled_from(["a", "b", "aaaa!"]) | text, inner, max_size=3),
        "patternProperties": st.dictionaries(st.sampled_from(PATTERNS) | text, inner, max_size=2),
        "additionalProperties": inner | st.booleans(),
        "unevaluatedProperties": inner | st.booleans(),
        "items": inner, "allOf": st.lists(inner, max_size=2), "anyOf": st.lists(inner, max_size=2),
        "$defs": st.dictionaries(st.just("a"), inner, max_size=1),
        "$ref": st.sampled_from(REFS)}),
    max_leaves=8)
hostile_instance = st.recursive(
    st.sampled_from(["a" * 34 + "!", "a" * 5000 + "!", "\ud800", "é", 1, None]) | json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["a", "aaaaaaaaaaaaaaaaaaaaaaaaa!", "b"]) | text, inner, max_size=3),
    max_leaves=8)


def test_hostile_schemas_never_fetch_read_or_hang(tmp_path_factory):
    import sys
    import time

    from agentdbg.checker.lint import lint
    from agentdbg.checker.rules.calls import schema_problems
    from agentdbg.engine.executor import ToolExecutor
    from agentdbg.toolspec import ToolSet, ToolSpec

    touched: list = []
    watching = [True]

    def audit(event, args):
        if watching[0] and (event in ("socket.connect", "socket.getaddrinfo", "urllib.Request")
                            or (event == "open" and str(args[0]).startswith("/etc/passwd"))):
            touched.append((event, args))
    sys.addaudithook(audit)  # cannot be removed: it stops recording when the test ends

    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(params=schema, value=hostile_instance)
    def validate(params, value):
        start = time.monotonic()
        params = {**params, "type": "object"} if isinstance(params, dict) else params
        args = json.dumps({"a": value, "aaaa!": value}, ensure_ascii=False)
        schema_problems(params, args, json.loads(args))
        spec = ToolSpec(name="f", description="Use when asked.", parameters=params,
                        handler_kind="fixture", handler={"ok": 1})
        toolset = ToolSet(path=tmp_path_factory.getbasetemp(), tools=[spec])
        lint(toolset)
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}
        (outcome,) = ToolExecutor(toolset).run([call], approved=lambda c: True)
        assert outcome.ok or outcome.error_type in ("invalid_arguments", "invalid_json")
        path = tmp_path_factory.mktemp("s") / "t.yaml"
        path.write_text(json.dumps({"version": 1, "tools": [
            {"name": "f", "description": "Use when asked.", "parameters": params,
             "handler": {"fixture": 1}}]}), encoding="utf-8")
        with contextlib.suppress(AgentdbgError):
            load_tools(path, resolve=False, lenient=True)
        assert time.monotonic() - start < 5
        assert touched == []
    try:
        validate()
    finally:
        watching[0] = False


# -- schemas whose work multiplies: the budget holds for every keyword --------------------------

DEFS = [f"d{i}" for i in range(8)]
ref = st.sampled_from(DEFS).map(lambda name: {"$ref": f"#/$defs/{name}"})
refs = st.lists(ref, min_size=1, max_size=16)
OVERLAPPING = [".", "^a", "a$", "a", "^.*$"]
costly_keywords = st.fixed_dictionaries({}, optional={
    "allOf": refs, "anyOf": refs, "oneOf": refs, "not": ref, "if": ref, "then": ref, "else": ref,
    "dependentSchemas": st.fixed_dictionaries({"a": ref}),
    "properties": st.fixed_dictionaries({"a": ref}, optional={"b": ref}),
    "patternProperties": st.dictionaries(st.sampled_from(OVERLAPPING), ref, max_size=5),
    "additionalProperties": ref | st.booleans(), "unevaluatedProperties": ref | st.booleans(),
    "items": ref, "prefixItems": st.lists(ref, max_size=3), "contains": ref,
    "unevaluatedItems": ref | st.booleans(), "uniqueItems": st.booleans(),
    "type": st.sampled_from(["object", "array", "string", "integer"]),
    "enum": st.lists(json_scalar, max_size=3), "minContains": st.integers(0, 3)})
costly_schema = st.fixed_dictionaries({
    "$defs": st.fixed_dictionaries({name: costly_keywords for name in DEFS}),
    "properties": st.fixed_dictionaries({"a": ref})}).map(lambda s: {"type": "object", **s})


def _deep(depth: int, width: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value, "aa": value} if width > 1 else {"a": value}
    return value


costly_instance = st.tuples(st.integers(0, 40), st.integers(1, 2), st.integers(0, 2000), json_scalar).filter(
    lambda t: max(t[2], 1) * t[1] ** t[0] <= 20_000).map(   # at most 20,000 values (about 200 KB)
    lambda t: {"a": [_deep(t[0], t[1], t[3])] * t[2] if t[2] else _deep(t[0], t[1], t[3])})


def test_schema_work_is_bounded_whatever_the_schema(tmp_path_factory):
    """Any schema of this shape (eight definitions referring to each other through every
    applicator, up to 16 at a time, recursion included) with any instance of this shape (up
    to 40 levels, up to 2,000 items): the check, the request's check, the executor and the
    offline planner each end within their budget — a result, or left unchecked."""
    import time

    from agentdbg import schemas
    from agentdbg.engine.executor import ToolExecutor
    from agentdbg.providers.base import ModelRequest
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import ToolSet, ToolSpec

    @settings(max_examples=max(20, EXAMPLES // 3), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(params=costly_schema, value=costly_instance)
    def bounded(params, value):
        args = json.dumps(value)
        value = json.loads(args)              # distinct objects, as arguments arrive
        started = time.process_time()
        validator, _ = schemas.checkable(params)
        if validator is not None:
            with contextlib.suppress(schemas.TooCostly, schemas.Uncheckable):
                schemas.problems(validator, value)
        assert time.process_time() - started < 3, "one check"
        started = time.process_time()
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}
        tools = [{"type": "function", "function": {"name": "f", "description": "Use when asked.",
                                                   "parameters": params}}]
        check({"model": "m", "tools": tools, "messages": [
            {"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": [call] * 3}]})
        assert time.process_time() - started < 3, "a request's check"
        started = time.process_time()
        spec = ToolSpec(name="f", description="Use when asked.", parameters=params,
                        handler_kind="fixture", handler={"ok": 1})
        (outcome,) = ToolExecutor(ToolSet(path=tmp_path_factory.getbasetemp(), tools=[spec])).run(
            [call], approved=lambda c: True)
        assert outcome.ok or outcome.error_type in ("invalid_arguments", "invalid_json")
        assert time.process_time() - started < 3, "the executor"
        started = time.process_time()
        OfflineModel().complete(ModelRequest(messages=[{"role": "user", "content": "a aa 5 x"}],
                                             tools=tools))
        assert time.process_time() - started < 3, "the planner"
    bounded()
