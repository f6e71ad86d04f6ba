"""The common case in one pass: a Chat Completions history with nothing to report.

Most histories ``check`` reads are well formed: every assistant message's calls are
well formed, each id is used once, and the calls are answered right after them by a block
of tool messages. ``clean`` walks the messages once and says True only when the pairing,
call and content rules (``check_pairing``, ``check_tool_calls``, ``check_content``) would
find nothing; at the first thing that might be a finding (or anything it does not follow:
a legacy ``function`` message, a custom call, a profile with per-message rules of its own)
it says False and those rules run as usual. So a clean history costs one pass instead of
the pairing analysis and three walks, and what is reported is the same: the test
(tests/test_check_fast_paths.py) holds it to the rules on generated histories.

A call answered in its block is history: its tool and arguments are not checked against
today's ``tools`` (``rules.calls._answered``), so no schema is validated here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from agentdbg.checker.context import NAME_RE, Ctx
from agentdbg.checker.request import MISSING
from agentdbg.messages import repeated_keys

ROLES = ("user", "assistant", "tool", "system", "developer")
#: rules that look at one message for a profile: their profiles take the long way
PER_MESSAGE = ("results-out-of-order", "reasoning-content-missing")


def clean(ctx: Ctx) -> bool:
    """True: the pairing, call and content rules have nothing to report on ``ctx``."""
    profile = ctx.profile
    if profile.signed_calls or profile.null_content_on_tool_turns or any(map(ctx.on, PER_MESSAGE)):
        return False
    empty_on, same_on = ctx.on("empty-content"), ctx.on("consecutive-same-role")
    id_format = re.compile(profile.id_pattern or "") if ctx.on("tool-call-id-format") else None
    seen: set[str] = set()       # every call id so far (one used twice is a finding)
    open_ids: set[str] = set()   # the calls of the block not answered yet (a tool message
                                 # outside a block finds none: an orphan)
    previous: Any = None
    names: dict[str, bool] = {}  # tool name -> well formed
    arguments: dict[str, bool] = {}  # arguments text -> a JSON object, no key repeated
    for m in ctx.messages:
        if type(m) is not dict:
            return False         # the rules see it as a role-less message
        role = m.get("role")
        content = m.get("content", MISSING)
        if role == "tool":
            tid = m.get("tool_call_id")
            if type(tid) is not str or tid not in open_ids:
                return False     # an orphan, a mismatch, a duplicate or an id-less result
            open_ids.discard(tid)
        elif open_ids or role not in ROLES or (same_on and role == previous
                                               and role in ("user", "assistant")):
            return False         # a call left unanswered (or answered late), a role to look at
        else:
            calls = m.get("tool_calls") if role == "assistant" else None
            if calls is not None and not _calls_clean(calls, seen, open_ids, names, arguments,
                                                      id_format):
                return False
            if content is None or content is MISSING:
                if calls is None:
                    return False     # null content without calls (or with function_call, audio)
                previous = role
                continue
        if type(content) is str:
            if empty_on and not content:
                return False
        elif type(content) is not list:
            return False
        previous = role
    return not open_ids


def _calls_clean(calls: Any, seen: set[str], open_ids: set[str], names: dict[str, bool],
                 arguments: dict[str, bool], id_format: re.Pattern[str] | None) -> bool:
    """Every call well formed (``rules.calls._clean_call``), its id new (and of the profile's
    form, ``rules.content._id_format``); each id is opened."""
    if type(calls) is not list or not calls:
        return False
    for call in calls:
        if type(call) is not dict or call.get("type") != "function":
            return False
        cid, fn = call.get("id"), call.get("function")
        if type(cid) is not str or not cid or cid in seen or type(fn) is not dict:
            return False
        if id_format is not None and not id_format.match(cid):
            return False
        name, args = fn.get("name"), fn.get("arguments")
        if type(name) is not str or type(args) is not str:
            return False
        ok = names.get(name)
        if ok is None:
            ok = names[name] = NAME_RE.match(name) is not None
        good = arguments.get(args)
        if good is None:
            good = arguments[args] = _object_once(args)
        if not (ok and good):
            return False
        seen.add(cid)
        open_ids.add(cid)
    return True


def _object_once(text: str) -> bool:
    """``text`` is a JSON object (as ``json.loads`` reads it) and writes no key twice."""
    try:   # what orjson reads, json reads as the same value; what it refuses, json may read
        parsed = orjson.loads(text)
    except ValueError:
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return False
    return type(parsed) is dict and not repeated_keys(text, parsed)
