"""Read what ``agentdbg check`` is given: a messages array, a request body, an agentdbg
saved run, a transcript, or JSON Lines of any of these (``-`` is stdin), in any of the three
wire formats: Chat Completions, the Responses API (a body, or a bare ``input`` array) and the
Anthropic Messages API. The format is recognised per document (``detect_format``) unless
forced. A transcript is judged by the requests it recorded (one item per request)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
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
    request: CheckRequest      # the chat form (what the chat checker judges and the view draws)
    line: int | None = None    # JSONL: 1-based line number
    format: str = "chat"       # chat | responses | anthropic
    native: Any = None         # responses / anthropic: the document as given (judged as it is)
    turn: int | None = None    # a transcript: which recorded request this is
    final: list | None = None  # a transcript: its final messages (the last request + the reply)
    prior: list | None = None  # a Responses transcript: every native item sent or answered before


MAX_INPUT = 256 * 1024 * 1024   # bytes ``check`` reads (a transcript of a long proxy session fits)


def read_text(path: str) -> tuple[str, str]:
    """(display name, text) of a file or of stdin for ``-``: at most ``MAX_INPUT`` bytes,
    whatever it is (``/dev/zero``, a FIFO, ``<(command)``; one nobody writes is given up after
    ``paths.IDLE_SECONDS``)."""
    from agentdbg.paths import read_at_most, read_bounded

    if path == "-":
        data, name = read_at_most(sys.stdin.buffer, MAX_INPUT), "<stdin>"
    else:
        name = path
        try:
            data = read_bounded(path, MAX_INPUT)
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise InputError(f"{path}: is a directory") from None
        except TimeoutError as exc:
            raise InputError(f"{path}: {exc}") from None
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_INPUT:
        raise InputError(f"{name}: more than {MAX_INPUT} bytes; check reads at most that much")
    try:
        return name, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(located(name, line, None, f"not UTF-8 text (byte {exc.start})")) from None


def load_check_input(path: str, fmt: str | None = None) -> list[CheckItem]:
    """The documents to check; ``fmt`` forces the wire format (None: recognise each)."""
    name, text = read_text(path)
    if not text.strip():
        raise InputError(f"{name}: empty input; expected JSON")
    if '"agentdbg-transcript"' in text.split("\n", 1)[0]:
        return _transcript(name, text)
    try:
        doc = parse_json(text)
    except RecursionError:
        raise InputError(f"{name}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        if _looks_like_jsonl(text):
            return _jsonl(name, text, fmt)
        raise InputError(located(name, exc.lineno, exc.colno, f"invalid JSON: {exc.msg}")) from None
    return [_item(name, doc, None, fmt)]


def _transcript(name: str, text: str) -> list[CheckItem]:
    """One item per recorded request: a transcript is judged by what it sent."""
    import io
    import sys

    from agentdbg.textsafe import one_line
    from agentdbg.transcript import load_transcript

    lines = io.BytesIO(text.encode("utf-8"))  # lines end at b"\n" only: U+2028 is not one
    recording = load_transcript(name, lines, validate=True)
    for warning in recording.warnings:
        print(f"agentdbg: warning: {one_line(warning)}", file=sys.stderr)
    header = recording.header
    fmt = str(header["api"]) if header.get("api") in ("responses", "anthropic") else "chat"
    tools = header.get("tools") if isinstance(header.get("tools"), list) else []
    final = _messages(name, recording.final_messages())
    items: list[CheckItem] = []
    current: list = []
    prior: list = []
    for event in recording.events:
        if event.get("type") == "response" and isinstance(event.get("output"), list):
            prior.extend(x for x in event["output"] if isinstance(x, dict))
        if event.get("type") != "request":
            continue
        turn = len(items) + 1
        current = _recorded(name, event, current, turn)
        params: dict = event["params"] if isinstance(event.get("params"), dict) else {}
        sent = params.get("tools", tools)
        request = CheckRequest(messages=current, tools=sent if isinstance(sent, list) and sent
                               else MISSING,
                               tool_choice=params.get("tool_choice", MISSING),
                               parallel_tool_calls=params.get("parallel_tool_calls", MISSING))
        extra: dict = header["api_params"] if isinstance(header.get("api_params"), dict) else {}
        native = native_of(fmt, event, request, {**extra, **params}) if fmt != "chat" else None
        items.append(CheckItem(request, None, fmt, native, turn, final, list(prior)))
        inputs = native.get("input") if isinstance(native, dict) else None
        if isinstance(inputs, list):
            prior.extend(x for x in inputs if isinstance(x, dict))
    if not items:   # nothing was sent (e.g. the first request was blocked): the final state
        items.append(CheckItem(CheckRequest(messages=final, tools=tools or MISSING), None, "chat",
                               None, None, final))
    return items


def _recorded(name: str, event: dict, current: list, turn: int) -> list:
    prefix, append = event.get("prefix"), event.get("append")
    if not isinstance(prefix, int) or isinstance(prefix, bool) or prefix < 0 \
            or not isinstance(append, list):
        raise InputError(f"{name}: request {turn} (seq {event.get('seq')}) has no valid "
                         "'prefix' and 'append'")
    return _messages(f"{name}: request {turn}", current[:prefix] + append)


def native_of(fmt: str, event: dict, request: CheckRequest, params: dict) -> Any:
    """The native body a transcript's request stands for: as the proxy recorded it, else
    rebuilt from the chat form (each message keeps its native original, so it is exact)."""
    if isinstance(event.get("body"), dict):
        return event["body"]
    from agentdbg.wire import anthropic, responses

    convert = responses.from_chat if fmt == "responses" else anthropic.from_chat
    tools = request.tools if isinstance(request.tools, list) else None
    choice = request.tool_choice if request.tool_choice is not MISSING else None
    parallel = request.parallel_tool_calls if isinstance(request.parallel_tool_calls, bool) else None
    rest = {k: v for k, v in params.items()
            if k not in ("tools", "tool_choice", "parallel_tool_calls", "messages")}
    return convert(request.messages, tools, choice, parallel, params=rest)


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


def _jsonl(name: str, text: str, fmt: str | None = None) -> list[CheckItem]:
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
        items.append(_item(name, doc, n, fmt))
    return items


def _item(name: str, doc: Any, line: int | None, fmt: str | None = None) -> CheckItem:
    from agentdbg.wire.detect import detect_format

    where = f"{name}:{line}" if line else name
    fmt = fmt or detect_format(doc) or "chat"
    if fmt != "chat":
        return _native(where, doc, line, fmt)
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


def _native(where: str, doc: Any, line: int | None, fmt: str) -> CheckItem:
    """A Responses or Anthropic document: judged as given; its chat form is kept for notes."""
    key = "input" if fmt == "responses" else "messages"
    if isinstance(doc, dict) and doc.get("format") == "agentdbg-run":
        raise InputError(f"{where}: an agentdbg saved run is in Chat Completions form; "
                         "check it without --format")
    if isinstance(doc, dict) and key not in doc and not (fmt == "responses" and
                                                         "previous_response_id" in doc):
        raise InputError(f"{where}: expected a {fmt} request body with {key!r}, or a bare "
                         f"{key!r} array")
    if not isinstance(doc, (dict, list)):
        raise InputError(f"{where}: expected a {fmt} request body or a bare {key!r} array, "
                         f"got {type(doc).__name__}")
    value = doc.get(key) if isinstance(doc, dict) else doc
    if not isinstance(value, list) and not (fmt == "responses" and isinstance(value, (str, type(None)))):
        raise InputError(f"{where}: {key!r} must be an array, got {type(value).__name__}")
    for i, x in enumerate(value if isinstance(value, list) else []):
        if not isinstance(x, dict):
            raise InputError(f"{where}: {key}[{i}] is not an object ({type(x).__name__})")
    return CheckItem(CheckRequest(messages=[]), line, fmt, doc)


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
