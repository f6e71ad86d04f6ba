"""Read what ``agentdbg check`` is given: a messages array, a request body, an agentdbg
saved run, a transcript, or JSON Lines of any of these (``-`` is stdin), in any of the three
wire formats: Chat Completions, the Responses API (a body, or a bare ``input`` array) and the
Anthropic Messages API. The format is recognised per document (``detect_format``) unless
forced. A transcript is judged by the requests it recorded (one item per request)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

from agentdbg.checker.findings import Finding
from agentdbg.checker.request import MISSING, CheckRequest
from agentdbg.errors import InputError, where
from agentdbg.i18n import N_, Msg
from agentdbg.wire import codec as codecs

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
KNOWN_ROLES = frozenset(ROLES)

try:  # orjson parses big histories several times faster; json gives the error messages
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency, but stay usable without it
    _fast_loads = json.loads  # type: ignore[assignment]

_BOM = b"\xef\xbb\xbf"   # what "utf-8-sig" drops


def parse_json(text: str) -> Any:
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
    recorded: list | None = None  # a request the proxy blocked: the findings it was blocked for
    sent_anyway: bool = False  # a transcript: sent with 'send' after the checker blocked it


MAX_INPUT = 256 * 1024 * 1024   # bytes ``check`` reads (a transcript of a long proxy session fits)


def read_text(path: str) -> tuple[str, str]:
    """(display name, text) of a file or of stdin for ``-``: at most ``MAX_INPUT`` bytes,
    whatever it is (``/dev/zero``, a FIFO, ``<(command)``; one nobody writes is given up after
    ``paths.IDLE_SECONDS``)."""
    name, data = read_bytes(path)
    return name, decoded(name, data)


def read_bytes(path: str) -> tuple[str, bytes]:
    """(display name, bytes) of a file or of stdin for ``-``, bounded as ``read_text`` says."""
    name, data = _read(path)
    if len(data) > MAX_INPUT:
        raise _too_large(name)
    return name, data


def _read(path: str) -> tuple[str, bytes]:
    """``read_bytes`` without the size check: at most ``MAX_INPUT + 1`` bytes."""
    from agentdbg.paths import read_at_most, read_bounded

    if path == "-":
        return "<stdin>", read_at_most(sys.stdin.buffer, MAX_INPUT)
    try:
        return path, read_bounded(path, MAX_INPUT)
    except FileNotFoundError:
        raise InputError(Msg(N_("{path}: no such file"), {"path": path})) from None
    except IsADirectoryError:
        raise InputError(Msg(N_("{path}: is a directory"), {"path": path})) from None
    except TimeoutError as exc:
        raise InputError(f"{path}: {exc}") from None
    except OSError as exc:
        raise InputError(Msg(N_("{path}: cannot read: {reason}"),
                             {"path": path, "reason": exc.strerror})) from None


def _too_large(name: str) -> InputError:
    return InputError(Msg(N_("{path}: more than {limit} bytes; check reads at most that much"),
                          {"path": name, "limit": MAX_INPUT}))


def decoded(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(Msg(N_("{path}: not UTF-8 text (byte {byte})"),
                             {"path": where(name, line, None), "byte": exc.start})) from None


def load_check_input(path: str, fmt: str | None = None) -> list[CheckItem]:
    """The documents to check; ``fmt`` forces the wire format (None: recognise each)."""
    sniff = path != "-" and fmt is None   # another tool's record of a run is judged as its
    if sniff and _ask_first(path):        # transcript (streamed: never read whole here)
        if _foreign(path):
            return _imported(path)
        sniff = False
    name, data = _read(path)
    end = data.find(b"\n")
    transcript = b'"agentdbg-transcript"' in (data if end < 0 else data[:end])
    doc: Any = _NOT_ONE
    if not transcript and len(data) <= MAX_INPUT:
        # one JSON document, valid: parsed from the bytes as they are (no decoded copy)
        with contextlib.suppress(ValueError):
            doc = _fast_loads(data[3:] if data.startswith(_BOM) else data)
    if sniff and _maybe_foreign(data, doc) and _foreign(path):
        return _imported(path)
    if len(data) > MAX_INPUT:
        raise _too_large(name)
    if transcript:
        return _transcript(name, decoded(name, data))
    if doc is _NOT_ONE:
        return _slow(name, decoded(name, data), fmt)
    return [_item(name, doc, None, fmt)]


_NOT_ONE: Any = object()   # the input is not one valid JSON document


def _ask_first(path: str) -> bool:
    """Ask ``_foreign`` before reading ``path`` whole: a FIFO or a device (it cannot be read
    twice), or a file whose start has the marks of another tool's record (a session file can
    be far larger than what ``check`` reads). Any other file is asked after it is read, when
    its bytes cannot tell (``_maybe_foreign``)."""
    import os
    import stat

    from agentdbg.traces import MARKS

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return True
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except (OSError, ValueError):
        return False    # reading it says what is wrong
    return any(mark in head for mark in MARKS)


def _maybe_foreign(data: bytes, doc: Any) -> bool:
    """Whether ``_foreign`` must be asked: one JSON document is told from its bytes here,
    without loading the readers of other tools' records (``traces.none_in``)."""
    if doc is _NOT_ONE:
        return True
    from agentdbg.traces import none_in

    return not none_in(data, doc)


