"""The offline model: plans from schemas, on the samples and on an unseen tools file."""

import json

from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.offline import OfflineModel


def run(tools, question, **config):
    s = Session.for_question(OfflineModel(), tools, question, RunConfig(**config))
    list(s.run())
    return s


def calls_per_turn(s):
    return [[(c["function"]["name"], json.loads(c["function"]["arguments"]))
             for c in m.get("tool_calls", [])] for m in s.messages if m["role"] == "assistant"]


def test_order_question_makes_two_dependent_calls_then_answers(sample_tools):
    s = run(sample_tools, "订单 ORD-2026-001 到哪里了?")
    assert calls_per_turn(s) == [
        [("query_order", {"order_id": "ORD-2026-001"})],
        [("query_logistics", {"tracking_no": "SF123456"})],
        [],
    ]
    assert s.stop_reason is StopReason.COMPLETED
    assert "杭州转运中心已发出" in s.answer()
    assert "pattern" in s.turns[0].note and "earlier tool result" in s.turns[1].note
    # the seed's exact argument text
    assert s.messages[1]["tool_calls"][0]["function"]["arguments"] == '{"order_id":"ORD-2026-001"}'


def test_weather_comparison_goes_out_in_one_turn(sample_tools):
    s = run(sample_tools, "北京和上海今天哪个更热?")
    assert calls_per_turn(s)[0] == [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    assert len(calls_per_turn(s)) == 2
    answer = s.answer()
    # a reply in the question's language, in sentences, not a data dump
    assert answer.startswith("上海更热：29°C，北京 24°C。")     # the question's answer first
    assert "北京的 temperature 是 24" in answer and "get_weather(" not in answer and "city=" not in answer


def test_unknown_order_says_plainly_it_could_not_get_it(sample_tools):
    s = run(sample_tools, "订单 ORD-2026-999 到哪里了?")
    assert "没能获取" in s.answer() and "not_found" in s.answer()


def test_no_fillable_tool_answers_without_calls(sample_tools):
    s = run(sample_tools, "what is the meaning of life")
    assert calls_per_turn(s) == [[]] and "could not match this question to any tool" in s.answer()


def test_retryable_error_is_retried_once(sample_tools):
    s = run(sample_tools, "SKU-1001 有货吗?")  # check_inventory is slower than its 1 s timeout
    assert [len(t) for t in calls_per_turn(s)] == [1, 1, 0]
    assert "retrying check_inventory once" in s.turns[1].note
    assert "timeout" in s.answer() and s.answer().count("没能获取商品 SKU-1001") == 1  # reported once


def test_never_repeats_a_call(sample_tools):
    msgs = [
        {"role": "user", "content": "订单 ORD-2026-002 呢"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "x1", "type": "function",
             "function": {"name": "query_order", "arguments": '{"order_id": "ORD-2026-002"}'}}]},
        {"role": "tool", "tool_call_id": "x1", "content": '{"status": "pending"}'},
    ]
    reply = OfflineModel().complete(ModelRequest(msgs, sample_tools.openai_tools()))
    assert "tool_calls" not in reply.message and "待处理" in reply.message["content"]   # pending, in its words


def test_parallel_tool_calls_false_sends_one_call(sample_tools):
    s = run(sample_tools, "北京和上海今天哪个更热?", parallel_tool_calls=False)
    assert [len(t) for t in calls_per_turn(s)] == [1, 1, 0]


def test_tool_choice_none_answers_directly(sample_tools):
    s = run(sample_tools, "订单 ORD-2026-001 到哪里了?", tool_choice="none")
    assert calls_per_turn(s) == [[]]


def test_works_on_a_tools_file_it_has_never_seen(tools_from):
    tools = tools_from("""
        version: 1
        tools:
          - name: find_flight
            description: Find a flight by its number. Use when the user names a flight.
            parameters:
              type: object
              properties:
                flight: {type: string, pattern: "^[A-Z]{2}[0-9]{3,4}$", description: flight number}
              required: [flight]
            handler:
              fixture: {gate: B12, airport_code: PVG, delay_minutes: 40}
          - name: airport_info
            description: Details of an airport by IATA code.
            parameters:
              type: object
              properties:
                airport_code: {type: string, description: IATA code}
                lang: {type: string, enum: [en, zh], description: language}
              required: [airport_code]
            handler:
              fixture: {name: Shanghai Pudong, terminals: 2}
          - name: rebook
            description: Rebook a passenger.
            parameters:
              type: object
              properties:
                booking_ref: {type: string}
              required: [booking_ref]
            side_effects: true
            handler: {fixture: {ok: 1}}
    """)
    s = run(tools, "Is flight MU5101 delayed? Answer in en")
    assert calls_per_turn(s) == [
        [("find_flight", {"flight": "MU5101"})],
        [("airport_info", {"airport_code": "PVG", "lang": "en"})],
        [],
    ]
    assert "the delay minutes are 40" in s.answer() and "Shanghai Pudong" in s.answer()


