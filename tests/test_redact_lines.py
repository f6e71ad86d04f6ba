"""A transcript line is redacted only when its JSON text could hold a secret (a cheap test of
the text the line would be, ``Redactor.may_hold_secret``), and a secret never reaches the
file: in the header, in a nested string, in a key, escaped by JSON, or in a value JSON
cannot hold. The writer's lines are those of redacting every line, on random events."""

import io
import json
import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdbg.messages import utf8_json
from agentdbg.transcript import Redactor, TranscriptWriter
from agentdbg.transcript.events import Header
from agentdbg.transcript.redact import DEFAULT_LEADS, DEFAULT_REDACT, REDACTED

KEY = "sk-linetest-0123456789abcdef"
# secrets as JSON escapes them: a quote, a backslash, a newline, a control character,
# letters ensure_ascii writes as \u escapes (a line holding a lone surrogate is written so)
ODD = ['pa"ss\\word', "line\nbreak-secret", "tab\tand\x01ctl", "pässwörd-密钥", "emoji-🔑-key"]
SECRETS = [KEY, *ODD]


def written(redactor: Redactor, *values: dict) -> list[str]:
    """The lines a transcript writer writes for ``values`` (after its header)."""
    out = io.StringIO()
    writer = TranscriptWriter("unused.jsonl", Header(model="m", question="q"), redactor, fh=out)
    for value in values:
        writer("note", value)
    return out.getvalue().split("\n")[1:-1]


def every_form(secret: str) -> list[str]:
    return [secret] + [json.dumps(secret, ensure_ascii=a)[1:-1] for a in (False, True)]


def assert_no_secret(text: str, secrets=SECRETS) -> None:
    for secret in secrets:
        for form in every_form(secret):
            assert form not in text, f"{secret!r} leaked as {form!r}: {text[:300]!r}"


def test_a_secret_is_redacted_in_every_place_a_line_holds_it():
    value = {"params": {"headers": {"Authorization": f"Bearer {KEY}"}},
             "append": [{"role": "assistant", "tool_calls": [{"function": {
                 "arguments": json.dumps({"token": KEY, "deep": [[{"x": f"..{KEY}.."}]]})}}]}],
             "tool": {"content": [f"{s} in a result" for s in ODD]}}
    lines = written(Redactor(secrets=SECRETS), value)
    assert_no_secret("\n".join(lines))
    back = json.loads(lines[0])
    assert back["params"]["headers"]["Authorization"] == f"Bearer {REDACTED}"
    assert back["tool"]["content"] == [f"{REDACTED} in a result"] * len(ODD)


def test_a_secret_used_as_a_key_is_redacted():
    # a JSON object a tool returned or a proxied body may key a map by a token
    lines = written(Redactor(secrets=[KEY]), {"by_token": {KEY: "alice", "other": 1},
                                              "ghp_" + "a" * 36: True})
    assert_no_secret(lines[0], [KEY, "ghp_" + "a" * 36])
    assert json.loads(lines[0])["by_token"] == {REDACTED: "alice", "other": 1}


def test_a_secret_in_a_value_json_cannot_hold_is_redacted():
    class Opaque:   # written as its text (the writer's default=str)
        def __str__(self) -> str:
            return f"<connection key={KEY}>"
    lines = written(Redactor(secrets=[KEY]), {"cause": Opaque()})
    assert_no_secret(lines[0], [KEY])
    assert json.loads(lines[0])["cause"] == f"<connection key={REDACTED}>"


def test_a_secret_in_a_line_written_with_ascii_escapes_is_redacted():
    # a lone surrogate makes the whole line \u-escaped: the secret is there only escaped
    lines = written(Redactor(secrets=["pässwörd-密钥"]), {"a": "\ud800", "b": "x pässwörd-密钥 y",
                                                             "c": "café"})
    assert "caf\\u00e9" in lines[0]                  # written escaped …
    assert_no_secret(lines[0], ["pässwörd-密钥"])    # … and not even so
    assert json.loads(lines[0])["b"] == f"x {REDACTED} y"


def test_default_key_formats_and_user_patterns_are_redacted_without_a_given_secret():
    values = ["Bearer\nabcdefghijklmnop",     # \s+ across a newline, which JSON escapes
              "AKIA" + "B" * 16, "xoxb-" + "1" * 12]
    lines = written(Redactor(), *({"v": v, "n": 1} for v in values))
    lines += written(Redactor(patterns=[r"customer-\d+"]), {"v": "customer-42", "n": 1})
    assert [json.loads(line)["v"] for line in lines] == [REDACTED] * 4


def test_every_default_key_format_has_its_lead():
    # a format added without its lead would be skipped on lines that hold nothing else
    for pattern in DEFAULT_REDACT:
        assert pattern.startswith(DEFAULT_LEADS) or pattern.startswith("(?i:bearer)"), pattern


def test_a_line_with_nothing_to_redact_is_written_as_it_is():
    value = {"content": "晴, 24°C \"quoted\" back\\slash", "n": [1, 2.5, None, True]}
    redactor = Redactor(secrets=SECRETS)
    line = written(redactor, value)[0]
    assert not redactor.may_hold_secret(line)
    assert line == utf8_json({"type": "note", "seq": 1, **value})


# -- random lines: the writer's text is that of redacting every line ----------------------------

# pieces that join into default key formats (a lead, then a run of key characters)
LEADS = ["sk-", "Bearer ", "bearer\n", "BEARER \t", "AKIA", "ghp_", "xoxb-", "AIza"]
KEYISH = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=8, max_size=40)
TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(SECRETS + LEADS + ["\ud800", '"', "\\", "\n"]),
    KEYISH)
STRING = st.lists(TEXT, max_size=4).map("".join)
VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), STRING),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(STRING, inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(STRING, VALUE, max_size=4), st.booleans())
def test_each_line_is_what_redacting_every_line_writes(value, with_secrets):
    redactor = Redactor(secrets=SECRETS if with_secrets else ())
    line = written(redactor, value)[0]
    event = {"type": "note", "seq": 1, **{k: v for k, v in value.items() if k not in ("type", "seq")}}
    assert line == utf8_json(redactor(event), default=str)
    if with_secrets:
        assert_no_secret(line)
    assert not any(re.search("|".join(DEFAULT_REDACT), s) for s in strings(json.loads(line)))


def strings(value):
    """Every string in ``value``, keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
