"""Which result answers which call, for the Responses API and the Anthropic Messages API.

Computed once per request and read by the format checkers and the view, the way
``agentdbg.pairing.pair`` serves Chat Completions. A location is a tuple into the native
structure: ``(5,)`` is ``input[5]``; ``(3, 1)`` is ``messages[3].content[1]`` and ``(3,)`` is
``messages[3]`` itself (a string content).

Result status: ``ok`` | ``orphan`` (no call it could answer) | ``mismatch`` (it names an id the
calls it follows do not have, or a call of another kind) | ``duplicate`` (a second result for
one call) | ``missing_id`` | ``external`` (Responses only: it answers a call held in a stored
response, via ``previous_response_id`` / ``conversation`` / an ``item_reference``, which this
request does not contain; see ``notes``).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any

from agentdbg.messages import VocabularyMap
from agentdbg.wire.common import Loc

# Responses: call item type -> the output item type that answers it (paired by call_id)
CALL_OUTPUT = VocabularyMap({
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
})
OUTPUT_CALL = VocabularyMap({v: k for k, v in CALL_OUTPUT.items()})
SERVER_CALLS = ("server_tool_use", "mcp_tool_use")   # Anthropic: answered inside the assistant turn


@dataclass
class Turn:
    """Anthropic: consecutive messages of one role, as the API combines them."""

    role: str
    msgs: list[int]
    blocks: list[tuple[Loc, dict]]   # (location, block); a string content is one text block at (i,)


@dataclass
class WirePairing:
    format: str
    labels: dict[str, str] = field(default_factory=dict)        # call id -> "A", "B" ...
    calls: dict[Loc, str | None] = field(default_factory=dict)   # call location -> its id
    answer_of: dict[Loc, Loc | None] = field(default_factory=dict)  # call -> result (None: none)
    results: dict[Loc, str | None] = field(default_factory=dict)    # result location -> id named
    status: dict[Loc, str] = field(default_factory=dict)           # result location -> status
    call_of: dict[Loc, Loc] = field(default_factory=dict)          # result -> the call it answers
    kinds: dict[Loc, str] = field(default_factory=dict)            # location -> item/block type
    block_of: dict[Loc, Loc] = field(default_factory=dict)  # Anthropic result -> its assistant msg
    turns: list[Turn] = field(default_factory=list)          # Anthropic only
    notes: list[str] = field(default_factory=list)           # what cannot be known from here

    def label(self, call_id: object) -> str | None:
        return self.labels.get(call_id) if isinstance(call_id, str) else None

    def path(self, loc: Loc) -> str:
        return loc_path(self.format, loc)


def loc_path(fmt: str, loc: Loc) -> str:
    if fmt == "responses":
        return f"input[{loc[0]}]"
    if fmt == "gemini":
        return f"contents[{loc[0]}]" + (f".parts[{loc[1]}]" if len(loc) > 1 else "")
    if len(loc) == 1:
        return f"messages[{loc[0]}].content"
    return f"messages[{loc[0]}].content[{loc[1]}]"


def _label(n: int) -> str:
    out, n = "", n + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = string.ascii_uppercase[r] + out
    return out


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _add_call(p: WirePairing, loc: Loc, kind: str, cid: str | None) -> None:
    p.calls[loc] = cid
    p.kinds[loc] = kind
    p.answer_of[loc] = None
    if cid and cid not in p.labels:
        p.labels[cid] = _label(len(p.labels))


def _answer(p: WirePairing, result: Loc, call: Loc) -> None:
    p.status[result] = "ok"
    p.call_of[result] = call
    p.answer_of[call] = result


# -- Responses --------------------------------------------------------------------------

def pair_responses(items: list, *, continued: str | None = None,
                   prior: list | None = None) -> WirePairing:
    """Pair ``input`` items by ``call_id`` (position does not matter to the OpenAI API).

    ``continued``: what the request continues ("previous_response_id resp_…", "conversation
    conv_…"), so outputs may answer calls this request does not hold. ``prior``: items the
    caller saw earlier in the same conversation (a proxy's stored responses); outputs answering
    them are ``external``, and with ``prior`` known an output answering nothing is an orphan.
    """
    p = WirePairing("responses")
    by_id: dict[str, list[Loc]] = {}
    referenced = False
    for i, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind in CALL_OUTPUT:
            cid = _id(item.get("call_id"))
            _add_call(p, (i,), kind, cid)
            if cid:
                by_id.setdefault(cid, []).append((i,))
        elif kind == "item_reference":
            referenced = True
    stored = _prior_calls(prior)
    for i, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind in OUTPUT_CALL:
            _pair_output(p, (i,), kind, _id(item.get("call_id")), by_id, stored,
                         continued if prior is None else None, referenced)
    return p


def _prior_calls(prior: list | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in prior or []:
        if isinstance(item, dict) and item.get("type") in CALL_OUTPUT and _id(item.get("call_id")):
            out[item["call_id"]] = item["type"]
    return out


def _pair_output(p: WirePairing, loc: Loc, kind: str, tid: str | None, by_id: dict,
                 stored: dict, continued: str | None, referenced: bool) -> None:
    p.results[loc] = tid
    p.kinds[loc] = kind
    if tid is None:
        p.status[loc] = "missing_id"
        return
    wanted = OUTPUT_CALL[kind]
    calls = by_id.get(tid, [])
    same = [c for c in calls if p.kinds[c] == wanted]
    free = next((c for c in same if p.answer_of[c] is None), None)
    if free is not None:
        _answer(p, loc, free)
    elif same:
        p.status[loc] = "duplicate"
        p.call_of[loc] = same[0]
    elif calls:
        p.status[loc] = "mismatch"
        p.call_of[loc] = calls[0]
    elif tid in stored or continued or referenced:
        p.status[loc] = "external"
        why = ("a response seen earlier in this conversation" if tid in stored else continued
               if continued else "an item_reference")
        known = "its call is there" if tid in stored else "whether that call exists cannot be known here"
        p.notes.append(f"input[{loc[0]}] answers {tid}, which this request does not contain: it "
                       f"continues {why}; {known}")
    else:
        p.status[loc] = "orphan"


# -- Anthropic --------------------------------------------------------------------------

def turns_of(messages: list) -> list[Turn]:
    """Consecutive same-role messages combined, as the API does; ``system`` messages inside
    ``messages`` are skipped (accepted, and they neither call nor answer)."""
    turns: list[Turn] = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "system":
            continue
        blocks = _blocks(i, m.get("content") if isinstance(m, dict) else None)
        if turns and role in ("user", "assistant") and turns[-1].role == role:
            turns[-1].msgs.append(i)
            turns[-1].blocks.extend(blocks)
        else:
            turns.append(Turn(role if isinstance(role, str) else "", [i], blocks))
    return turns


def _blocks(i: int, content: Any) -> list[tuple[Loc, dict]]:
    if isinstance(content, str):
        return [((i,), {"type": "text", "text": content})]
    if isinstance(content, list):
        return [((i, j), b if isinstance(b, dict) else {}) for j, b in enumerate(content)]
    return []


def pair_anthropic(messages: list) -> WirePairing:
    """Pair ``tool_use`` blocks with the ``tool_result`` blocks of the next user turn, and
    server tool blocks with their results inside the same assistant turn."""
    p = WirePairing("anthropic", turns=turns_of(messages))
    prev_calls: dict[str, list[Loc]] | None = None   # client calls of the assistant turn before
    prev_msg: Loc = ()
    for turn in p.turns:
        if turn.role == "assistant":
            prev_calls, prev_msg = _assistant_turn(p, turn), (turn.msgs[0],)
            continue
        for loc, block in turn.blocks:
            if block.get("type") == "tool_result":
                _client_result(p, loc, _id(block.get("tool_use_id")), prev_calls, prev_msg)
        prev_calls = None
    return p


def _assistant_turn(p: WirePairing, turn: Turn) -> dict[str, list[Loc]]:
    calls: dict[str, list[Loc]] = {}
    server: dict[str, Loc] = {}
    for loc, block in turn.blocks:
        kind = block.get("type")
        if kind == "tool_use":
            cid = _id(block.get("id"))
            _add_call(p, loc, kind, cid)
            calls.setdefault(cid or "", []).append(loc)
        elif kind in SERVER_CALLS:
            cid = _id(block.get("id"))
            _add_call(p, loc, kind, cid)
            if cid:
                server.setdefault(cid, loc)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            tid = _id(block.get("tool_use_id"))
            p.results[loc], p.kinds[loc] = tid, kind
            call = server.get(tid or "")
            if call is None:
                p.status[loc] = "missing_id" if tid is None else "orphan"
            elif p.answer_of[call] is None:
                _answer(p, loc, call)
            else:
                p.status[loc], p.call_of[loc] = "duplicate", call
    return calls


def _client_result(p: WirePairing, loc: Loc, tid: str | None,
                   calls: dict[str, list[Loc]] | None, asst: Loc) -> None:
    p.results[loc], p.kinds[loc] = tid, "tool_result"
    if calls:
        p.block_of[loc] = asst
    if tid is None:
        p.status[loc] = "missing_id"
    elif not calls:
        p.status[loc] = "orphan"
    elif tid not in calls:
        p.status[loc] = "mismatch"
    else:
        free = next((c for c in calls[tid] if p.answer_of[c] is None), None)
        if free is None:
            p.status[loc], p.call_of[loc] = "duplicate", calls[tid][0]
        else:
            _answer(p, loc, free)


# -- Gemini -----------------------------------------------------------------------------

def _gemini_field(d: Any, name: str) -> Any:
    from agentdbg.wire.gemini import field

    return field(d, name)


def pair_gemini(contents: list) -> WirePairing:
    """Pair ``functionCall`` parts with the ``functionResponse`` parts of the next content, by
    position (the k-th response answers the k-th call): Gemini binds them by turn and order,
    not by id. A response in a content that does not follow a call turn is an orphan; one past
    the number of calls has no call to answer."""
    p = WirePairing("gemini")
    calls: list[Loc] = []                 # the call parts of the content before, in order
    for i, content in enumerate(contents):
        content = content if isinstance(content, dict) else {}
        raw = content.get("parts")
        parts: list = raw if isinstance(raw, list) else []
        if content.get("role") == "model":
            calls = []
            for j, part in enumerate(parts):
                call = _gemini_field(part, "functionCall")
                if isinstance(call, dict):
                    loc = (i, j)
                    cid = call.get("id") if isinstance(call.get("id"), str) and call["id"] \
                        else f"call_{i}_{j}"
                    _add_call(p, loc, "functionCall", cid)
                    calls.append(loc)
            continue
        k = 0
        for j, part in enumerate(parts):
            response = _gemini_field(part, "functionResponse")
            if not isinstance(response, dict):
                continue
            loc = (i, j)
            p.kinds[loc] = "functionResponse"
            if k < len(calls):
                p.results[loc] = p.calls[calls[k]]
                _answer(p, loc, calls[k])
                p.block_of[loc] = (calls[k][0],)
            else:
                p.results[loc] = response.get("id") if isinstance(response.get("id"), str) else None
                p.status[loc] = "orphan"
            k += 1
        calls = []
    return p
