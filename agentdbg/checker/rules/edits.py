"""What an app changed in a conversation's history between two requests, said as what it is.

The previous request's messages are aligned with the next request's (as the API reads them:
a ``name`` added is an edit of its own, not a different message), and each difference is one
``Edit``: messages removed ("2 messages removed (call A and its result)", "[1] user question
removed"), a message changed, a message inserted before the end, a name added.

Whether an edit is a warning depends on what the model lost (the rule ``history-rewritten``):

* a **warning**: a message changed or inserted in the middle (the model is told it said or
  saw what it did not), and a removal of work the model has not answered on yet — a call or
  result after its last text answer, or the user question it is still working on;
* a **note**: a framework's trimming of past turns (messages before the model's last text
  answer: that answer, which holds what it learned, is still there) and a ``name`` added to
  a message (Semantic Kernel and AutoGen label the agent that wrote it).

A note is shown and recorded, never counted as a finding.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import N_, Join, Msg
from agentdbg.messages import canonical_json, tool_calls_of

MAX_ALIGNED = 4000      # messages: past that, histories are compared by their common prefix only


@dataclass(frozen=True)
class Edit:
    """One change: ``at`` is where it shows in the new request (the message after a cut)."""

    kind: str             # removed | changed | inserted | named
    at: int
    text: str             # English, as recorded
    lost: bool            # the model lost something it still works on: a warning
    shown: Any = field(default=None, compare=False)   # ``text`` as an i18n.Msg (--lang)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "at": self.at, "text": self.text,
                "severity": "warning" if self.lost else "note"}


def history_edits(before: list, now: list, *, in_progress: bool = True) -> list[Edit]:
    """The edits that turn ``before`` (the previous request) into the start of ``now``.
    ``in_progress``: the model's last reply asked for calls (its turn is not answered yet)."""
    if len(before) > MAX_ALIGNED or len(now) > MAX_ALIGNED:
        return _by_prefix(before, now)
    a, b = [_key(m) for m in before], [_key(m) for m in now]
    labels = _labels(before)
    answered = _answered_upto(before, in_progress)
    edits: list[Edit] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            edits.extend(_names(before, now, i1, i2, j1))
        elif op == "delete":
            edits.append(_removed(before, i1, i2, j1, labels, answered))
        elif op == "replace" and i2 == len(before) and not _one_for_one(before, now, i1, i2, j1):
            # the end of the previous request replaced by what follows: removed, then new
            edits.append(_removed(before, i1, i2, j1, labels, answered))
        elif op == "replace":
            edits.append(_changed(before, now, i1, i2, j1, j2))
        elif op == "insert" and i1 < len(before):
            edits.append(_edit("inserted", j1, Msg(
                "{count} inserted at [{at}] before messages the previous request already sent",
                {"count": _count(j2 - j1), "at": j1}), True))
    return edits


def step_edits(before: list, now: list) -> list[Edit]:
    """A text protocol's edits (DSPy ``ReAct``: each step a fresh prompt holding the trajectory):
    each step the previous prompt showed and this one no longer does. The run is still working
    on its question, so the model lost a call and what it returned: a warning."""
    from agentdbg.agents import lost_steps

    at, prev = _last_user(now), _last_user(before)
    if at is None or prev is None:
        return []
    return [_edit("removed", at, Msg("text step {n} removed ({tool} and its observation)",
                                     {"n": s.number, "tool": s.tool}), True)
            for s in lost_steps(before[prev].get("content"), now[at].get("content"))]


def _last_user(messages: list) -> int | None:
    return next((i for i in range(len(messages) - 1, -1, -1)
                 if isinstance(messages[i], dict) and messages[i].get("role") == "user"), None)


def continues(before: list, now: list) -> bool:
    """``now`` goes on from ``before`` with edits: some model output of ``before`` (an
    assistant message, which a model generates once) is still in ``now``."""
    if len(before) > MAX_ALIGNED or len(now) > MAX_ALIGNED:
        return False
    mine = {_key(m) for m in before if _role(m) == "assistant" and _substantial(m)}
    return bool(mine) and any(_key(m) in mine for m in now if _role(m) == "assistant")


# -- each kind of edit -------------------------------------------------------------------------

def _removed(before: list, i1: int, i2: int, at: int, labels: dict[str, str],
             answered: int) -> Edit:
    gone = before[i1:i2]
    lost = i2 - 1 > answered
    if len(gone) == 1 and _role(gone[0]) == "user":
        return _edit("removed", at, Msg("[{i}] user question removed", {"i": i1}), lost)
    parts = _what(gone, i1, labels)
    return _edit("removed", at, Msg("{count} removed ({parts})",
                                    {"count": _count(len(gone)), "parts": parts}), lost)


