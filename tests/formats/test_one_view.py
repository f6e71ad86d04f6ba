"""One messages view for every wire format: the same conversation sent as Chat Completions,
Responses, Anthropic Messages and Gemini reads the same (labels A/B, ✓/✗ marks, the one-line
form of a seen entry), each in its own native paths and its own words."""

import ast
import io
from pathlib import Path

import pytest
from rich.console import Console

from agentdbg.render.view import render_conversation
from agentdbg.wire import codec

ARGS = '{"city": "Paris"}'
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}} for n in ("get_weather", "get_time")]
ASKED = [{"role": "system", "content": "You answer about the weather."},
         {"role": "user", "content": "Weather and time in Paris?"},
         {"role": "assistant", "content": None, "tool_calls": [
             {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}},
             {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": ARGS}}]}]
ANSWERED = [*ASKED, {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "14:05"},
            {"role": "assistant", "content": "18°C and 14:05."}]
#: where call A and its result sit in each format's own body
NATIVE = {"chat": ("messages[2].tool_calls[0]", "messages[3]"),
          "responses": ("input[2]", "input[4]"),
          "anthropic": ("messages[1].content[0]", "messages[2].content[0]"),
          "gemini": ("contents[1].parts[0]", "contents[2].parts[0]")}
#: the view names a location without the conversation key; a chat call by its message
SHOWN = {"chat": ("[2]", "[3]"), "responses": ("[2]", "[4]"),
         "anthropic": ("[1].content[0]", "[2].content[0]"), "gemini": ("[1].parts[0]", "[2].parts[0]")}


def shown(name, messages, **kw):
    c = codec.get(name)
    console = Console(file=io.StringIO(), width=200, no_color=True, color_system=None, record=True)
    console.print(render_conversation(c, c.encode_request(messages, TOOLS), **kw))
    return [line.rstrip() for line in console.export_text().splitlines()]


def line_with(lines, *words):
    found = [line for line in lines if all(w in line for w in words)]
    assert len(found) == 1, (words, "\n".join(lines))
    return found[0]


@pytest.mark.parametrize("name", codec.NAMES)
def test_a_pair_is_labelled_and_marked_alike_in_every_format_at_its_native_path(name):
    c, lines = codec.get(name), shown(name, ANSWERED)
    call, result = SHOWN[name]
    # the view's short form is the native path without the conversation key
    assert [c.key + SHOWN[name][1]] == [NATIVE[name][1]]
    assert NATIVE[name][0].startswith(c.key + call)
    assert line_with(lines, "→ A ", "get_weather").endswith(f"get_weather   ✓ answered at {result}")
    assert line_with(lines, "← A ", "get_weather").endswith(f"get_weather   ✓ answers {call}")
    assert "✓ answered at" in line_with(lines, "→ B ", "get_time")
    assert "✓ answers" in line_with(lines, "← B ", "get_time")
    assert not any("✗" in line for line in lines)


@pytest.mark.parametrize("name", codec.NAMES)
def test_a_seen_entry_is_one_line_of_label_name_and_mark_in_every_format(name):
    lines = shown(name, ANSWERED, seen=99)
    call, result = SHOWN[name]
    # one line per entry: each call by label and name (its id is on its result) and its mark
    # (a Responses item holds one call; a message or content holds both)
    assert f"→ A get_weather   ✓ answered at {result}" in line_with(lines, "→ A ")
    assert "→ B get_time   ✓ answered at" in line_with(lines, "→ B ")
    assert f"← A call_1  get_weather   ✓ answers {call}" in line_with(lines, "← A ") or name == "gemini"


@pytest.mark.parametrize("name", codec.NAMES)
def test_a_forgotten_result_and_calls_being_run_are_marked_alike(name):
    forgot = [m for m in ANSWERED if m.get("tool_call_id") != "call_2"]
    lines = shown(name, forgot)
    assert line_with(lines, "→ B ", "get_time").endswith("get_time   ✗ unanswered")
    assert not [line for line in lines if "← B" in line]
    running = shown(name, ASKED, in_progress=True)
    assert line_with(running, "→ A ").endswith("get_weather   … pending execution")
    assert line_with(running, "→ B ").endswith("get_time   … pending execution")


@pytest.mark.parametrize("name, strip, words", [
    ("chat", lambda b: b["messages"][3].pop("tool_call_id"), ("(no tool_call_id)", "✗ no tool_call_id")),
    ("responses", lambda b: b["input"][4].pop("call_id"), ("(no call_id)", "✗ no call_id")),
    ("anthropic", lambda b: b["messages"][2]["content"][0].pop("tool_use_id"),
     ("(no tool_use_id)", "✗ no tool_use_id")),
])
def test_a_result_without_its_id_is_said_in_the_format_s_own_words(name, strip, words):
    c = codec.get(name)
    body = c.encode_request(ANSWERED, TOOLS)
    strip(body)
    console = Console(file=io.StringIO(), width=200, no_color=True, color_system=None, record=True)
    console.print(render_conversation(c, body))
    line = line_with(console.export_text().splitlines(), "← ? ")
    assert words[0] in line and line.rstrip().endswith(words[1])


def test_the_view_asks_no_format_by_name_and_imports_no_format_module():
    render = Path(__file__).resolve().parents[2] / "agentdbg" / "render"
    formats = {*codec.NAMES, *(module for module, _ in codec.MODULES.values())}
    for path in render.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in codec.NAMES, f"{path.name}:{node.lineno} {node.value!r}"
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names]
                assert not formats & set(names) and not any(
                    n.startswith(("agentdbg.wire.responses", "agentdbg.wire.anthropic",
                                  "agentdbg.wire.gemini", "agentdbg.wire.chat")) for n in names), \
                    f"{path.name}:{node.lineno} imports {names}"
