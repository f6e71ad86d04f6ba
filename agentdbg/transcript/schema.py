"""The field types of each transcript event, checked as each line is read.

A transcript may come from anyone: an odd field (``"max_turns": "x"``, a response whose
``message`` is a string, a request without ``prefix``) is a one-line error naming the line
and the field, never a crash somewhere later. Only what readers rely on is checked;
unknown fields and unknown event types are left alone (newer writers may add them).
"""

from __future__ import annotations

from typing import Any

# a spec: {field: (kinds, required)}; kinds from _KINDS, "?" suffix: null allowed too
Spec = dict[str, tuple[str, bool]]

OPTIONS: Spec = {
    "model": ("str?", False), "max_turns": ("int", False), "max_tool_calls": ("int", False),
    "repeat_limit": ("int", False), "timeout": ("num?", False), "approve": ("str?", False),
    "parallel_tool_calls": ("bool?", False), "temperature": ("num?", False),
    "send_anyway": ("bool", False), "stop_on_invalid": ("bool", False),
}
USAGE: Spec = {"prompt_tokens": ("num?", False), "completion_tokens": ("num?", False),
               "total_tokens": ("num?", False)}
HEADER: Spec = {
    "model": ("str?", False), "provider": ("str?", False), "base_url": ("str?", False),
    "question": ("str?", False), "tools": ("list?", False), "tools_file": ("str?", False),
    "options": ("obj?", False), "initial_messages": ("messages?", False), "parent": ("obj?", False),
}
EVENTS: dict[str, Spec] = {
    "request": {"turn": ("int?", False), "params": ("obj?", False), "prefix": ("count", True),
                "append": ("messages", True)},
    "response": {"turn": ("int?", False), "message": ("message", True), "usage": ("obj?", False),
                 "finish_reason": ("str?", False), "latency_ms": ("num?", False),
                 "note": ("str?", False)},
    "model_error": {"turn": ("int?", False), "message": ("str?", False), "status": ("int?", False),
                    "latency_ms": ("num?", False)},
    "tool": {"turn": ("int?", False), "index": ("int?", False), "name": ("str?", False),
             "content": ("str?", False), "ok": ("bool?", False), "error_type": ("str?", False),
             "detail": ("str?", False), "injected": ("bool?", False), "note": ("str?", False),
             "duration_ms": ("num?", False)},
    "action": {"action": ("str", True), "kind": ("str?", False), "custom": ("str?", False),
               "sticky": ("bool?", False), "pending": ("bool?", False)},
    "blocked": {"turn": ("int?", False), "findings": ("objects?", False)},
    "stop": {"reason": ("str", True), "detail": ("str?", False), "messages": ("messages", False),
             "usage": ("obj?", False)},
}
# what each recorded user action needs to be re-applied
ACTIONS: dict[str, Spec] = {
    "edit": {"index": ("count", True), "after": ("message", True)},
    "drop": {"index": ("count", True)},
    "rewind": {"index": ("count", True)},
    "fail": {"tool": ("str", True)},
}
NESTED: dict[tuple[str, str], Spec] = {("header", "options"): OPTIONS, ("response", "usage"): USAGE,
                                       ("stop", "usage"): USAGE}

_KINDS = {
    "str": "a string", "int": "an integer", "count": "an integer >= 0", "num": "a number",
    "bool": "true or false", "obj": "an object", "list": "an array",
    "messages": "an array of message objects (tool_calls: objects)",
    "objects": "an array of objects", "message": "a message object (tool_calls: objects)",
}


def event_problem(event: dict, header: bool) -> str | None:
    """What is wrong with ``event``'s fields (None: nothing readers would trip on)."""
    kind = "header" if header else event["type"]
    spec = HEADER if header else EVENTS.get(kind)
    if spec is None:
        return None
    problem = _fields(event, spec, kind, "")
    if problem is None and kind == "action":
        inject = event["action"] == "inject"
        action_spec = ({"tool_call_id": ("str", True)} if inject and event.get("pending") else
                       {"index": ("count", True), "content": ("str?", False)} if inject else
                       ACTIONS.get(event["action"], {}))
        problem = _fields(event, action_spec, f"{event['action']} action", "")
    return problem


def _fields(event: dict, spec: Spec, kind: str, prefix: str) -> str | None:
    for name, (kinds, required) in spec.items():
        if name not in event:
            if required:
                return f"{kind} event without its field '{prefix}{name}'"
            continue
        value = event[name]
        if not _is(value, kinds):
            return (f"{kind} event: field '{prefix}{name}' must be {_describe(kinds)}, "
                    f"got {_show(value)}")
        nested = NESTED.get((kind, name))
        if nested is not None and isinstance(value, dict):
            problem = _fields(value, nested, kind, f"{prefix}{name}.")
            if problem is not None:
                return problem
    return None


def _is(value: Any, kinds: str) -> bool:
    base = kinds.rstrip("?")
    if value is None:
        return kinds.endswith("?")
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        "str": isinstance(value, str),
        "int": number and isinstance(value, int),
        "count": number and isinstance(value, int) and value >= 0,
        "num": number,
        "bool": isinstance(value, bool),
        "obj": isinstance(value, dict),
        "message": _message(value),
        "list": isinstance(value, list),
        "messages": isinstance(value, list) and all(_message(m) for m in value),
        "objects": isinstance(value, list) and all(isinstance(m, dict) for m in value),
    }[base]


def _message(value: Any) -> bool:
    """An object whose ``tool_calls``, when a list, holds objects (the engine runs them)."""
    calls = value.get("tool_calls") if isinstance(value, dict) else None
    return isinstance(value, dict) and (not isinstance(calls, list)
                                        or all(isinstance(c, dict) for c in calls))


def _describe(kinds: str) -> str:
    text = _KINDS[kinds.rstrip("?")]
    return text + " or null" if kinds.endswith("?") else text


def _show(value: Any) -> str:
    import json

    if isinstance(value, dict):
        return "an object" if _message(value) else "an object whose tool_calls are not all objects"
    if isinstance(value, list):
        bad = next((i for i, m in enumerate(value) if not _message(m)), None)
        return "an array" if bad is None else f"{_show(value[bad])} at index {bad}"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:40] + "…"
