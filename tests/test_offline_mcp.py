"""The offline model on tools described only in prose, as MCP servers write them.

``mcp-server-time`` (a real third-party server) says what its parameters take in words:
"IANA timezone name (e.g., 'America/New_York', …)", "24-hour format (HH:MM)". The unit tests
use its tool definitions exactly as it lists them; the last tests run the real server through
``agentdbg run --mcp`` with no key and no network."""

import json
import shlex
import sys

import pytest
from typer.testing import CliRunner

from agentdbg.providers import offline_zones
from agentdbg.providers.base import ModelRequest
from agentdbg.providers.offline import OfflineModel
from agentdbg.providers.offline_prose import Shape, read, times

_TZ = ("IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Europe/Paris' as local "
       "timezone if no {}timezone provided by the user.")
#: the tools as mcp-server-time 2026.10.19 lists them (``agentdbg tools --json``)
TIME_TOOLS = [
    {"type": "function", "function": {
        "name": "get_current_time", "description": "Get current time in a specific timezone",
        "parameters": {"type": "object", "title": "get_current_timeArguments", "required": ["timezone"],
                       "properties": {"timezone": {"description": _TZ.format(""), "title": "Timezone",
                                                   "type": "string"}}}}},
    {"type": "function", "function": {
        "name": "convert_time", "description": "Convert time between timezones",
        "parameters": {
            "type": "object", "title": "convert_timeArguments",
            "required": ["source_timezone", "time", "target_timezone"],
            "properties": {
                "source_timezone": {"description": "Source " + _TZ.format("source "),
                                    "title": "Source Timezone", "type": "string"},
                "time": {"description": "Time to convert in 24-hour format (HH:MM)", "title": "Time",
                         "type": "string"},
                "target_timezone": {
                    "description": "Target IANA timezone name (e.g., 'Asia/Tokyo', "
                                   "'America/San_Francisco'). Use 'Europe/Paris' as local timezone if "
                                   "no target timezone provided by the user.",
                    "title": "Target Timezone", "type": "string"}}}}},
]
SERVER = f"{shlex.quote(sys.executable)} -m mcp_server_time --local-timezone Europe/Paris"


def ask(question, tools=TIME_TOOLS, **request):
    return OfflineModel().complete(ModelRequest([{"role": "user", "content": question}], tools, **request))


def called(reply):
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in reply.message.get("tool_calls") or []]


# -- what the descriptions say -----------------------------------------------------

def test_examples_after_e_g_and_a_stated_format_are_read_from_prose():
    assert read(_TZ.format("")).examples == ("America/New_York", "Europe/London")  # not the default
    assert read("订单号，例如 ORD-2026-001").examples == ("ORD-2026-001",)   # unquoted, distinctive
    assert read("A city, such as a capital (e.g. a city name)").examples == ()
    assert read("城市名，例如北京、上海、杭州").examples == ()                   # plain words: no shape
    hhmm = read("Time to convert in 24-hour format (HH:MM)")
    assert (hhmm.format_label, hhmm.time_template) == ("HH:MM", "HH:MM")
    assert read("Day as DD/MM/YYYY").pattern == r"^(?:0[1-9]|[12]\d|3[01])/(?:0[1-9]|1[0-2])/\d{4}$"
    assert read("Opening time, 24-hour").format_label == "24-hour"
    assert read("Any text").pattern is None


def test_times_are_written_in_the_stated_format():
    found = [(value, said) for _s, _e, value, said in times("at 9:30 pm, 09:05, 7am or 12:00:30", "HH:MM")]
    assert found == [("21:30", "9:30 pm"), ("09:05", "09:05"), ("07:00", "7am"), ("", "12:00:30")]


def test_a_shape_finds_words_like_the_examples_and_nothing_else():
    zone = Shape.of(("America/New_York", "Europe/London"))
    text = "Asia/Tokyo, Tokyo, 2026/12/01, a/b, Asia//Tokyo and Europe/London."
    assert [t for _s, _e, t in zone.find(text)] == ["Asia/Tokyo", "Europe/London"]
    order = Shape.of(("ORD-2026-001",))
    assert [t for _s, _e, t in order.find("ORD-2026-777 on 2026-12-01")] == ["ORD-2026-777"]
    assert Shape.of(("celsius", "fahrenheit")) is None and Shape.of(("London", "Paris")) is None


def test_places_become_zones_by_the_zones_own_names():
    found = {p.text: p.zone for p in offline_zones.places(
        "São Paulo, New York, Port of Spain, Asia/Kolkata, Istanbul and Davis")}
    assert found == {"São Paulo": "America/Sao_Paulo", "New York": "America/New_York",
                     "Port of Spain": "America/Port_of_Spain", "Istanbul": "Asia/Istanbul"}
    (istanbul,) = offline_zones.places("Istanbul")
    assert "Europe/Istanbul: the same clock" in str(istanbul.why)   # a link, said as such
    assert offline_zones.places("what time is it in tokyo") == []   # a place is written with a capital


# -- plans ---------------------------------------------------------------------------

def test_a_city_fills_an_iana_timezone_and_the_note_says_which_and_why():
    reply = ask("What time is it in Tokyo?")
    assert called(reply) == [("get_current_time", {"timezone": "Asia/Tokyo"})]
    assert "'Tokyo' is the city of the IANA time zone Asia/Tokyo in zoneinfo" in reply.note


def test_a_time_and_a_conversion_go_out_in_one_turn():
    reply = ask("What time is it in Asia/Tokyo, and what is 09:30 Paris time in New York?")
    assert called(reply) == [
        ("get_current_time", {"timezone": "Asia/Tokyo"}),
        ("convert_time", {"source_timezone": "Europe/Paris", "time": "09:30",
                          "target_timezone": "America/New_York"})]
    assert "shaped like the example 'America/New_York' in its description" in reply.note
    assert "not calling get_current_time with 'Paris': convert_time takes it" in reply.note


