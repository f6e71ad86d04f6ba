"""A run saved as one JSON document (step mode's ``save``, ``run --json``) read back as the
transcript lines it stands for, so ``diff``, ``report`` and the other readers take it.

The document is untrusted input: each field is checked before use, and a wrong one is a
one-line error naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdbg.i18n import Msg
from agentdbg.messages import utf8_json
from agentdbg.transcript.document import FORMAT

MAX_DOCUMENT = 256 * 1024 * 1024     # bytes of one run document read back


def is_document(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a run document (step mode's ``save`` from
    memory, ``run --json``'s output)."""
    return head.lstrip().startswith(b"{") and f'"format": "{FORMAT}"'.encode() in head[:4096]


def transcript_lines(path: Path, data: bytes) -> list[bytes]:
    """The run document ``data`` as the lines of a transcript, so every command that reads a
    transcript reads it (``diff`` one against the original recording): a request and a reply per
    turn, the tool results, the stop, each from the document's final messages. The actions the
    user took in step mode are not events of it (their results are in the messages): said as a
    note. ``InputError`` naming the file and the field when it is not a run document."""
    import json

    from agentdbg.errors import InputError, where

    if len(data) > MAX_DOCUMENT:
        raise InputError(Msg("{path}: more than {limit} MB; not a run document",
                             {"path": path, "limit": MAX_DOCUMENT >> 20}))
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(Msg("{path}: not UTF-8 text (byte {byte})", {"path": path, "byte": exc.start + 1})) \
            from None
    except (ValueError, RecursionError) as exc:
        raise InputError(Msg("{where}: invalid JSON: {problem}",
                             {"where": where(path, getattr(exc, "lineno", None), getattr(exc, "colno", None)),
                              "problem": getattr(exc, "msg", exc)})) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(Msg("{path}: not an agentdbg run document", {"path": path}))
    messages = _field(path, doc, "messages", list)
    if not all(isinstance(m, dict) for m in messages):
        raise InputError(Msg("{path}: field 'messages' must hold JSON objects", {"path": path}))
    events: list[dict] = [_header(path, doc, messages)]
    turns = [_turn(path, t, messages) for t in _field(path, doc, "turns", list)]
    tools = _tools(path, doc, messages, sorted((at, turn) for turn, at, _ in turns))
    for turn, _, pair in turns:
        events.extend(pair)
        events.extend(tools.get(turn, []))
    events.append({"type": "stop", "reason": doc.get("stop_reason") or "unknown",
                   "detail": doc.get("stop_detail"), "prefix": 0, "append": messages,
                   "usage": doc.get("usage") if isinstance(doc.get("usage"), dict) else None})
    return [utf8_json({k: v for k, v in e.items() if v is not None}).encode("utf-8") + b"\n"
            for e in events]


def _field(path: Path, doc: dict, name: str, kind: type) -> Any:
    from agentdbg.errors import InputError

    value = doc.get(name, kind())
    if not isinstance(value, kind):
        raise InputError(Msg("{path}: field {field} must be an array", {"path": path, "field": repr(name)})
                         if kind is list else
                         Msg("{path}: field {field} must be an object", {"path": path, "field": repr(name)}))
    return value


def _header(path: Path, doc: dict, messages: list) -> dict:
    from agentdbg.transcript.events import FORMAT as TRANSCRIPT

    turns = [t for t in doc.get("turns") or [] if isinstance(t, dict)]
    first = turns[0].get("request_messages") if turns else len(messages)
    first = first if isinstance(first, int) and 0 <= first <= len(messages) else len(messages)
    actions = doc.get("actions") if isinstance(doc.get("actions"), list) else []
    options: dict = doc["options"] if isinstance(doc.get("options"), dict) else {}
    known = ("model", "max_turns", "max_tool_calls", "repeat_limit", "timeout", "approve",
             "tool_choice", "parallel_tool_calls", "temperature", "send_anyway", "stop_on_invalid")
    return {"type": "header", "format": TRANSCRIPT, "version": 2,
            "agentdbg_version": doc.get("agentdbg_version"), "created": doc.get("created"),
            "model": doc.get("model"), "base_url": doc.get("base_url"),
            "tools": _field(path, doc, "tools", list), "tools_file": doc.get("tools_file"),
            "options": {k: v for k, v in options.items() if k in known},
            "initial_messages": messages[:first],
            "notes": [f"a run saved as one JSON document ({path.name}): its "
                      f"{len(actions)} step-mode action(s) are in its messages, not events"]
            if actions else None}


def _turn(path: Path, t: Any, messages: list) -> tuple[int, int, list[dict]]:
    """A turn's number, its reply's index, and its request (the messages it carried) and reply."""
    from agentdbg.errors import InputError

    if not isinstance(t, dict):
        raise InputError(Msg("{path}: each entry of field 'turns' must be a JSON object", {"path": path}))
    n, at, turn = t.get("request_messages"), t.get("message_index"), t.get("turn")
    if not (isinstance(n, int) and isinstance(at, int) and isinstance(turn, int)) or \
            isinstance(turn, bool) or not 0 <= n <= len(messages) or not 0 <= at < len(messages):
        raise InputError(Msg("{path}: turn {turn}: 'turn', 'request_messages' and 'message_index' must "
                             "be integers within the {n} messages",
                             {"path": path, "turn": str(turn)[:20], "n": len(messages)}))
    usage = t.get("usage") if isinstance(t.get("usage"), dict) else None
    latency = t.get("latency_ms") if isinstance(t.get("latency_ms"), (int, float)) else None
    said = {k: t[k] for k in ("finish_reason", "note") if isinstance(t.get(k), str)}
    return turn, at, [{"type": "request", "turn": turn, "prefix": 0, "append": messages[:n]},
                      {"type": "response", "turn": turn, "message": messages[at], "usage": usage,
                       "latency_ms": latency} | said]


def _tools(path: Path, doc: dict, messages: list, replies: list[tuple[int, int]]) -> dict[int, list[dict]]:
    """Each tool outcome the document has, by the turn whose reply asked for it (the last reply
    before its result)."""
    import bisect

    index = {m.get("tool_call_id"): i for i, m in enumerate(messages)
             if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)}
    keep = ("name", "arguments", "ok", "error_type", "retryable", "content", "detail",
            "duration_ms", "stubbed", "injected", "note")
    out: dict[int, list[dict]] = {}
    for o in _field(path, doc, "tool_calls", list):
        cid = o.get("tool_call_id") if isinstance(o, dict) else None
        at = index.get(cid) if isinstance(cid, str) else None
        before = bisect.bisect_left(replies, (at, -1)) if at is not None else 0
        if at is None or before == 0:
            continue
        turn = replies[before - 1][1]
        out.setdefault(turn, []).append({"type": "tool", "turn": turn, "index": at,
                                         "tool_call_id": cid} | {k: o[k] for k in keep if k in o})
    return out
