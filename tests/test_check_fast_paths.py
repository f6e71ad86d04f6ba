"""The shortcuts ``check`` takes on big inputs give the verdicts the long way gives."""

import gc
import json

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app
from agentdbg.messages import duplicate_keys, repeated_keys

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