@pytest.mark.parametrize(("question", "source", "time", "target"), [
    ("Convert 9:30 pm from London to Tokyo", "Europe/London", "21:30", "Asia/Tokyo"),
    ("Convert 14:00 to Tokyo time from Paris", "Europe/Paris", "14:00", "Asia/Tokyo"),
    ("What is 7am New York time in Sydney?", "America/New_York", "07:00", "Australia/Sydney"),
    ("What is 09:30 in London in Tokyo time?", "Europe/London", "09:30", "Asia/Tokyo"),
])
def test_source_and_target_come_from_the_words_around_them(question, source, time, target):
    assert called(ask(question)) == [("convert_time", {"source_timezone": source, "time": time,
                                                       "target_timezone": target})]


def test_two_places_without_a_time_are_two_lookups_never_one_zone_twice():
    assert called(ask("What time is it in Paris and in New York?")) == [
        ("get_current_time", {"timezone": "Europe/Paris"}),
        ("get_current_time", {"timezone": "America/New_York"})]
    plan = called(ask("What is 10:00 Tokyo time?"))
    assert all(c[0] != "convert_time" for c in plan)   # one place: not source and target at once


def test_what_it_cannot_fill_is_said_plainly():
    answer = ask("What time is it?").message["content"]
    assert "could not call get_current_time: required parameter timezone — no IANA time zone name in " \
           "the question (string, e.g. America/New_York, Europe/London)" in answer
    assert "format HH:MM (its description)" in answer
    answer = ask("what time is it in tokyo").message["content"]
    assert "written with a capital" in answer
    reply = ask("Convert 12:00:30 from Paris to Tokyo")   # the lookups go ahead; the conversion is named
    assert "convert_time" not in [c[0] for c in called(reply)]
    assert "the question says '12:00:30', which the HH:MM format its description states cannot hold" \
        in reply.note


def test_a_place_in_chinese_needs_cldr_names(monkeypatch):
    if offline_zones._babel() is not None:   # babel installed: CLDR's zh names
        reply = ask("现在东京几点？")
        assert called(reply) == [("get_current_time", {"timezone": "Asia/Tokyo"})]
        assert "'东京' is the city of the IANA time zone Asia/Tokyo in CLDR's zh city names" in reply.note
        monkeypatch.setattr(offline_zones, "_babel", lambda: None)
    reply = ask("现在东京几点？")
    assert called(reply) == []
    answer = reply.message["content"]
    assert answer.startswith("我没能为这个问题调用工具") and "没能调用 get_current_time：必填参数 timezone" in answer
    assert "需要 babel 包里 CLDR 的城市名，而它没有安装" in answer   # in the question's language


def test_prose_works_for_any_tool_not_only_time():
    tools = [{"type": "function", "function": {
        "name": "order_status", "description": "Where an order is",
        "parameters": {"type": "object", "required": ["order_id"], "properties": {
            "order_id": {"type": "string", "description": "Order number, e.g. 'ORD-2026-001'"}}}}},
        {"type": "function", "function": {
            "name": "day_schedule", "description": "The schedule of one day",
            "parameters": {"type": "object", "required": ["day"], "properties": {
                "day": {"type": "string", "description": "The day as DD/MM/YYYY"}}}}}]
    assert called(ask("Where is ORD-2026-777?", tools)) == [("order_status", {"order_id": "ORD-2026-777"})]
    assert called(ask("What is on 31/12/2026?", tools)) == [("day_schedule", {"day": "31/12/2026"})]
    assert called(ask("What is on 31/13/2026?", tools)) == []   # no 13th month


def test_side_effects_the_engine_reports_are_not_said_to_come_from_a_tools_file():
    reply = ask("What time is it in Tokyo?", side_effect_tools=frozenset({"get_current_time"}))
    assert called(reply) == []
    assert "it has side effects (the engine says so)" in reply.note
    assert "tools file" not in reply.note


# -- the real server through the real engine -----------------------------------------

def run(question):
    from agentdbg.cli import app

    r = CliRunner().invoke(app, ["run", "--mcp", SERVER, question, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_the_real_server_answers_a_city_question():
    doc = run("What time is it in Tokyo?")
    assert [(c["name"], json.loads(c["arguments"]), c["ok"]) for c in doc["tool_calls"]] == [
        ("get_current_time", {"timezone": "Asia/Tokyo"}, True)]
    assert doc["stop_reason"] == "completed"
    assert doc["answer"].startswith("Here is what I found:\nFor Asia/Tokyo, the datetime is ")
    assert "+09:00" in doc["answer"]


def test_the_real_server_gets_both_calls_in_one_turn_then_an_answer():
    doc = run("What time is it in Asia/Tokyo, and what is 09:30 Paris time in New York?")
    first = next(m for m in doc["messages"] if m["role"] == "assistant")
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in first["tool_calls"]] == [
        ("get_current_time", {"timezone": "Asia/Tokyo"}),
        ("convert_time", {"source_timezone": "Europe/Paris", "time": "09:30",
                          "target_timezone": "America/New_York"})]
    assert all(c["ok"] for c in doc["tool_calls"]) and len(doc["turns"]) == 2
    answer = doc["answer"]   # the offsets depend on the date: read them from the result
    result = json.loads(doc["tool_calls"][1]["content"])
    assert "the source is (the timezone is Europe/Paris, the datetime is " in answer and "T09:30:00+" in answer
    assert f"the target is (the timezone is America/New_York, the datetime is {result['target']['datetime']}" in answer
    assert f"the time difference is {result['time_difference']}" in answer
