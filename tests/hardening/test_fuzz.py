"""Property-based: generated messages arrays, transcripts and tools files go through the
loaders, the checker and the renderer; nothing escapes but ``AgentdbgError``.

CI runs a short session; a long one (10,000+ inputs per target) is:

    AGENTDBG_FUZZ_EXAMPLES=10000 python -m pytest tests/hardening/test_fuzz.py -q
"""

import io
import json
import os
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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
    "id": st.sampled_from(["call_1", "call_2", "", None]) | text,
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
    "tool_choice": st.sampled_from(["auto", "none", "required", None]) | json_value,
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
