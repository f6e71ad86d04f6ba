"""A session's events are written without the typed event (``writer._session_line``): each
line is, byte for byte, the one the typed event wrote (``write(session_event(kind, data))``),
whatever the engine gives — odd types, integers for floats, missing fields, unknown keys,
histories that grow, shrink or change — and a secret is redacted in either."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdbg.transcript.events import Header
from agentdbg.transcript.redact import Redactor
from agentdbg.transcript.writer import _SESSION_EVENTS, TranscriptWriter, session_event

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
SECRET = "sk-abcdefghijklmnopqrstuvwxyz"
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([0.0, 1.5, -0.0]),
                    st.sampled_from(["", "x", "北京", SECRET, "Bearer abcdefghijklmnop"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["role", "content", "n"]), inner,
                                                 max_size=3)), max_leaves=6)
MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"]),
                                 "content": st.one_of(st.none(), st.sampled_from(["a", "b", SECRET]))})
NAMES = sorted({name for cls in _SESSION_EVENTS.values()
                for name in cls.__struct_encode_fields__} | {"type", "seq", "extra"})


@st.composite
def events(draw):
    """A run's observer calls: kinds with fields of any type, the history as a session keeps it."""
    history = [{"role": "user", "content": "q"}]
    calls = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from([*_SESSION_EVENTS, "note"]))
        data = {name: draw(VALUES) for name in draw(st.lists(st.sampled_from(NAMES), max_size=6))}
        usual = {"request": {"turn": 1, "params": draw(st.sampled_from(
                     [{"model": "m"}, {"model": "m", "tools": TOOLS}, {"tools": []}, None]))},
                 "response": {"message": draw(MESSAGE), "latency_ms": draw(st.sampled_from([0.5, 2, None]))},
                 "tool": {"duration_ms": draw(st.sampled_from([1.25, 3, True])), "content": "r"},
                 "stop": {"reason": "completed"}, "action": {"action": "send"}}.get(kind, {})
        if draw(st.booleans()):
            data = {**usual, **data}
        if kind in ("request", "stop") and draw(st.integers(0, 3)):
            how = draw(st.sampled_from(["grow", "same", "cut", "new"]))
            if how == "grow":
                history.append(draw(MESSAGE))
            elif how == "cut":
                history = history[:1]
            elif how == "new":
                history = [dict(m) for m in history] + [draw(MESSAGE)]
            data["messages"] = history
        calls.append((kind, data))
    return calls


def _written(calls, typed):
    fh = io.StringIO()
    writer = TranscriptWriter("unused.jsonl", Header(initial_messages=[{"role": "user", "content": "q"}],
                                                     tools=TOOLS), Redactor(secrets=["abcdefghijk"]), fh=fh)
    for kind, data in calls:
        try:
            if typed:
                writer.write(session_event(kind, data))
            else:
                writer(kind, data)
        except Exception as exc:   # whatever the typed path raised, the direct one raises
            fh.write(f"raised {type(exc).__name__}\n")
    return fh.getvalue().splitlines()[1:]   # the header holds its time


@settings(max_examples=500, deadline=None)
@given(events())
def test_each_line_is_the_typed_events_line(calls):
    assert _written(calls, typed=False) == _written(calls, typed=True)


def test_the_usual_run_and_its_odd_values():
    messages = [{"role": "user", "content": "q"}]
    calls = [("request", {"turn": 1, "messages": messages, "params": {"model": "m", "tools": TOOLS}}),
             ("response", {"turn": 1, "message": {"role": "assistant", "content": SECRET},
                           "latency_ms": 3, "finish_reason": "stop"}),
             ("response", {"turn": 2, "message": {"role": "assistant"}, "latency_ms": 3,
                           "finish_reason": 5}),
             ("tool", {"turn": 1, "name": "f", "duration_ms": 2.5, "ok": True, "content": "r"}),
             ("stop", {"reason": "completed", "messages": [*messages, {"role": "tool"}]})]
    lines = _written(calls, typed=False)
    assert lines == _written(calls, typed=True)
    # msgspec made the first 3 a float; the second event's odd finish_reason kept it as it came
    assert '"latency_ms": 3.0' in lines[1] and '"latency_ms": 3}' in lines[2]
    assert SECRET not in "".join(lines)
    assert lines[0].startswith('{"type": "request", "seq": 1, "turn": 1, "params": {"model": "m"}, '
                               '"prefix": 1, "append": []}')