# -- side effects, tool_choice, ids, content parts, hostile schemas ------------------------------

import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agentdbg.providers import offline_patterns  # noqa: E402
from agentdbg.toolspec import load_tools  # noqa: E402

DOMAINS = Path(__file__).parent / "offline_domains"


def reply_to(tools, messages, **request):
    """One request straight to the model, as `serve --offline` sends it (no engine fields)."""
    return OfflineModel().complete(ModelRequest(messages, tools, **request))


def called(reply):
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in reply.message.get("tool_calls") or []]


def user(text):
    return [{"role": "user", "content": text}]


def fn_tool(name, properties=None, required=(), description="", **extra):
    fn = {"name": name, "description": description,
          "parameters": {"type": "object", "properties": properties or {}, "required": list(required)}}
    return {"type": "function", "function": {**fn, **extra}}


def library():
    return load_tools(DOMAINS / "library" / "tools.yaml").openai_tools()


def test_side_effects_are_inferred_when_the_request_does_not_say():
    # over HTTP no tools file says which tools change things: the verb in the name does
    reply = reply_to(library(), user("Is 9780141036144 available? My card is M12345"))
    assert called(reply) == [("check_availability", {"isbn": "9780141036144"})]
    assert "not calling reserve_book" in reply.note and "'reserve'" in reply.note
    reply = reply_to(library(), user("Reserve 9780141036144 for card M12345"))
    assert called(reply) == [("reserve_book", {"isbn": "9780141036144", "card_number": "M12345"})]


def test_declared_side_effects_and_mcp_hints_win_over_names():
    tools = [fn_tool("lookup_code", {"code": {"type": "string", "pattern": "^K-\\d$"}}, ["code"]),
             fn_tool("purge_cache", {"code": {"type": "string", "pattern": "^K-\\d$"}}, ["code"],
                     annotations={"destructiveHint": True}),
             fn_tool("send_preview", {"code": {"type": "string", "pattern": "^K-\\d$"}}, ["code"],
                     annotations={"readOnlyHint": True})]
    reply = reply_to(tools, user("What is K-1?"), side_effect_tools=frozenset({"lookup_code"}))
    assert called(reply) == [("send_preview", {"code": "K-1"})]
    assert "not calling lookup_code" in reply.note and "not calling purge_cache" in reply.note
    assert called(reply_to(tools, user("Purge K-1 from the cache")))[0] == ("purge_cache", {"code": "K-1"})


def test_a_side_effecting_call_is_retried_only_with_an_idempotency_key():
    tools = [fn_tool("send_sms", {"phone": {"type": "string", "pattern": "^\\+\\d{8,15}$"},
                                  "idempotency_key": {"type": "string"}}, ["phone"])]
    timeout = json.dumps({"ok": False, "error": {"type": "timeout", "message": "no answer in 1s",
                                                 "retryable": True}})

    def after(args):
        return user("Send an SMS to +8613800000000") + [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "send_sms", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "c1", "content": timeout}]

    reply = reply_to(tools, after('{"phone":"+8613800000000"}'))
    assert called(reply) == []
    assert "did not retry send_sms after timeout" in reply.message["content"]
    keyed = '{"phone":"+8613800000000","idempotency_key":"k1"}'
    assert called(reply_to(tools, after(keyed))) == [
        ("send_sms", {"phone": "+8613800000000", "idempotency_key": "k1"})]


