"""What every rule sees: the request, the profile, and shared helpers."""

from __future__ import annotations

import json
import re
from typing import Any

from agentdbg.cache import LruCache
from agentdbg.checker.pairing import Pairing, analyze
from agentdbg.checker.profiles import Profile, active
from agentdbg.checker.request import CheckRequest
from agentdbg.messages import canonical_json

_MISS = object()
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_TOOLS = 128


class Ctx:
    def __init__(self, request: CheckRequest, profile: Profile, in_progress: bool = False):
        self.req = request
        self.messages: list = request.messages
        self.profile = profile
        self.in_progress = in_progress  # a trailing unanswered tool-call turn is pending, not wrong
        self._on: dict[str, bool] = {}
        self.schema_keys: dict[str, str] = {}  # tool name -> canonical schema text (cache key)
        self._pairing: Pairing | None = None
        self.clean = False   # ``checker.clean`` found nothing for the message rules to report

    @property
    def pairing(self) -> Pairing:
        """The pairing analysis of the messages, made when a rule first asks for it (a clean
        history, ``checker.clean``, never does)."""
        if self._pairing is None:
            self._pairing = analyze(self.messages, in_progress=self.in_progress)
        return self._pairing

    def on(self, rule: str) -> bool:
        hit = self._on.get(rule)
        if hit is None:
            hit = self._on[rule] = active(rule, self.profile)
        return hit

    def schema_key(self, name: str, schema: Any) -> str:
        key = self.schema_keys.get(name)
        if key is None:
            key = self.schema_keys[name] = canonical_json(schema)
        return key


class _Unparsable:
    """A cached parse failure: its message only, so each raise is a fresh exception."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


_PARSED: LruCache[str, Any] = LruCache(20_000)   # arguments text -> parsed value or failure


def parse_arguments(text: str) -> Any:
    """``json.loads`` with a bounded cache: long histories repeat the same arguments often.

    A failure is cached as its message and raised as a new ``ValueError`` each time (a
    cached exception object would grow its traceback on every raise)."""
    hit = _PARSED.get(text, _MISS)
    if hit is _MISS:
        try:
            hit = json.loads(text)
        except (ValueError, RecursionError) as exc:
            hit = _Unparsable(str(exc) if isinstance(exc, ValueError) else "nested too deeply")
        _PARSED.put(text, hit)
    if isinstance(hit, _Unparsable):
        raise ValueError(hit.message)
    return hit


def _calls(m: dict) -> list:
    """The non-empty tool_calls list of an assistant message, else []."""
    if m.get("role") != "assistant":
        return []
    calls = m.get("tool_calls")
    return calls if type(calls) is list else []


def _cid(call: Any) -> str | None:
    cid = call.get("id") if isinstance(call, dict) else None
    return cid if isinstance(cid, str) and cid else None


def _name_error(param: str, name: str) -> str:
    if len(name) > 64:
        return (f"Invalid '{param}': string too long. Expected a string with maximum length 64, "
                f"but got a string with length {len(name)} instead.")
    return (f"Invalid '{param}': string does not match pattern. Expected a string that matches "
            "the pattern '^[a-zA-Z0-9_-]+$'.")
