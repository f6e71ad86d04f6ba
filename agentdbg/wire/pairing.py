"""Which result answers which call: the one pairing analysis, for every wire format.

The checker's rules (the shared ones and each format's own), the messages view, the report,
the proxy and the offline model all read the ``Pairing`` computed here, so a ✓ or ✗ on screen
and a finding can never disagree.

A codec maps its conversation to ``Entry`` rows, one per top-level entry (message, item,
content): the entry's role, its calls and its results, each with its native location (a
``Loc`` into the conversation key: ``(3, 1)`` is ``messages[3].tool_calls[1]`` or
``messages[3].content[1]`` or ``contents[3].parts[1]``; ``(5,)`` is the whole entry
``input[5]`` or a ``role: "tool"`` message). The codec also says how its API binds a result to
a call (``Codec.pairs_by``, ``pairs_within``, ``merges``); the analysis below is the same for
every format:

- ``within = "block"`` (Chat Completions): a *tool block* is the run of result entries right
  after an entry with calls. A result answering a call of the block after another entry cut
  the block is *late* (the interloper is what the API rejects); results outside any block are
  orphans.
- ``within = "turn"`` (Anthropic, Gemini): consecutive entries of a role in ``merges`` are one
  turn; the results of a turn answer the calls of the turn just before it; results inside the
  calling turn answer the hosted (server) calls of that turn.
- ``within = "request"`` (Responses): a result answers the call of the same id anywhere in the
  request, of the kind the result's type answers. A request that continues a conversation the
  server holds (``continued``) or refers to held items may answer calls it does not contain:
  those results are ``external`` (``notes`` says why).

``pairs_by = "id"``: a result names its call's id; ``"position"`` (Gemini): the k-th result of
a turn answers the k-th call of the turn before.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeAlias

from agentdbg.i18n import N_

Loc: TypeAlias = tuple[int, ...]      # as agentdbg.conversation.Loc (not imported: start-up)

#: a call: (location, id or None, kind, hosted: answered inside its own turn by the provider)
CallRow: TypeAlias = "tuple[Loc, str | None, str, bool]"
#: a result: (location, id it names or None, kind, kind of call it answers or None: any)
ResultRow: TypeAlias = "tuple[Loc, str | None, str, str | None]"
NO_CALLS: list[CallRow] = []
NO_RESULTS: list[ResultRow] = []
REFERENCE = "reference"     # the role of an entry that stands for items the server holds


#: one top-level entry of the conversation, as the pairing reads it: (role, calls, results)
#: (a plain tuple: a codec makes one per message on every check of every request)
Entry: TypeAlias = "tuple[str, list[CallRow], list[ResultRow]]"


def entry(role: str, calls: list[CallRow] = NO_CALLS, results: list[ResultRow] = NO_RESULTS
          ) -> Entry:
    return (role, calls, results)


class Codec(Protocol):
    """What the analysis reads of a codec (``agentdbg.wire.codec.Codec``): how its API binds a
    result to a call, and its entries as ``Entry`` rows."""

    pairs_by: str
    pairs_within: str
    merges: tuple[str, ...]
    skips: tuple[str, ...]
    calling_role: str

    def pairing_entries(self, items: list) -> list[Entry]: ...
    def path(self, loc: Loc) -> str: ...


class ResultState(str, Enum):
    OK = "ok"                  # answers a call
    ORPHAN = "orphan"          # no call it could answer
    MISMATCH = "mismatch"      # names an id the calls it follows do not have (or another kind's)
    DUPLICATE = "duplicate"    # a second answer to the same call
    MISSING_ID = "missing_id"  # no id at all
    IDLESS = "idless"          # no id, attributed to a call that has no id either
    LATE = "late"              # answers a call of an earlier block, after an interloper
    EXTERNAL = "external"      # answers a call held by the server, not in this request


class CallState(str, Enum):
    ANSWERED = "answered"
    LATE = "late"              # answered only after an interloper
    UNANSWERED = "unanswered"
    PENDING = "pending"        # the run is executing it now (``in_progress``)


_OK, _DUPLICATE, _MISMATCH, _ORPHAN = (ResultState.OK, ResultState.DUPLICATE,
                                       ResultState.MISMATCH, ResultState.ORPHAN)


@dataclass(slots=True)
class Block:
    """One entry with calls (Chat Completions: an assistant message), and what answered them."""

    assistant: int
    ids: list[str | None]              # per call position; None when the call has no id
    end: int                           # index just after the block's result entries
    broken: bool = False               # a mismatched or id-less result is in the block
    interloper: int | None = None      # the entry that cut the block, when results came late
    late: dict[str, int] = field(default_factory=dict)       # call id -> late result entry
    unanswered: list[str] = field(default_factory=list)      # ids with no result at all
    order: list[tuple[int, int]] = field(default_factory=list)  # (call position, result entry)
    pending: bool = False              # in progress: its results are being produced now


@dataclass
class Pairing:
    """Calls and results by native location, and which answers which."""

    numbers: dict[str, int] = field(default_factory=dict)         # call id -> 0, 1 … (A, B …)
    calls: dict[Loc, str | None] = field(default_factory=dict)     # call location -> its id
    answer_of: dict[Loc, Loc] = field(default_factory=dict)        # answered call -> its result
    status: dict[Loc, ResultState] = field(default_factory=dict)   # result location -> state
    call_of: dict[Loc, Loc] = field(default_factory=dict)          # result -> the call it answers
    block_of: dict[Loc, Loc] = field(default_factory=dict)         # result -> its calling entry
    blocks: list[Block] = field(default_factory=list)              # within = "block"
    orphan_runs: list[tuple[int, int]] = field(default_factory=list)  # [first, end) entries
    first_use: dict[str, int] = field(default_factory=dict)        # call id -> first entry
    notes: list[str] = field(default_factory=list)                 # what cannot be known here
    entries: list[Entry] = field(default_factory=list, repr=False)  # what was paired
    named: dict[Loc, str | None] = field(default_factory=dict, repr=False)  # by position: the
                                                                    # id of the call answered
    _read: tuple[dict[Loc, str | None], dict[Loc, str]] | None = field(default=None, repr=False)

    @property
    def results(self) -> dict[Loc, str | None]:
        """result location -> the id it names (by position: its call's)."""
        return self._rows()[0]

    @property
    def kinds(self) -> dict[Loc, str]:
        """call or result location -> its item or block type (read when asked: the rules of
        most formats never ask)."""
        return self._rows()[1]

    def _rows(self) -> tuple[dict[Loc, str | None], dict[Loc, str]]:
        if self._read is None:
            results: dict[Loc, str | None] = {}
            kinds: dict[Loc, str] = {}
            for _, calls, rows in self.entries:
                for call in calls:
                    kinds[call[0]] = call[2]
                for row in rows:
                    results[row[0]], kinds[row[0]] = self.named.get(row[0], row[1]), row[2]
            self._read = results, kinds
        return self._read

    @property
    def labels(self) -> dict[str, str]:
        """call id -> its label ("A", "B" … "AA"), in the order the ids first appear."""
        return {cid: label_of(n) for cid, n in self.numbers.items()}

    def label(self, call_id: object) -> str | None:
        n = self.numbers.get(call_id) if isinstance(call_id, str) else None
        return None if n is None else label_of(n)

    def call_state(self, asst: int, pos: int) -> CallState:
        """What the view draws on call ``pos`` of entry ``asst``."""
        answer = self.answer_of.get((asst, pos))
        if answer is not None:
            return CallState.LATE if self.status.get(answer) is ResultState.LATE \
                else CallState.ANSWERED
        block = self.block_at(asst)
        if block is not None and block.pending:
            return CallState.PENDING
        return CallState.UNANSWERED

    def block_at(self, asst: int) -> Block | None:
        return next((b for b in self.blocks if b.assistant == asst), None)


def label_of(n: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "AA" …"""
    out, n = "", n + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = string.ascii_uppercase[r] + out
    return out


def analyze(codec: Codec, items: list, *, in_progress: bool = False, continued: str | None = None,
            prior: list | None = None) -> Pairing:
    """The pairing of the conversation entries ``items`` of ``codec``'s format.

    ``in_progress``: the last entry's calls are being executed now, so their missing results
    are pending. ``continued``: what the request continues ("previous_response_id resp_…"),
    so results may answer calls it does not hold; ``prior``: entries seen earlier in the same
    conversation (a proxy's stored responses): results answering them are ``external``, and
    with ``prior`` known a result answering nothing is an orphan."""
    entries = codec.pairing_entries(items)
    p = Pairing(entries=entries)
    if codec.pairs_within == "block":
        _by_block(p, entries, in_progress)
    elif codec.pairs_within == "turn":
        _by_turn(p, entries, codec)
    else:
        stored = {c[1]: c[2] for e in codec.pairing_entries(prior or []) for c in e[1] if c[1]}
        _by_request(p, entries, codec, stored, continued if prior is None else None)
    return p


def _add_call(p: Pairing, loc: Loc, cid: str | None) -> None:
    p.calls[loc] = cid
    if cid and cid not in p.numbers:
        p.numbers[cid] = len(p.numbers)


def _answer(p: Pairing, result: Loc, call: Loc, state: ResultState = _OK) -> None:
    p.status[result] = state
    p.call_of[result] = call
    p.answer_of[call] = result




# -- within a block: results right after their calls (Chat Completions) ---------------------

def _by_block(p: Pairing, entries: list[Entry], in_progress: bool) -> None:
    claimed: set[int] = set()   # late results, answered across an interloper
    calls, numbers, first_use, status = p.calls, p.numbers, p.first_use, p.status
    i, n = 0, len(entries)
    while i < n:
        _, made, answers = entries[i]
        if answers and not made:
            j = i
            while j < n and entries[j][2] and not entries[j][1] and j not in claimed:
                for row in entries[j][2]:
                    status[row[0]] = _ORPHAN
                j += 1
            if j > i:
                p.orphan_runs.append((i, j))
                i = j
            else:
                i += 1
            continue
        if not made:
            i += 1
            continue
        ids = []
        for loc, cid, _, _ in made:    # _add_call, inline: this runs per call
            ids.append(cid)
            calls[loc] = cid
            if cid and cid not in numbers:
                numbers[cid] = len(numbers)
                first_use[cid] = i
        block = _block(p, entries, i, ids)
        block.pending = in_progress and block.end == n == i + 1
        if block.unanswered and not block.pending:
            _late(p, entries, block, claimed)
        p.blocks.append(block)
        i = block.end


def _block(p: Pairing, entries: list[Entry], asst: int, ids: list[str | None]) -> Block:
    """Pair the result entries right after entry ``asst``."""
    block = Block(asst, ids, asst + 1)
    calls = entries[asst][1]
    # a duplicated id cannot be told apart: its first result answers it, a second is a duplicate
    open_positions: dict[str, int] = {}
    for pos, cid in enumerate(ids):
        if cid and cid not in open_positions:
            open_positions[cid] = pos
    idless = ids.count(None)
    j, n, home = asst + 1, len(entries), (asst,)
    status, block_of = p.status, p.block_of
    answer_of, call_of, order = p.answer_of, p.call_of, block.order
    while j < n:
        _, made, answers = entries[j]
        if not answers or made:
            break
        for loc, tid, _, _ in answers:   # _answer, inline
            block_of[loc] = home
            if tid is None:
                if idless:
                    idless -= 1
                    status[loc] = ResultState.IDLESS
                else:
                    status[loc] = ResultState.MISSING_ID
                    block.broken = True
            elif (pos := open_positions.pop(tid, -1)) < 0:   # answered already, or not a call's
                if tid in ids:
                    status[loc] = _DUPLICATE
                else:
                    status[loc] = _MISMATCH
                    block.broken = True
            else:
                call = calls[pos][0]
                status[loc], call_of[loc], answer_of[call] = _OK, call, loc
                order.append((pos, j))
        j += 1
    block.end = j
    if open_positions:
        block.unanswered = list(open_positions)   # what is still open, in call order
    return block


def _late(p: Pairing, entries: list[Entry], block: Block, claimed: set[int]) -> None:
    """Results for the block's unanswered calls that come after an interloper."""
    k, n = block.end, len(entries)
    rows: dict[str, ResultRow] = {}
    while k < n and not entries[k][1]:
        for row in entries[k][2]:
            tid = row[1]
            if tid in block.unanswered and tid not in block.late:
                block.late[tid] = k
                rows[tid] = row
        k += 1
    if not block.late:
        return
    block.interloper = block.end
    block.unanswered = [cid for cid in block.unanswered if cid not in block.late]
    calls = [c[0] for c in entries[block.assistant][1]]
    for cid, k in block.late.items():
        claimed.add(k)
        row = rows[cid]
        p.block_of[row[0]] = (block.assistant,)
        _answer(p, row[0], calls[block.ids.index(cid)], ResultState.LATE)


# -- within a turn: the next turn answers (Anthropic, Gemini) -------------------------------

def _turns(entries: list[Entry], codec: Codec) -> list[tuple[str, list[int]]]:
    """(role, entry indexes): consecutive entries of a role in ``codec.merges`` are one turn;
    entries of a role in ``codec.skips`` neither call nor answer, nor part turns."""
    turns: list[tuple[str, list[int]]] = []
    merges, skips = codec.merges, codec.skips
    for i, (role, _, _) in enumerate(entries):
        if role in skips:
            continue
        if turns and role in merges and turns[-1][0] == role:
            turns[-1][1].append(i)
        else:
            turns.append((role, [i]))
    return turns


def _by_turn(p: Pairing, entries: list[Entry], codec: Codec) -> None:
    calls: list[CallRow] = []      # the client calls of the calling turn just before
    home: Loc = ()
    for role, members in _turns(entries, codec):
        if role == codec.calling_role:
            calls = _calling_turn(p, [entries[i] for i in members])
            home = (members[0],)
            continue
        rows = [row for i in members for row in entries[i][2]]
        if codec.pairs_by == "position":
            _by_position(p, rows, calls, home)
        else:
            for row in rows:
                _by_id(p, row, calls, home)
        calls = []


def _calling_turn(p: Pairing, members: list[Entry]) -> list[CallRow]:
    """Add the turn's calls; pair its hosted calls with the results inside the turn."""
    client: list[CallRow] = []
    hosted: dict[str, Loc] = {}
    for _, made, answers in members:
        for c in made:
            _add_call(p, c[0], c[1])
            if not c[3]:
                client.append(c)
            elif c[1]:
                hosted.setdefault(c[1], c[0])
        for row in answers:
            call = hosted.get(row[1] or "")
            if call is None:
                p.status[row[0]] = ResultState.MISSING_ID if row[1] is None else _ORPHAN
            elif call not in p.answer_of:
                _answer(p, row[0], call)
            else:
                p.status[row[0]], p.call_of[row[0]] = _DUPLICATE, call
    return client


def _by_id(p: Pairing, row: ResultRow, calls: list[CallRow], home: Loc) -> None:
    loc, tid = row[0], row[1]
    if calls:
        p.block_of[loc] = home
    same = [c[0] for c in calls if c[1] == tid] if tid is not None else []
    if tid is None:
        p.status[loc] = ResultState.MISSING_ID
    elif not calls:
        p.status[loc] = _ORPHAN
    elif not same:
        p.status[loc] = _MISMATCH
    else:
        free = next((c for c in same if c not in p.answer_of), None)
        if free is None:
            p.status[loc], p.call_of[loc] = _DUPLICATE, same[0]
        else:
            _answer(p, loc, free)


def _by_position(p: Pairing, rows: list[ResultRow], calls: list[CallRow], home: Loc) -> None:
    for k, row in enumerate(rows):
        if k < len(calls):
            p.named[row[0]] = calls[k][1]
            _answer(p, row[0], calls[k][0])
            p.block_of[row[0]] = home
        else:
            p.status[row[0]] = _ORPHAN


# -- anywhere in the request (Responses) ----------------------------------------------------

def _by_request(p: Pairing, entries: list[Entry], codec: Codec, stored: dict[str, str],
                continued: str | None) -> None:
    by_id: dict[str, list[tuple[Loc, str]]] = {}    # call id -> (location, kind) of its calls
    referenced = False
    for role, made, _ in entries:
        referenced = referenced or role == REFERENCE
        for c in made:
            _add_call(p, c[0], c[1])
            if c[1]:
                by_id.setdefault(c[1], []).append((c[0], c[2]))
    for _, _, answers in entries:
        for row in answers:
            _anywhere(p, row, codec, by_id, stored, continued, referenced)


def _anywhere(p: Pairing, row: ResultRow, codec: Codec, by_id: dict[str, list[tuple[Loc, str]]],
              stored: dict[str, str], continued: str | None, referenced: bool) -> None:
    loc, tid = row[0], row[1]
    if tid is None:
        p.status[loc] = ResultState.MISSING_ID
        return
    kinds = by_id.get(tid, [])
    calls = [c for c, _ in kinds]
    same = [c for c, kind in kinds if row[3] is None or kind == row[3]]
    free = next((c for c in same if c not in p.answer_of), None)
    if free is not None:
        _answer(p, loc, free)
    elif same:
        p.status[loc], p.call_of[loc] = _DUPLICATE, same[0]
    elif calls:
        p.status[loc], p.call_of[loc] = _MISMATCH, calls[0]
    elif tid in stored or continued or referenced:
        p.status[loc] = ResultState.EXTERNAL
        why = (N_("a response seen earlier in this conversation") if tid in stored else continued
               if continued else N_("an item_reference"))
        known = N_("its call is there") if tid in stored else \
            N_("whether that call exists cannot be known here")
        p.notes.append(N_("{where} answers {id}, which this request does not contain: it continues "
                          "{why}; {known}").format(where=codec.path(loc), id=tid, why=why, known=known))
    else:
        p.status[loc] = _ORPHAN