def _foreign(path: str) -> bool:
    from agentdbg.transcript import foreign

    return foreign(path) is not None


def _slow(name: str, text: str, fmt: str | None) -> list[CheckItem]:
    """Text that is not one valid JSON document: JSON Lines, or the error that says where."""
    if not text.strip():
        raise InputError(Msg(N_("{path}: empty input; expected JSON"), {"path": name}))
    try:
        doc = json.loads(text)
    except RecursionError:
        raise InputError(Msg(N_("{where}: JSON nested too deeply"), {"where": name})) from None
    except json.JSONDecodeError as exc:
        if _looks_like_jsonl(text):
            return _jsonl(name, text, fmt)
        raise InputError(Msg(N_("{where}: invalid JSON: {problem}"),
                             {"where": where(name, exc.lineno, exc.colno), "problem": exc.msg})) from None
    return [_item(name, doc, None, fmt)]


def _transcript(name: str, text: str) -> list[CheckItem]:
    """One item per recorded request: a transcript is judged by what it sent."""
    import io

    return transcript_items(name, io.BytesIO(text.encode("utf-8")))  # lines end at b"\n" only


def transcript_items(name: str, lines: Iterable[bytes] | None = None) -> list[CheckItem]:
    """One item per request the transcript ``name`` recorded, read from ``lines`` or, without
    them, streamed from the file (as replay reads it: one line at a time, never the whole
    file in memory)."""
    from agentdbg.transcript import read_transcript

    warnings: list[str] = []
    header, events = read_transcript(name, warnings, lines)
    found = TranscriptItems(name, header)
    for _, event in events:
        found.add(event)
    return found.items(warnings)