def test_user_content_as_text_parts_is_read_like_a_string(sample_tools):
    parts = [{"role": "user", "content": [{"type": "text", "text": "订单"},
                                          {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                                          {"type": "text", "text": "ORD-2026-001 到哪里了?"}]}]
    reply = reply_to(sample_tools.openai_tools(), parts)
    assert called(reply) == [("query_order", {"order_id": "ORD-2026-001"})]


def test_tool_choice_required_named_and_allowed_tools(sample_tools):
    tools = sample_tools.openai_tools()
    # required, nothing fits: no call is invented; the answer says which tool lacks what
    reply = reply_to(tools, user("hello there"), tool_choice="required")
    assert called(reply) == [] and "tool_choice is 'required', but no tool can be called" in reply.note
    # a named function: exactly that one, even when others fit too
    named = {"type": "function", "function": {"name": "get_weather"}}
    reply = reply_to(tools, user("订单 ORD-2026-001 和北京的天气"), tool_choice=named)
    assert called(reply) == [("get_weather", {"city": "北京"})]
    # allowed_tools: only those; mode required with a fitting tool calls it
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "query_order"}}]}}
    reply = reply_to(tools, user("订单 ORD-2026-001 和北京的天气"), tool_choice=allowed)
    assert called(reply) == [("query_order", {"order_id": "ORD-2026-001"})]
    # a named function that is not among the tools: said, not invented
    reply = reply_to(tools, user("hi"), tool_choice={"type": "function", "function": {"name": "nope"}})
    assert called(reply) == [] and "'nope', which is not among the tools" in reply.note
    assert "'nope', which is not among the tools" in reply.message["content"]


def test_call_ids_never_repeat_an_id_of_the_history_and_are_deterministic(sample_tools):
    tools = sample_tools.openai_tools()
    first = user("订单 ORD-2026-001 到哪里了?") + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_o1", "type": "function",
             "function": {"name": "query_order", "arguments": '{"order_id":"ORD-2026-001"}'}}]},
        {"role": "tool", "tool_call_id": "call_o1", "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": "shipped"}]
    second = first + user("北京和上海今天哪个更热?")
    reply = reply_to(tools, second)
    assert [c["id"] for c in reply.message["tool_calls"]] == ["call_o2", "call_o3"]
    assert reply_to(tools, second).message == reply.message  # same request, same reply
    # ids a framework wrote into text (smolagents) count too
    texty = [{"role": "assistant", "content": "Calling tools: [{'id': 'call_o7', 'name': 'query_order'}]"},
             {"role": "user", "content": "Observation: done. Now: 北京天气?"}]
    ids = [c["id"] for c in reply_to(tools, texty).message["tool_calls"]]
    assert ids == ["call_o8"]


def test_unfillable_parameter_is_named_in_answer_and_note(sample_tools):
    s = run(sample_tools, "Send an email to bob@example.com")
    assert calls_per_turn(s) == [[]]
    for text in (s.answer(), s.turns[0].note):
        assert "could not call send_email: required parameter" in text and "subject" in text


HOSTILE = ["^(a+)+$", "(a|a)*b", "^(\\d*)*\\d*\\d*x$", "(x+x+)+y", "^([a-z]+)*[0-9]$"]


@pytest.fixture(params=["re2", "re"])
def pattern_engine(request, monkeypatch):
    if request.param == "re2" and offline_patterns.engine() != "re2":
        pytest.skip("google-re2 is not installed here")
    if request.param == "re":
        monkeypatch.setattr(offline_patterns, "_re2", lambda: None)
    offline_patterns._compile.cache_clear()
    yield request.param
    offline_patterns._compile.cache_clear()


def test_hostile_patterns_never_hang_the_planner(pattern_engine, tools_from):
    tools = tools_from("version: 1\ntools:\n" + "".join(f"""
  - name: t{i}
    description: takes a code
    parameters:
      type: object
      properties:
        code: {{type: string, pattern: {json.dumps(p)}}}
      required: [code]
    handler: {{fixture: {{ok: 1}}}}
""" for i, p in enumerate(HOSTILE)))
    done = []
    question = "a" * 5000 + "! " + "1" * 3000 + " " + "x" * 3000

    def go():
        done.append(run(tools, question))

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(timeout=60)  # a guard against a hang, not a timing assertion: it takes milliseconds
    assert done, f"the planner hung on a hostile pattern ({pattern_engine})"
    assert done[0].stop_reason is StopReason.COMPLETED


def test_patterns_that_cannot_run_safely_are_named_not_guessed(pattern_engine, tools_from):
    tools = tools_from("""
        version: 1
        tools:
          - name: find_code
            description: Find a code.
            parameters:
              type: object
              properties:
                code: {type: string, pattern: "^(?=K)K-\\\\d+$"}
              required: [code]
            handler: {fixture: {ok: 1}}
    """)
    if pattern_engine == "re":  # Python's re runs a lookahead; a nested repeat is what it refuses
        assert offline_patterns.find_all("^(a+)+$", "aaa") is None
        assert offline_patterns.find_all("^ORD-\\d{4}-\\d{3}$", "see ORD-2026-001.") == [
            (4, 16, "ORD-2026-001")]
        return
    s = run(tools, "Find K-12")
    assert calls_per_turn(s) == [[]]
    assert "pattern" in s.answer() and "cannot be checked safely" in s.answer()


