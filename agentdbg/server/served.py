"""What ``serve`` keeps between requests: the recordings it replays, the responses it stored.

``ServedReplay`` plays a recording to any number of apps: each conversation (a new client,
or a fresh start) replays from the beginning, and every request is compared with the
recording *before* anything advances, so a mismatch is answered with the first difference
and the conversation stays where it was (the app may fix its request and send it again).

``ResponseStore`` holds the Responses API's stored responses, so a request continuing one
with ``previous_response_id`` is answered (and judged) with everything before it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from agentdbg.providers.base import ModelReply, ModelRequest
from agentdbg.providers.replay import ReplayDiverged, ReplayModel
from agentdbg.transcript.compare import common_prefix, describe_difference, first_difference
from agentdbg.transcript.events import Action, Blocked, Request, Stop, Tool
from agentdbg.wire.common import ChatForm, strip_wire

SKIPPED = (Action, Stop, Blocked, Tool)   # what a recording holds besides requests
MAX_CONVERSATIONS = 64


@dataclass
class _Candidate:
    model: ReplayModel
    expected: list | None             # the next recorded request's messages (None: none left)
    diff: tuple | None = None


class ServedReplay:
    """A recording served to outside apps, one replay per conversation."""

    name = "replay"

    def __init__(self, path: Any):
        self.path = path
        self.active: list[ReplayModel] = []
        ReplayModel(path)   # the file is read (and rejected) now, not at the first request

    def complete(self, request: ModelRequest) -> ModelReply:
        candidates = [self._candidate(m, request) for m in self.active]
        fresh = self._candidate(ReplayModel(self.path), request)
        chosen = next((c for c in candidates + [fresh] if c.expected is not None and c.diff is None),
                      None)
        if chosen is None:
            raise ReplayDiverged(self.path, self._why(candidates, fresh, request))
        if chosen is fresh:
            self.active = (self.active + [fresh.model])[-MAX_CONVERSATIONS:]
        return chosen.model.complete(request)

    @staticmethod
    def _candidate(model: ReplayModel, request: ModelRequest) -> _Candidate:
        while True:
            event = model.peek()
            if event is None or not isinstance(event, SKIPPED):
                break
            model.pop()
        if not isinstance(event, Request):
            return _Candidate(model, None)
        expected = strip_wire(list(event.messages or []))
        return _Candidate(model, expected, first_difference(expected, strip_wire(request.messages)))

    def _why(self, candidates: list[_Candidate], fresh: _Candidate, request: ModelRequest) -> str:
        """The first difference against the conversation this request most likely continues."""
        live = strip_wire(request.messages)
        pool = [c for c in candidates if c.expected is not None] or [fresh]
        best = max(pool, key=lambda c: common_prefix(c.expected or [], live))
        if best.expected is None or best.diff is None:
            return f"{self.path} has no further model request here"
        return describe_difference(best.diff)


@dataclass
class Stored:
    """One stored response: the conversation up to and including it."""

    messages: list                    # chat form (without instructions), the reply included
    items: list = field(default_factory=list)   # every native item of the chain, outputs included
    owner: Any = None                 # the proxy: the conversation it belongs to


def chain_messages(form: ChatForm, stored: Stored | None) -> tuple[list, list[str]]:
    """The whole conversation a Responses request stands for, with each message's source: this
    request's instructions (earlier ones are not carried over), the stored history, the new input."""
    if stored is None:
        return list(form.messages), list(form.sources)
    head = [i for i, src in enumerate(form.sources) if src == "instructions"]
    rest = [i for i, src in enumerate(form.sources) if src != "instructions"]
    messages = [form.messages[i] for i in head] + list(stored.messages) + [form.messages[i] for i in rest]
    sources = (["instructions"] * len(head) + ["stored"] * len(stored.messages)
               + [form.sources[i] for i in rest])
    return messages, sources


def chain_items(body: dict, stored: Stored | None, output: list) -> list:
    """Every native item of a Responses conversation after this request and its response."""
    items = body.get("input")
    new = [{"role": "user", "content": items}] if isinstance(items, str) else \
        [x for x in items if isinstance(x, dict)] if isinstance(items, list) else []
    return list(stored.items if stored else []) + new + list(output)


def history_of(messages: list, sources: list[str], reply: dict) -> list:
    """What a stored response keeps: the conversation without its instructions, then the reply."""
    return [m for m, src in zip(messages, sources) if src != "instructions"] + [reply]


class ResponseStore:
    """Responses kept for ``previous_response_id`` (the newest ``limit``, like a cache)."""

    def __init__(self, limit: int = 1000):
        self.limit = limit
        self._kept: OrderedDict[str, Stored] = OrderedDict()

    def get(self, response_id: str) -> Stored | None:
        return self._kept.get(response_id)

    def put(self, response_id: str, stored: Stored) -> None:
        self._kept[response_id] = stored
        self._kept.move_to_end(response_id)
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)

    def forget(self, owner: Any) -> None:
        """Drop the responses of ``owner`` (a conversation the proxy no longer follows)."""
        for key in [k for k, v in self._kept.items() if v.owner is owner]:
            del self._kept[key]
