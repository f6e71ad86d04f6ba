"""What the analyst reads from one exchange, in any of the three wire formats.

A request is judged twice over, as for Chat Completions: by the format's own checker on the
native body (its findings point into ``input[5]`` / ``messages[3].content[1]``), and by the
cross-request rules on the conversation's chat form (their indices are mapped back onto the
native items). A Responses request continuing a stored response (``previous_response_id``) is
judged with what the proxy saw of that conversation before; when the proxy never saw it, it
says so plainly.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from agentdbg.checker.rules.conversation import one_per_defect
from agentdbg.i18n import N_
from agentdbg.server.proxy.conversations import Conversation, Tracker
from agentdbg.server.served import Stored, chain_messages
from agentdbg.wire.codec import Codec, error_text
from agentdbg.wire.common import ChatForm, ChatReply, strip_wire


@dataclass
class Seen:
    """One request as the analyst understood it."""

    wire: Codec
    body: dict
    conv: Conversation
    messages: list                    # the conversation's chat form (what the rules and replay see)
    findings: list
    form: ChatForm | None = None      # None for Chat Completions (the body is its own chat form)
    sources: list[str] = field(default_factory=list)
    pairing: Any = None               # the format's WirePairing (None: chat, the view pairs it)
    chain: Stored | None = None       # the stored response this request continues
    notes: list[str] = field(default_factory=list)
    new_from: int = 0                 # the first native item / message new in this request
    edits: list = field(default_factory=list)   # history edits (``rules.edits``), native indices


def judge(wire: Codec, body: dict, tracker: Tracker, client: str | None, profile: str) -> Seen:
    """Assign the conversation and check the request (format rules + cross-request rules)."""
    if wire.chat_native:
        messages = body["messages"]
        conv = tracker.assign(messages, client)
        new_from = tracker.new_from(conv, messages)
        seen = Seen(wire, body, conv, messages, [], new_from=new_from)
        rejudge(seen, body, tracker, profile)
        return seen
    form = wire.chat_form(body)
    chain, notes = _chain(tracker, wire.continues(body))
    messages, sources = chain_messages(form, chain)
    messages = strip_wire(messages)
    if chain is not None:
        conv = chain.owner
        conv.client = client
    elif wire.continues(body):
        conv = tracker.start(client)      # it continues what this proxy never saw
    else:
        conv = tracker.assign(messages, client)
    seen = Seen(wire, body, conv, messages, [], form, sources, chain=chain, notes=notes)
    seen.new_from = 0 if chain is not None else _native_index(seen, tracker.new_from(conv, messages))
    rejudge(seen, body, tracker, profile)
    return seen


def rejudge(seen: Seen, body: dict, tracker: Tracker, profile: str) -> None:
    """(Re)check ``body`` as the request of ``seen`` (the intercept prompt may have edited it)."""
    seen.body = body
    if seen.wire.chat_native:
        from agentdbg.checker import check

        seen.messages = body.get("messages") or []
        single = check(body, profile)
        seen.findings = one_per_defect(tracker.check(seen.conv, seen.messages), single) + single
        seen.edits = list(seen.conv.rules.edits)
        return
    # what the proxy saw before: the stored chain, else this conversation's earlier outputs
    # (they name the reasoning item a call came with)
    prior = seen.chain.items if seen.chain is not None else (seen.conv.outputs or None)
    from agentdbg.checker.formats import analyze

    findings, seen.pairing = analyze(seen.wire.name, body, profile, prior=prior)
    across = [_mapped(seen, f) for f in tracker.check(seen.conv, seen.messages)
              # continuing a stored response cannot rewrite it: going on from an earlier one
              # of the chain is a branch the API offers, not a changed history
              if not (seen.chain is not None and f.rule == "history-rewritten")]
    across = one_per_defect(across, findings)
    seen.edits = [] if seen.chain is not None else \
        [dataclasses.replace(e, at=_native_index(seen, e.at)) for e in seen.conv.rules.edits]
    seen.findings = sorted(across + findings, key=lambda f: -1 if f.index is None else f.index)
    seen.notes = seen.notes[:1] + list(getattr(seen.pairing, "notes", []))


def _chain(tracker: Tracker, prev: str | None) -> tuple[Stored | None, list[str]]:
    if prev is None:
        return None, []
    chain = tracker.stored.get(prev)
    if chain is not None:
        return chain, [f"continues {prev} (previous_response_id): judged with the "
                       f"{len(chain.items)} item(s) this proxy saw in that conversation"]
    return None, [f"continues {prev} (previous_response_id), which this proxy did not see: the "
                  "items stored with it cannot be known here, so outputs answering its calls are "
                  "not judged"]


def _native_index(seen: Seen, i: int) -> int:
    """The native top-level index of chat message ``i`` of ``seen.messages``."""
    form = seen.form
    if form is None:
        return i
    offset = len(seen.messages) - len(form.messages)
    k = i - offset
    if 0 <= k < len(form.locs):
        loc = form.locs[k]
        return loc[0] if loc else 0
    return _native_len(seen) if k >= len(form.locs) else 0


def _native_len(seen: Seen) -> int:
    return len(seen.wire.items(seen.body))


def _mapped(seen: Seen, f: Any) -> Any:
    """A cross-request finding (a chat index) moved onto the native item it concerns."""
    if f.index is None:
        return f
    key = seen.wire.key
    src = seen.sources[f.index] if f.index < len(seen.sources) else None
    if src == "stored":
        return dataclasses.replace(f, index=None, path="the stored response (previous_response_id)")
    index = _native_index(seen, f.index)
    path = src if src and src.startswith(key) else f"{key}[{index}]"
    return dataclasses.replace(f, index=index, path=path)


@dataclass
class Replied:
    """A response as the analyst read it (plain or streamed)."""

    reply: ChatReply | None
    native: Any = None
    shape: list[str] = field(default_factory=list)
    error: str | None = None


#: a response agentdbg cannot read as the API's (recorded in English, read back when shown)
NOT_A_RESPONSE = N_("a body that is not a {api} response")


def read_reply(wire: Codec, status: int, data: bytes, stream: bool) -> Replied:
    if stream and status < 400:
        acc = wire.accumulator()
        acc.feed(data)
        acc.close()
        return Replied(acc.reply, acc.native, acc.shape())
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return Replied(None, error=f"HTTP {status}: " + NOT_A_RESPONSE.format(api=wire.name))
    if status >= 400:
        return Replied(None, doc, error=error_text(doc)[:500])
    reply = wire.reply(doc)
    if reply is None:
        return Replied(None, doc, error=f"HTTP {status}: " + NOT_A_RESPONSE.format(api=wire.name))
    return Replied(reply, doc)