class TranscriptItems:
    """``transcript_items`` fed one event at a time, in the transcript's order: a replay hands
    it each event it reads (``ReplayModel.on_pop``), so its verdict judges the requests without
    reading the recording a second time. A problem found on the way (a message that is not
    one) is raised by ``items``, where reading it again would have raised it.

    A Chat Completions request is kept as the transcript stores it, what its previous request
    did not hold (``prefix``, ``append``); ``items`` makes each request's whole array, as the
    reader does, once the replay no longer needs its memory (a list per request held during
    the replay was 9 MB more at 1,000 turns)."""

    def __init__(self, name: str, header: Any) -> None:
        from agentdbg.transcript.events import Action, Blocked, Request, Response, Stop

        self._kinds = Action, Blocked, Request, Response, Stop
        self.name, self.header = name, header
        self.fmt = header.api if codecs.known(header.api) else codecs.DEFAULT
        self.chat_native = codecs.get(self.fmt).chat_native
        self.tools = header.tool_list
        self._items: list[CheckItem] = []
        #: each request's messages: the whole list, or (prefix, append) of the one before it
        self._sent: list[list | tuple[int, list]] = []
        self._whose: list[int] = []      # for each item, the request whose messages it judges
        self.prior: list = []
        self.stopped: list | None = None   # the last stop event's (the final state when there is one)
        self.n_sent = 0
        self.blocked = self.anyway = False  # the last request was blocked · … and 'send' sent it anyway
        self.error: Exception | None = None

    def add(self, event: Any) -> None:
        if self.error is not None:
            return
        try:
            self._add(event)
        except Exception as exc:  # noqa: BLE001 - raised by ``items``, not lost
            self.error = exc

    def _add(self, event: Any) -> None:
        Action, Blocked, Request, Response, Stop = self._kinds

        if isinstance(event, Stop) and event.messages is not None:
            self.stopped = event.messages
        if isinstance(event, Response) and isinstance(event.output, list):
            self.prior.extend(x for x in event.output if isinstance(x, dict))
        if isinstance(event, Action) and event.action == "send":
            self.anyway = self.blocked
        if isinstance(event, Blocked):   # never sent: judged when it was blocked
            self.blocked = True
            found = event.findings or []
            self._items.append(CheckItem(CheckRequest(messages=[]), None, self.fmt, None,
                                         self.n_sent + 1, None, list(self.prior), recorded=[
                                             Finding.from_dict(d) for d in found if isinstance(d, dict)]))
            self._whose.append(self.n_sent - 1)   # the last request's messages (none: -1)
            return
        if not isinstance(event, Request):
            return
        self.n_sent += 1
        turn = self.n_sent
        knowingly, self.blocked, self.anyway = self.anyway, False, False
        messages = event.messages or []
        # the reader made ``messages`` the previous request's first ``prefix`` and ``append``:
        # each message is checked once, where it was appended
        lazy = self.chat_native and self._sent and event.append is not None \
            and len(messages) == event.prefix + len(event.append)
        checked = event.prefix if self._sent else 0
        _messages(f"{self.name}: request {turn}", messages[checked:], offset=checked)
        self._sent.append((event.prefix, event.append) if lazy else list(messages))
        params: dict = event.params or {}
        sent = params.get("tools", self.tools)
        request = CheckRequest(messages=[], tools=sent if isinstance(sent, list) and sent
                               else MISSING,
                               tool_choice=params.get("tool_choice", MISSING),
                               parallel_tool_calls=params.get("parallel_tool_calls", MISSING))
        native = None
        if not self.chat_native:
            request.messages = self._sent[-1]
            extra: dict = self.header.api_params or {}
            native = native_of(self.fmt, event.body, request, {**extra, **params})
        self._items.append(CheckItem(request, None, self.fmt, native, turn, None, list(self.prior),
                                     sent_anyway=knowingly))
        self._whose.append(turn - 1)
        inputs = native.get("input") if isinstance(native, dict) else None
        if isinstance(inputs, list):
            self.prior.extend(x for x in inputs if isinstance(x, dict))

    def items(self, warnings: list[str]) -> list[CheckItem]:
        """The items, once every event was added (the reader's ``warnings`` are printed)."""
        from agentdbg.textsafe import one_line

        if self.error is not None:
            raise self.error
        for warning in warnings:
            print(f"agentdbg: warning: {one_line(warning)}", file=sys.stderr)
        whole: list[list] = []
        for sent in self._sent:
            if isinstance(sent, tuple):
                prefix, append = sent
                messages = whole[-1][:prefix]
                messages += append   # grown where it lies: ``a[:n] + b`` left a hole of a[:n]
                whole.append(messages)   # each time, 15 MB for the 8 MB of 1,000 lists
            else:
                whole.append(sent)
        self._sent = []
        items = self._items
        for item, k in zip(items, self._whose):
            item.request.messages = whole[k] if k >= 0 else []
        last = whole[-1] if whole else []
        final = _messages(self.name, self.stopped if self.stopped is not None else last)
        for item in items:
            item.final = final
        if not items:   # nothing was sent (e.g. the first request was blocked): the final state
            items.append(CheckItem(CheckRequest(messages=final, tools=self.tools or MISSING), None,
                                   codecs.DEFAULT, None, None, final))
        return items


def _imported(path: str) -> list[CheckItem]:
    """A Claude Code session, a Codex rollout or OTLP traces: its first conversation, imported."""
    import sys

    from agentdbg.textsafe import one_line
    from agentdbg.transcript.imported import as_transcript

    with as_transcript(Path(path)) as (transcript, warnings):
        for warning in warnings:
            print(f"agentdbg: warning: {one_line(warning)}", file=sys.stderr)
        return _transcript(path, transcript.read_text(encoding="utf-8"))


