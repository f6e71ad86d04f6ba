"""The view and the checker read one pairing analysis: every ✓/✗ on screen agrees with the findings."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agentdbg.checker import check
from agentdbg.render.view import render_messages

IDS = st.sampled_from(["a", "b", "c", None, ""])


def _call(cid):
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    if cid is not None:
        call["id"] = cid
    return call


MESSAGE = st.one_of(
    st.builds(lambda: {"role": "user", "content": "q"}),
    st.builds(lambda: {"role": "system", "content": "s"}),
    st.builds(lambda: {"role": "assistant", "content": "text"}),
    st.builds(lambda ids: {"role": "assistant", "content": None, "tool_calls": [_call(c) for c in ids]},
              st.lists(IDS, min_size=1, max_size=3)),
    st.builds(lambda cid: {"role": "tool", "content": "r", **({} if cid is None else {"tool_call_id": cid})},
              IDS),
)

PAIRING_RULES = {"orphan-tool-message", "missing-tool-response", "interleaved-message",
                 "tool-call-id-mismatch", "tool-message-missing-id", "duplicate-tool-response",
                 "duplicate-tool-call-id", "tool-call-missing-id"}
ROW = re.compile(r"^.\s*\[(\d+)\]\s")


def rows(messages) -> dict[int, list[str]]:
    console = Console(width=400, no_color=True, force_terminal=False)
    with console.capture() as cap:
        console.print(render_messages(messages))
    out: dict[int, list[str]] = {}
    current = None
    for line in cap.get().splitlines():
        m = ROW.match(line)
        if m:
            current = int(m.group(1))
        if current is not None:
            out.setdefault(current, []).append(line)
    return out


def marks(lines: list[str]) -> list[str]:
    """The ✓/✗ marks of the call lines (→) and the result head (←) of one message."""
    return [("✓" if "✓" in line else "✗" if "✗" in line else "")
            for line in lines if "→ " in line or "← " in line]


@settings(max_examples=300, deadline=None)
@given(st.lists(MESSAGE, max_size=8))
def test_every_mark_on_screen_agrees_with_the_findings(messages):
    findings = [f for f in check(messages) if f.rule in PAIRING_RULES and f.severity == "error"]
    flagged = {f.index for f in findings}
    screen = rows(messages)
    crossed = {i for i, lines in screen.items() if "✗" in "".join(marks(lines))}
    # a ✗ is drawn only where a finding explains it: in the territory of its tool block
    # (from the assistant that made the calls to the next one: the assistant itself, one of
    # its results, the interloper that cut it), or as part of an orphan run
    starts = [k for k, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")]
    for i in crossed:
        lo = max((k for k in starts if k <= i), default=None)
        hi = min((k for k in starts if k > i), default=len(messages))
        explained = lo is not None and any(lo <= f < hi for f in flagged if f is not None)
        orphan_run = any(f.rule == "orphan-tool-message" and f.index <= i and all(
            messages[k].get("role") == "tool" for k in range(f.index, i + 1)) for f in findings)
        assert explained or orphan_run, (i, messages, [f.to_dict() for f in findings])
    # a message drawn all-✓ carries no pairing error
    for i, lines in screen.items():
        if marks(lines) and set(marks(lines)) == {"✓"}:
            assert i not in flagged, (i, messages, [f.to_dict() for f in findings])
    # every pairing error points at a message that carries a ✗ (or at an interloper
    # before a ✗ late result)
    for f in findings:
        if f.rule == "interleaved-message":
            assert any(i > f.index for i in crossed), (f.to_dict(), messages)
        else:
            assert f.index in crossed, (f.to_dict(), messages)


def test_the_issue_example_draws_what_the_checker_says():
    """[user, assistant(a, b), tool a, system, tool b]: interleaved at [3]; B is late, not an orphan."""
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "system", "content": "reminder"},
                {"role": "tool", "tool_call_id": "b", "content": "r"}]
    assert [(f.rule, f.index) for f in check(messages)] == [("interleaved-message", 3)]
    screen = rows(messages)
    assert "answered late at [4], after [3] cut in" in "\n".join(screen[1])
    assert "late: answers [1] after [3] cut in" in "\n".join(screen[4])
    assert "orphan" not in "\n".join(screen[4])


# -- one analysis for every format: the same loop, encoded in each, pairs the same way ---------

SHARED_PAIRING_RULES = {"missing-tool-response", "orphan-tool-message", "duplicate-tool-response",
                        "tool-call-id-mismatch"}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
# one round: k calls, the results of some of them (in any order), maybe a user note after
ROUND = st.integers(1, 3).flatmap(lambda k: st.tuples(
    st.just(k),
    st.permutations(range(k)).flatmap(lambda order: st.integers(0, k).map(lambda n: order[:n])),
    st.booleans()))


def tool_loop(rounds) -> list[dict]:
    messages, n = [{"role": "user", "content": "q"}], 0
    for k, answered, note in rounds:
        ids = [f"call_{n + i}" for i in range(k)]
        n += k
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}} for c in ids]})
        messages += [{"role": "tool", "tool_call_id": ids[i], "content": f"r{i}"} for i in answered]
        if note:
            messages.append({"role": "user", "content": "note"})
    # a request ending on the model's calls is not a verified rejection for Gemini (PROTOCOL.md)
    if messages[-1]["role"] == "assistant":
        messages.append({"role": "user", "content": "go on"})
    return messages


@settings(max_examples=150, deadline=None)
@given(st.lists(ROUND, min_size=1, max_size=3))
def test_one_loop_in_all_four_formats_pairs_and_judges_the_same(rounds):
    """Encoded by each codec, one loop gets the same labels, as many answered calls and the
    same pairing findings in every format (Gemini binds by position, the others by id: which
    call a result answers may differ, how many are answered may not)."""
    from agentdbg.checker.formats import check_document
    from agentdbg.wire import codec
    from agentdbg.wire.pairing import analyze

    messages = tool_loop(rounds)
    seen = {}
    for name in codec.NAMES:
        c = codec.get(name)
        body = c.encode_request(messages, TOOLS)
        p = analyze(c, c.items(body))
        rules = {f.rule for f in check_document(body, name)} & SHARED_PAIRING_RULES
        seen[name] = (list(p.labels.values()), len(p.answer_of), sorted(rules))
    assert len({repr(v) for v in seen.values()}) == 1, (messages, seen)