def _what(gone: list, start: int, labels: dict[str, str]) -> Msg | Join:
    """What a removed stretch held: "call A and its result", "[1] user question", "answer [4]"."""
    calls = [labels.get(str(c.get("id")), "?") for m in gone for c in tool_calls_of(m)
             if isinstance(c, dict)]
    results = {labels.get(str(m.get("tool_call_id")), "?") for m in gone if _role(m) == "tool"}
    out: list[Msg] = []
    if calls:
        many, both = len(calls) > 1, set(calls) <= results
        said = ((N_("calls {names} and their results") if many else N_("call {names} and its result"))
                if both else (N_("calls {names}") if many else N_("call {names}")))
        out.append(Msg(said, {"names": ", ".join(calls)}))
    extra = sorted(results - set(calls))
    if extra:
        said = N_("results of {names}") if len(extra) > 1 else N_("result of {names}")
        out.append(Msg(said, {"names": ", ".join(extra)}))
    for k, m in enumerate(gone):
        role = _role(m)
        if role == "user":
            out.append(Msg("[{i}] user question", {"i": start + k}))
        elif role in ("system", "developer"):
            out.append(Msg("[{i}] instructions", {"i": start + k}))
        elif role == "assistant" and not tool_calls_of(m):
            out.append(Msg("[{i}] answer", {"i": start + k}))
    return Join(tuple(out)) if out else Msg("messages")


def _changed(before: list, now: list, i1: int, i2: int, j1: int, j2: int) -> Edit:
    if i2 - i1 == 1 and (j2 - j1 == 1 or _role(before[i1]) == _role(now[j1])):
        role = _role(before[i1]) or "message"
        return _edit("changed", j1, Msg("[{i}] {role} message changed", {"i": i1, "role": role}),
                     True)
    return _edit("changed", j1, Msg("[{first}..{last}] replaced by {count} at [{at}]", {
        "first": i1, "last": i2 - 1, "count": _count(j2 - j1), "at": j1}), True)


def _one_for_one(before: list, now: list, i1: int, i2: int, j1: int) -> bool:
    """One message in the place of one of the same role: that message changed."""
    return i2 - i1 == 1 and _role(before[i1]) == _role(now[j1])


def _names(before: list, now: list, i1: int, i2: int, j1: int) -> list[Edit]:
    out = []
    for k in range(i2 - i1):
        was, is_ = _name(before[i1 + k]), _name(now[j1 + k])
        if was == is_ or _role(now[j1 + k]) == "tool":
            continue
        at, name = j1 + k, json.dumps(is_, ensure_ascii=False)
        what = (Msg("name {name} added to [{i}]", {"name": name, "i": at}) if was is None
                else Msg("name removed from [{i}]", {"i": at}) if is_ is None
                else Msg("name of [{i}] changed to {name}", {"name": name, "i": at}))
        out.append(_edit("named", at, what, False))
    return out


def _by_prefix(before: list, now: list) -> list[Edit]:
    from agentdbg.transcript.compare import common_prefix

    p = common_prefix(before, now)
    if p >= len(before):
        return []
    return [_edit("changed", p, Msg("message {p} differs from the previous request's", {"p": p}),
                  True)]


def _edit(kind: str, at: int, text: Msg, lost: bool) -> Edit:
    """An edit said in English (``text``) and shown in the chosen language (``shown``)."""
    return Edit(kind, at, str(text), lost, text)


# -- helpers ---------------------------------------------------------------------------------

def _answered_upto(before: list, in_progress: bool) -> int:
    """The index of the model's last text answer: what comes after it is work in progress."""
    last = next((k for k in range(len(before) - 1, -1, -1)
                 if _role(before[k]) == "assistant" and not tool_calls_of(before[k])), -1)
    if not in_progress and last == -1:
        return len(before)     # nothing asked for and no answer yet: nothing in progress
    return last


def _labels(before: list) -> dict[str, str]:
    from agentdbg.checker.pairing import analyze

    return analyze(before).labels


def _key(m: object) -> str:
    """A message as the API reads it, without its ``name`` (an edit of its own)."""
    if not isinstance(m, dict):
        return canonical_json(m)
    out = {k: v for k, v in m.items() if k not in ("name", "index", "parsed", "parsed_arguments")
           and v not in (None, "", [])}
    content = out.get("content")
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         for p in content):
        out["content"] = "".join(str(p.get("text", "")) for p in content)
    calls = tool_calls_of(m)
    if calls:
        out["tool_calls"] = [_call_key(c) for c in calls]
    try:
        return canonical_json(out)
    except (TypeError, ValueError, RecursionError):
        return repr(out)


def _call_key(call: object) -> object:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return call
    fn = dict(call["function"])
    if isinstance(fn.get("arguments"), str):
        with contextlib.suppress(ValueError, RecursionError):
            fn["arguments"] = json.loads(fn["arguments"])
    return {k: v for k, v in {**call, "function": fn}.items() if k != "index"}


def _substantial(m: object) -> bool:
    return bool(tool_calls_of(m)) or bool(isinstance(m, dict) and m.get("content"))


def _role(m: object) -> str | None:
    role = m.get("role") if isinstance(m, dict) else None
    return role if isinstance(role, str) else None


def _name(m: object) -> str | None:
    name = m.get("name") if isinstance(m, dict) else None
    return name if isinstance(name, str) else None


def _count(n: int) -> Msg:
    return Msg(N_("{n} message") if n == 1 else N_("{n} messages"), {"n": n})