def native_of(fmt: str, body: Any, request: CheckRequest, params: dict) -> Any:
    """The native body a transcript's request stands for: as the proxy recorded it, else
    rebuilt from the chat form (each message keeps its native original, so it is exact)."""
    if isinstance(body, dict):
        return body
    convert = codecs.get(fmt).encode_request
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
            raise InputError(Msg(N_("{where}: JSON nested too deeply"),
                                 {"where": where(name, n, None)})) from None
        except json.JSONDecodeError as exc:
            raise InputError(Msg(N_("{where}: invalid JSON: {problem}"),
                                 {"where": where(name, n, exc.colno), "problem": exc.msg})) from None
        items.append(_item(name, doc, n, fmt))
    return items


def _item(name: str, doc: Any, line: int | None, fmt: str | None = None) -> CheckItem:
    from agentdbg.wire.detect import detect_format

    where = f"{name}:{line}" if line else name
    fmt = fmt or detect_format(doc) or "chat"
    if not codecs.get(fmt).chat_native:
        return _native(where, doc, line, fmt)
    if isinstance(doc, list):
        return CheckItem(CheckRequest(messages=_messages(where, doc)), line)
    if isinstance(doc, dict) and doc.get("format") == "agentdbg-run":
        # a run without tool definitions (none given; a session file that records none) sent
        # no 'tools' key: its empty list says so, it was never sent as tools: []
        tools = doc.get("tools") if isinstance(doc.get("tools"), list) and doc.get("tools") else MISSING
        return CheckItem(CheckRequest(messages=_messages(where, doc.get("messages")), tools=tools),
                         line)
    if isinstance(doc, dict) and "messages" in doc:
        req = CheckRequest.from_body(doc)
        req.messages = _messages(where, doc["messages"])
        return CheckItem(req, line)
    raise InputError(Msg(N_("{where}: expected a messages array, a request body with 'messages', "
                            "or an agentdbg saved run"), {"where": where}))


def _native(where: str, doc: Any, line: int | None, fmt: str) -> CheckItem:
    """A Responses or Anthropic document: judged as given; its chat form is kept for notes."""
    codec = codecs.get(fmt)
    key = codec.key
    if isinstance(doc, dict) and doc.get("format") == "agentdbg-run":
        raise InputError(Msg(N_("{where}: an agentdbg saved run is in Chat Completions form; "
                                "check it without --format"), {"where": where}))
    if isinstance(doc, dict) and key not in doc and not (codec.stores and
                                                         "previous_response_id" in doc):
        raise InputError(Msg(N_("{where}: expected a {format} request body with {key}, or a "
                                "bare {key} array"), {"where": where, "format": fmt, "key": repr(key)}))
    if not isinstance(doc, (dict, list)):
        raise InputError(Msg(N_("{where}: expected a {format} request body or a bare {key} "
                                "array, got {type}"),
                             {"where": where, "format": fmt, "key": repr(key), "type": type(doc).__name__}))
    value = doc.get(key) if isinstance(doc, dict) else doc
    if not isinstance(value, list) and not (codec.text_input and isinstance(value, (str, type(None)))):
        raise InputError(Msg(N_("{where}: {key} must be an array, got {type}"),
                             {"where": where, "key": repr(key), "type": type(value).__name__}))
    for i, x in enumerate(value if isinstance(value, list) else []):
        if not isinstance(x, dict):
            raise InputError(Msg(N_("{where}: {item} is not an object ({type})"),
                                 {"where": where, "item": f"{key}[{i}]", "type": type(x).__name__}))
    return CheckItem(CheckRequest(messages=[]), line, fmt, doc)


def _messages(where: str, messages: Any, offset: int = 0) -> list:
    if not isinstance(messages, list):
        raise InputError(Msg(N_("{where}: {key} must be an array, got {type}"),
                             {"where": where, "key": "'messages'", "type": type(messages).__name__}))
    try:   # the common case, objects of known roles, in C (half the time of the loop below)
        if set(map(dict.get, messages, repeat("role"))) <= KNOWN_ROLES:
            return messages
    except TypeError:   # not an object, or a role that is not a hashable value
        pass
    for i, m in enumerate(messages, start=offset):
        if not isinstance(m, dict):
            raise InputError(Msg(N_("{where}: {item} is not an object ({type})"),
                                 {"where": where, "item": f"messages[{i}]", "type": type(m).__name__}))
        role = m.get("role")
        if role not in ROLES:
            shown = json.dumps(role, ensure_ascii=False)[:40]
            raise InputError(Msg(N_("{where}: messages[{i}] has role {role}; expected one of {roles}"),
                                 {"where": where, "i": i, "role": shown, "roles": ", ".join(ROLES)}))
    return messages
