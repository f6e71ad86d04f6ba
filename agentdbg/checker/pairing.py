"""Which tool message answers which tool call: the one pairing analysis.

The pairing rules, the messages view, the proxy and the offline model all read the
``Pairing`` computed here, so a ✓ or ✗ on screen and a finding can never disagree.

A *tool block* is the run of ``role: "tool"`` messages directly after an assistant
message with a non-empty ``tool_calls`` list. Inside a block a result answers the
call carrying its ``tool_call_id`` (order is free, as the APIs bind by id). A result
for a call of the block that arrives after another message interrupted the block is
*late* (the interloper is what the API rejects). Tool messages outside any block are
orphans.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from enum import Enum


class ResultState(str, Enum):
    OK = "ok"                  # answers a call of its block
    ORPHAN = "orphan"          # not inside a tool block
    MISMATCH = "mismatch"      # its tool_call_id is not an id of the block's calls
    DUPLICATE = "duplicate"    # a second answer to the same call
    MISSING_ID = "missing_id"  # no tool_call_id at all
    IDLESS = "idless"          # no tool_call_id, attributed to a call that has no id either
    LATE = "late"              # answers a call of an earlier block, after an interloper


class CallState(str, Enum):
    ANSWERED = "answered"
    LATE = "late"              # answered only after an interloper
    UNANSWERED = "unanswered"
    PENDING = "pending"        # the run is executing it now (``in_progress``)


_OK, _DUPLICATE, _MISMATCH = ResultState.OK, ResultState.DUPLICATE, ResultState.MISMATCH


@dataclass(slots=True)
class Block:
    """One assistant message with calls, and what answered them."""

    assistant: int
    ids: list[str | None]              # per call position; None when the call has no id
    end: int                           # index just after the block's tool messages
    broken: bool = False               # a mismatched or id-less result is in the block
    interloper: int | None = None      # the message that cut the block, when results came late
    late: dict[str, int] = field(default_factory=dict)       # call id -> late result index
    unanswered: list[str] = field(default_factory=list)      # ids with no result at all
    order: list[tuple[int, int]] = field(default_factory=list)  # (call position, result index)
    pending: bool = False              # in progress: its results are being produced now


@dataclass
class Pairing:
    numbers: dict[str, int] = field(default_factory=dict)              # call id -> 0, 1 … (A, B …)
    answer_of: dict[tuple[int, int], int] = field(default_factory=dict)  # (asst, pos) -> result
    call_of: dict[int, tuple[int, int]] = field(default_factory=dict)    # result -> (asst, pos)
    status: dict[int, ResultState] = field(default_factory=dict)         # tool message -> state
    block_of: dict[int, int] = field(default_factory=dict)               # tool message -> asst
    blocks: list[Block] = field(default_factory=list)
    orphan_runs: list[tuple[int, int]] = field(default_factory=list)     # [first, end)
    first_use: dict[str, int] = field(default_factory=dict)              # call id -> first asst

    @property
    def labels(self) -> dict[str, str]:
        """call id -> its label ("A", "B" … "AA"), in the order the ids first appear."""
        return {cid: _label(n) for cid, n in self.numbers.items()}

    def label(self, call_id: object) -> str | None:
        n = self.numbers.get(call_id) if isinstance(call_id, str) else None
        return None if n is None else _label(n)

    def call_state(self, asst: int, pos: int) -> CallState:
        """What the view draws on call ``pos`` of assistant ``asst``."""
        if (asst, pos) in self.answer_of:
            return CallState.LATE if self.status.get(self.answer_of[(asst, pos)]) is \
                ResultState.LATE else CallState.ANSWERED
        block = self.block_at(asst)
        if block is not None and block.pending:
            return CallState.PENDING
        return CallState.UNANSWERED

    def block_at(self, asst: int) -> Block | None:
        return next((b for b in self.blocks if b.assistant == asst), None)


def _label(n: int) -> str:
    letters = string.ascii_uppercase
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = letters[r] + out
    return out


def calls_of(m: object) -> list:
    """The non-empty ``tool_calls`` list of an assistant message, else []."""
    if not isinstance(m, dict) or m.get("role") != "assistant":
        return []
    calls = m.get("tool_calls")
    return calls if type(calls) is list else []


def call_id(call: object) -> str | None:
    cid = call.get("id") if isinstance(call, dict) else None
    return cid if isinstance(cid, str) and cid else None


def _role(m: object) -> object:
    return m.get("role") if isinstance(m, dict) else None


def analyze(messages: list, *, in_progress: bool = False) -> Pairing:
    """The pairing of ``messages``. ``in_progress``: the last assistant turn's calls are
    being executed now, so their missing results are pending rather than missing.

    One pass over the messages (a late result is looked for only after a block left a call
    unanswered); the roles are read once, as this runs on every check of every request."""
    p = Pairing()
    roles = [m.get("role") if type(m) is dict else _role(m) for m in messages]
    numbers, first_use, status, orphan = p.numbers, p.first_use, p.status, ResultState.ORPHAN
    claimed: set[int] = set()   # late results, answered across an interloper
    i, n = 0, len(messages)
    while i < n:
        role = roles[i]
        if role == "tool":
            j = i
            while j < n and roles[j] == "tool" and j not in claimed:
                status[j] = orphan
                j += 1
            if j > i:
                p.orphan_runs.append((i, j))
                i = j
            else:
                i += 1
            continue
        calls = messages[i].get("tool_calls") if role == "assistant" else None
        if type(calls) is not list or not calls:
            i += 1
            continue
        ids = [call_id(c) for c in calls]
        for cid in ids:
            if cid:
                if cid not in numbers:
                    numbers[cid] = len(numbers)
                first_use.setdefault(cid, i)
        block = _block(p, messages, roles, i, ids)
        block.pending = in_progress and block.end == n == i + 1
        if block.unanswered and not block.pending:
            _late(p, messages, block, claimed)
        p.blocks.append(block)
        i = block.end
    return p


def _block(p: Pairing, messages: list, roles: list, asst: int, ids: list) -> Block:
    """Pair the tool messages right after assistant ``asst``."""
    block = Block(asst, ids, asst + 1)
    # a duplicated id cannot be told apart: its first result answers it, a second is a duplicate
    open_positions: dict[str, int] = {}
    for pos, cid in enumerate(ids):
        if cid and cid not in open_positions:
            open_positions[cid] = pos
    idless = ids.count(None)
    answered: set[str] = set()
    status, block_of, answer_of, call_of = p.status, p.block_of, p.answer_of, p.call_of
    j, n = asst + 1, len(messages)
    while j < n and roles[j] == "tool":
        block_of[j] = asst
        tid = messages[j].get("tool_call_id")
        if not isinstance(tid, str) or not tid:
            if idless:
                idless -= 1
                status[j] = ResultState.IDLESS
            else:
                status[j] = ResultState.MISSING_ID
                block.broken = True
        elif tid not in open_positions:
            status[j] = _MISMATCH
            block.broken = True
        elif tid in answered:
            status[j] = _DUPLICATE
        else:
            answered.add(tid)
            pos = open_positions[tid]
            status[j] = _OK
            answer_of[(asst, pos)] = j
            call_of[j] = (asst, pos)
            block.order.append((pos, j))
        j += 1
    block.end = j
    if len(answered) < len(open_positions):
        block.unanswered = [cid for cid in open_positions if cid not in answered]
    return block


def _late(p: Pairing, messages: list, block: Block, claimed: set[int]) -> None:
    """Results for the block's unanswered calls that come after an interloper."""
    k, n = block.end, len(messages)
    while k < n and not calls_of(messages[k]):
        m = messages[k]
        tid = m.get("tool_call_id") if _role(m) == "tool" else None
        if tid in block.unanswered and tid not in block.late:
            block.late[tid] = k
        k += 1
    if not block.late:
        return
    block.interloper = block.end
    block.unanswered = [cid for cid in block.unanswered if cid not in block.late]
    for cid, k in block.late.items():
        claimed.add(k)
        pos = block.ids.index(cid)
        p.status[k] = ResultState.LATE
        p.block_of[k] = block.assistant
        p.answer_of[(block.assistant, pos)] = k
        p.call_of[k] = (block.assistant, pos)
