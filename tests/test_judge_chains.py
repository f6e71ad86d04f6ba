"""A transcript is judged by every request it sent, each finding reported once at the first
request that shows it. The judge checks only a few of a long transcript's requests in full
(see checker/judge.py); here it must agree with checking every request, on random
transcripts of every shape."""

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdbg.checker import check
from agentdbg.checker.inputs import CheckItem
from agentdbg.checker.judge import judge_all
from agentdbg.checker.profiles import PROFILES
from agentdbg.checker.request import MISSING, CheckRequest

IDS = st.sampled_from(["a", "b", "c", None, "", 7])
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}]


def _call(cid, name, args):
    call = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        call["id"] = cid
    return call


CALL = st.builds(_call, IDS, st.sampled_from(["f", "g", ""]),
                 st.sampled_from(['{"x": 1}', '{"x": "1"}', "{", "[]", ""]))
MESSAGE = st.one_of(
    st.builds(lambda: {"role": "user", "content": "q"}),
    st.builds(lambda: {"role": "user", "content": ""}),
    st.builds(lambda: {"role": "system", "content": "s"}),
    st.builds(lambda: {"role": "assistant", "content": "text"}),
    st.builds(lambda: {"role": "assistant", "content": None}),
    st.builds(lambda calls: {"role": "assistant", "content": None, "tool_calls": calls},
              st.lists(CALL, min_size=1, max_size=3)),
    st.builds(lambda: {"role": "assistant", "content": None, "tool_calls": []}),
    st.builds(lambda cid: {"role": "tool", "content": "r", **({} if cid is None else {"tool_call_id": cid})},
              IDS),
    st.builds(lambda: {"role": "tool", "tool_call_id": "a", "content": None}),
    st.builds(lambda: {"role": "developer", "content": "d"}),
    st.builds(lambda: {"role": "function", "name": "f", "content": "r"}),
    st.just("not a message"),
)


@st.composite
def loop_turn(draw):
    """An assistant's calls and the results the app sent: all, some, or in another order."""
    ids = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    answered = draw(st.permutations(ids))[:draw(st.integers(0, len(ids)))]
    return [{"role": "assistant", "content": None, "tool_calls": [_call(i, "f", '{"x": 1}') for i in ids]},
            *({"role": "tool", "tool_call_id": i, "content": "r"} for i in answered)]


@st.composite
def transcripts(draw):
    """Requests as a recording holds them: mostly each the last one plus what came after;
    sometimes a rewritten history, or other tools."""
    parts = draw(st.lists(st.one_of(MESSAGE.map(lambda m: [m]), loop_turn()), min_size=1, max_size=9))
    messages = [m for part in parts for m in part]
    cuts = sorted(set(draw(st.lists(st.integers(0, len(messages)), min_size=1, max_size=8))))
    items = []
    for turn, cut in enumerate(cuts, 1):
        sent = list(messages[:cut])
        if draw(st.integers(0, 9)) == 0 and sent:        # the app rewrote its history
            sent = sent[1:]
        tools = TOOLS if draw(st.integers(0, 7)) else MISSING
        items.append(CheckItem(CheckRequest(messages=sent, tools=tools), None, "chat", turn=turn))
    return items


def every_request(items, profile):
    """The plain reading: check each request in full, keep each finding at its first request."""
    reported, out = set(), []
    for item in items:
        fresh = []
        for f in check(dataclasses.replace(item.request, messages=list(item.request.messages)), profile):
            key = (f.rule, f.index, f.tool_call_id, f.path)
            if key not in reported:
                reported.add(key)
                fresh.append(f.to_dict())
        out.append(fresh)
    return out


@settings(max_examples=600, deadline=None)
@given(transcripts(), st.sampled_from(sorted(PROFILES)))
def test_judging_a_few_requests_finds_what_checking_every_request_finds(items, profile):
    expected = every_request(items, profile)
    got = [[f.to_dict() for f in j.findings] for j in judge_all(items, None, profile)]
    assert got == expected


def test_a_long_clean_transcript_is_checked_in_full_only_at_its_end(monkeypatch):
    import agentdbg.checker.judge as judge

    messages = [{"role": "user", "content": "q"}]
    items = []
    for turn in range(1, 301):
        items.append(CheckItem(CheckRequest(messages=list(messages), tools=TOOLS), None, "chat",
                               turn=turn))
        cid = f"call_{turn}"
        messages += [{"role": "assistant", "content": None,
                      "tool_calls": [_call(cid, "f", '{"x": 1}')]},
                     {"role": "tool", "tool_call_id": cid, "content": "ok"}]
    messages[4]["tool_call_id"] = "call_zz"          # a mismatched result from request 3 on
    checked = []
    real = judge._judge
    monkeypatch.setattr(judge, "_judge", lambda item, *a: checked.append(item.turn) or real(item, *a))
    results = judge_all(items, None, "openai")
    assert len(checked) < 20                          # bisection, not 300 checks
    flagged = [(j.item.turn, f.rule) for j in results for f in j.findings if f.severity == "error"]
    assert ("tool-call-id-mismatch" in {r for _, r in flagged}) or flagged
    assert {t for t, _ in flagged} == {3}             # reported once, at the request that sent it


def test_a_late_result_is_judged_where_the_call_was_still_open():
    """[q, q, q, call a, q] sent, then the same plus [q, result a]: the first request lacks a's
    result (missing-tool-response), the second has it late (interleaved) — the first must be
    judged in full although it ends on a user message (hypothesis found this)."""
    call = {"role": "assistant", "content": None, "tool_calls": [_call("a", "f", '{"x": 1}')]}
    q = {"role": "user", "content": "q"}
    first = [q, q, q, call, q]
    items = [CheckItem(CheckRequest(messages=first), None, "chat", turn=1),
             CheckItem(CheckRequest(messages=first + [q, {"role": "tool", "tool_call_id": "a",
                                                          "content": None}]), None, "chat", turn=2)]
    got = [[f.rule for f in j.findings] for j in judge_all(items, None, "anthropic-proxy")]
    assert "missing-tool-response" in got[0]
    assert got == [[f["rule"] for f in fs] for fs in every_request(items, "anthropic-proxy")]
