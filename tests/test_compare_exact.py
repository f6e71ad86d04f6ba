"""A replay compares each request with the recorded one; messages equal in every type skip the
walk (``compare._same_exactly``). Whatever the values, the answer is the walk's: ``1``,
``1.0`` and ``True`` are different, NaN is never equal, a key order or a subclass does not
fool it."""

from __future__ import annotations

import copy
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdbg.transcript import compare
from agentdbg.transcript.compare import first_difference, first_difference_from

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, -0.0, 1.0, 2.5]),
                    st.just(math.nan), st.just(math.inf), st.sampled_from(["", "a", "tool", "nan", "北京"]),
                    st.integers(2**63, 2**70))
KEYS = st.sampled_from(["role", "content", "name", "index", "arguments", "tool_calls", "refusal", "x"])
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(KEYS, inner, max_size=4)),
                      max_leaves=12)
MESSAGES = st.dictionaries(KEYS, VALUES, max_size=5)


def _twin(value):
    """An equal value of other types where JSON's are interchangeable for ``==``."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and abs(value) < 2**53:
        return float(value)
    if isinstance(value, dict):
        return {k: _twin(v) for k, v in reversed(value.items())} if len(value) % 2 else \
            {k: _twin(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_twin(v) for v in value]
    return value


def _walked(a, b, strict):
    """The walk alone (what ``first_difference_from`` answered before the shortcut)."""
    saved = compare._same_exactly
    compare._same_exactly = lambda x, y: False
    try:
        return first_difference_from(a, b, 0, strict=strict)
    finally:
        compare._same_exactly = saved


@settings(max_examples=600, deadline=None)
@given(MESSAGES, st.sampled_from(["copy", "same", "twin", "other"]), MESSAGES, st.booleans())
def test_the_walks_answer_for_any_pair(message, how, other, strict):
    recorded = [message, copy.deepcopy(message)]
    replayed = {"copy": lambda: [copy.deepcopy(message), copy.deepcopy(message)],
                "same": lambda: [message, message],       # shared objects: a NaN is itself
                "twin": lambda: [_twin(message), copy.deepcopy(message)],
                "other": lambda: [other, copy.deepcopy(message)]}[how]()
    assert first_difference_from(recorded, replayed, 0, strict=strict) == \
        _walked(recorded, replayed, strict)


def test_types_nan_and_subclasses_are_differences():
    class Text(str):
        pass

    nan = math.nan
    for a, b in [({"n": 1}, {"n": 1.0}), ({"n": True}, {"n": 1}), ({"n": [nan]}, {"n": [nan]}),
                 ({"n": "x"}, {"n": Text("x")})]:
        assert a == b
        assert first_difference_from([a], [b], 0, strict=True) is not None, (a, b)
    # equal in every type, however ordered or copied: no difference
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1.5}"}}]}
    assert first_difference_from([message], [copy.deepcopy(message)], 0, strict=True) is None
    assert first_difference(message, dict(reversed(message.items()))) is None
