"""Read what ``agentdbg check`` is given: a messages array, a request body, an
agentdbg saved run, or JSON Lines of any of these (``-`` is stdin)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.checker.request import MISSING, CheckRequest
from agentdbg.errors import InputError, located

ROLES = ("system", "developer", "user", "assistant", "tool", "function")

try:  # orjson parses big histories several times faster; json gives the error messages
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency, but stay usable without it
    _fast_loads = json.loads  # type: ignore[assignment]


def parse_json(text: str):
    """``json.loads`` semantics and errors, orjson speed when the text is valid."""
    try:
        return _fast_loads(text)
    except ValueError:
        return json.loads(text)  # raises the standard, positioned error (or RecursionError)


@dataclass
class CheckItem:
    request: CheckRequest
    line: int | None = None    # JSONL: 1-based line number


def read_text(path: str) -> tuple[str, str]:
    """(display name, text) of a file or of stdin for ``-``."""
    if path == "-":
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        name = path
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise InputError(f"{path}: is a directory") from None
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return name, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(located(name, line, None, f"not UTF-8 text (byte {exc.start})")) from None


def load_check_input(path: str) -> list[CheckItem]:
    name, text = read_text(path)
    if not text.strip():
        raise InputError(f"{name}: empty input; expected JSON")
    if '"agentdbg-transcript"' in text.split("\n", 1)[0]:
        return [_transcript(name, text)]
    try:
        doc = parse_json(text)
    except RecursionError:
        raise InputError(f"{name}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        if _looks_like_jsonl(text):
            return _jsonl(name, text)
        raise InputError(located(name, exc.lineno, exc.colno, f"invalid JSON: {exc.msg}")) from None
    return [_item(name, doc, None)]


def _transcript(name: str, text: str) -> CheckItem:
    import io
    import sys

    from agentdbg.textsafe import one_line
    from agentdbg.transcript import load_transcript

    lines = io.BytesIO(text.encode("utf-8"))  # lines end at b"\n" only: U+2028 is not one
    recording = load_transcript(name, lines, validate=True)
    for warning in recording.warnings:
        print(f"agentdbg: warning: {one_line(warning)}", file=sys.stderr)
    tools = recording.header.get("tools")
    request = CheckRequest(messages=_messages(name, recording.final_messages()),
                           tools=tools if isinstance(tools, list) and tools else MISSING)
    return CheckItem(request, None)


def _looks_like_jsonl(text: str) -> bool:
    """More than one line, and the first non-empty line is a JSON document by itself."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2:
        return False
    try:
        json.loads(lines[0])
    except (ValueError, RecursionError):
        return False
    return True


def _jsonl(name: str, text: str) -> list[CheckItem]:
    items = []
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            doc = parse_json(raw)
        except RecursionError:
            raise InputError(located(name, n, None, "JSON nested too deeply")) from None
        except json.JSONDecodeError as exc:
            raise InputError(located(name, n, exc.colno, f"invalid JSON: {exc.msg}")) from None
        items.append(_item(name, doc, n))
    return items


def _item(name: str, doc: Any, line: int | None) -> CheckItem:
    where = f"{name}:{line}" if line else name
    if isinstance(doc, list):
        return CheckItem(CheckRequest(messages=_messages(where, doc)), line)
    if isinstance(doc, dict) and doc.get("format") == "agentdbg-run":
        tools = doc.get("tools") if isinstance(doc.get("tools"), list) else MISSING
        return CheckItem(CheckRequest(messages=_messages(where, doc.get("messages")), tools=tools),
                         line)
    if isinstance(doc, dict) and "messages" in doc:
        req = CheckRequest.from_body(doc)
        req.messages = _messages(where, doc["messages"])
        return CheckItem(req, line)
    raise InputError(f"{where}: expected a messages array, a request body with 'messages', "
                     "or an agentdbg saved run")


def _messages(where: str, messages: Any) -> list:
    if not isinstance(messages, list):
        raise InputError(f"{where}: 'messages' must be an array, got {type(messages).__name__}")
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise InputError(f"{where}: messages[{i}] is not an object ({type(m).__name__})")
        role = m.get("role")
        if role not in ROLES:
            shown = json.dumps(role, ensure_ascii=False)[:40]
            raise InputError(f"{where}: messages[{i}] has role {shown}; expected one of "
                             + ", ".join(ROLES))
    return messages