def test_schema_refs_are_never_fetched(tools_from):
    from http.server import BaseHTTPRequestHandler, HTTPServer

    hits = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/schema.json"
        tools = [fn_tool("find_code", {"code": {"$ref": url}, "path": {"$ref": "file:///etc/passwd"}},
                         ["code", "path"]),
                 fn_tool("find_local", {"code": {"$ref": "#/$defs/Code"}}, ["code"])]
        tools[1]["function"]["parameters"]["$defs"] = {"Code": {"type": "string", "pattern": "^K-\\d+$"}}
        reply = reply_to(tools, user("Find K-12"))
        assert called(reply) == [("find_local", {"code": "K-12"})]
        assert hits == []
    finally:
        server.shutdown()
        server.server_close()


def test_two_turn_loop_over_http_never_repeats_an_id(model_server):
    """The official client against `ModelServer` (what `serve --offline` answers with): each
    request carries only the history, and ids still never repeat across turns."""
    from openai import OpenAI

    spec = load_tools(DOMAINS / "library" / "tools.yaml")
    client = OpenAI(base_url=model_server.base_url, api_key="not-needed", max_retries=0)
    messages: list = []
    asked: list[list[str]] = []
    for question in ("Is 9780141036144 available? My card is M12345",
                     "Reserve 9780141036144 for card M12345"):
        messages.append({"role": "user", "content": question})
        names = []
        for _ in range(5):
            reply = client.chat.completions.create(model="offline", messages=messages,
                                                   tools=spec.openai_tools())
            msg = reply.choices[0].message
            messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                break
            for call in msg.tool_calls:
                names.append(call.function.name)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps(spec.get(call.function.name).handler)})
        asked.append(names)
    assert asked == [["check_availability"], ["reserve_book"]]
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert ids == ["call_o1", "call_o2"] and len(model_server.requests) == 4


def test_strict_schemas_send_null_for_nullable_fields_and_follow_local_refs():
    # how pydantic/the Agents SDK write strict tools: every field required, optional ones nullable
    tool = fn_tool("get_forecast", {
        "city": {"$ref": "#/$defs/City"},
        "days": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 7}, {"type": "null"}]},
        "units": {"anyOf": [{"type": "string", "enum": ["metric", "imperial"]}, {"type": "null"}]},
    }, ["city", "days", "units"], strict=True)
    tool["function"]["parameters"].update(
        {"additionalProperties": False, "$defs": {"City": {"type": "string", "enum": ["Paris", "Oslo"]}}})
    assert called(reply_to([tool], user("Forecast for Oslo, 3 days"))) == [
        ("get_forecast", {"city": "Oslo", "days": 3, "units": None})]
    # a tool whose fields are all nullable is not called on any question at all
    loose = fn_tool("list_alerts", {"region": {"type": ["string", "null"]}}, ["region"], strict=True)
    assert called(reply_to([loose], user("hello"))) == []


def test_deeply_nested_arguments_and_results_are_data(sample_tools):
    deep = "[" * 5000
    msgs = user("订单 ORD-2026-001 到哪里了?") + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "x1", "type": "function", "function": {"name": "query_order", "arguments": deep}}]},
        {"role": "tool", "tool_call_id": "x1", "content": deep}]
    reply = reply_to(sample_tools.openai_tools(), msgs)
    assert called(reply) == [("query_order", {"order_id": "ORD-2026-001"})]
    assert reply.message["tool_calls"][0]["id"] == "call_o2"


def test_a_failure_without_a_message_is_named_by_its_type_alone(sample_tools):
    tools = sample_tools.openai_tools()
    history = user("订单 ORD-2026-001 到哪里了?") + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "query_order", "arguments": '{"order_id":"ORD-2026-001"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": false, "error": {"type": "invalid_json"}}'}]
    answer = reply_to(tools, history).message["content"]
    line = next(ln for ln in answer.splitlines() if "invalid_json" in ln)
    assert line.endswith("：invalid_json。"), answer   # no dangling "— " where a message would be
