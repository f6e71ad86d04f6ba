"""Writing a transcript: one flushed JSON line per typed event, a file no other run can share.

The one writer every producer uses: a session's observer (``run``, step mode, ``replay``, a
fork: ``start_transcript``) and the proxy (one writer per conversation, ``write`` with typed
events). A file is created exclusively (``transcript.files``); a ``--save`` path given twice at
once is refused with a clear error, not shared. The proxy writes many conversations at once,
so its writers open the file for each event instead of holding a descriptor per conversation;
one ``Claim`` (``transcript.runs``) holds them all.

Each message is stored once: a request holds what its previous request (the header's
``initial_messages`` for the first) did not, and so does the stop event.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, cast

import msgspec

from agentdbg import __version__
from agentdbg.messages import utf8_json_bytes
from agentdbg.toolspec import ToolSet
from agentdbg.transcript.events import (
    FORMAT,
    JSON,
    QUESTION_PREVIEW,
    VERSION,
    Action,
    Blocked,
    Event,
    Header,
    JSONObject,
    Message,
    ModelError,
    Options,
    Other,
    Parent,
    Request,
    Response,
    Stop,
    Tool,
    to_json_value,
)
from agentdbg.transcript.files import append_to, create_exclusive
from agentdbg.transcript.redact import Redactor


class Observed(Protocol):
    """What ``start_transcript`` needs of a session (``engine.Session``, a layer above)."""
    toolset: ToolSet
    messages: list[Message]

    @property   # read only: a session's own RunConfig and Provider match ``object``
    def config(self) -> object: ...

    @property
    def provider(self) -> object: ...
    observers: list[Callable[[str, dict], None]]

__all__ = ["FORMAT", "VERSION", "TranscriptWriter", "create_exclusive",
           "question_preview", "start_transcript", "tools_hash"]


def tools_hash(tools: list[JSON]) -> str:
    text = json.dumps(tools, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def question_preview(question: object) -> str | None:
    """The header's question: a preview (the messages hold it whole, once)."""
    if not isinstance(question, str):
        return None
    return question if len(question) <= QUESTION_PREVIEW else question[:QUESTION_PREVIEW] + "…"


class TranscriptWriter:
    """Appends one flushed JSON line per event (``write``); also a session observer.

    ``fh``: an open file to write to (see ``create_exclusive``/``open_locked``); without
    one the path is created exclusively. ``keep_open=False`` closes the file between
    events (the proxy: one transcript per conversation, any number of them)."""

    def __init__(self, path: str | os.PathLike[str], header: Header, redactor: Redactor | None = None,
                 *, fh: IO[str] | None = None, keep_open: bool = True):
        self.path = Path(path)
        self.redact = redactor or Redactor()
        self.keep_open = keep_open
        if fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = create_exclusive(self.path)
        self.fh: IO[str] | None = fh
        self.seq = 0
        self.error: OSError | None = None
        header.format, header.version, header.agentdbg_version = FORMAT, VERSION, __version__
        header.created = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        header.question = question_preview(header.question)
        self.header = header
        self._last: list[Message] = list(header.initial_messages or [])
        self._last_body: JSONObject | None = None
        self._tools = header.tools
        self._line(to_json_value(header))
        if not keep_open:
            self._close_fh()

    def write(self, event: Event | Other) -> None:
        """Append ``event``. A request's or a stop event's ``messages`` (the whole array) are
        written as what the previous request did not hold (``prefix`` + ``append``)."""
        if isinstance(event, Request) and event.messages is not None:
            event.prefix, event.append = self._split(event.messages)
            self._keep(event.messages, event.prefix, event.append)
            if event.params is not None and self._tools and event.params.get("tools") == self._tools:
                event.params = {k: v for k, v in event.params.items() if k != "tools"}
            body = event.body
            if body is not None:
                event.body, event.body_prefix = _body_delta(body, self._last_body)
            self._last_body = body
        elif isinstance(event, Stop) and event.messages is not None:
            event.prefix, event.append = self._split(event.messages)
            event.messages = None
        self.seq += 1
        event.seq = self.seq
        self._line(to_json_value(event))

    def _split(self, messages: list[Message]) -> tuple[int, list[Message]]:
        prefix = _common(self._last, messages)
        return prefix, list(messages[prefix:])

    def _keep(self, messages: list[Message], prefix: int, append: list[Message]) -> None:
        """The last request's messages, for the next one's ``_split``."""
        if prefix == len(self._last):   # appended to: our copy grows by what is new (copying
            self._last.extend(append)   # the whole array each request was quadratic in the
        else:                           # run's length)
            self._last = list(messages)

    def __call__(self, kind: str, data: Mapping[str, JSON]) -> None:
        """A session observer: the engine's event ``kind`` with its fields."""
        value = _session_line(kind, data)
        if value is None:
            self.write(session_event(kind, data))
            return
        # the line ``write(session_event(kind, data))`` writes, made without the typed event
        # (converted and read back, it was a fifth of the writer's time)
        messages = data.get("messages") if kind in ("request", "stop") else None
        if isinstance(messages, list):   # the session's own list (a request's, a stop's)
            prefix, append = self._split(cast("list[Message]", messages))
            value["prefix"], value["append"] = prefix, cast("JSON", append)
            if kind == "request":
                self._keep(cast("list[Message]", messages), prefix, append)
                params = value.get("params")   # a dict or None (``_session_line``)
                if isinstance(params, dict) and self._tools and params.get("tools") == self._tools:
                    value["params"] = {k: v for k, v in params.items() if k != "tools"}
                self._last_body = None
        self.seq += 1
        value["seq"] = self.seq
        self._line({k: v for k, v in value.items() if v is not None} if kind == "stop" else value)

    def _line(self, value: dict[str, JSON]) -> None:
        if self.error is not None:
            return
        data = utf8_json_bytes(value, default=str)
        if self.redact.may_hold_secret(data):   # else redacting would change nothing
            data = utf8_json_bytes(self.redact(value), default=self._shown)
        data += b"\n"
        try:
            if self.fh is None:
                if not self.keep_open:
                    append_to(self.path, data)
                return
            raw = getattr(self.fh, "buffer", None)   # the file's bytes under its text: the
            if raw is not None:                      # line is encoded once, here, not again
                raw.write(data)
                raw.flush()
            else:
                self.fh.write(data.decode("utf-8"))
                self.fh.flush()
        except OSError as exc:  # e.g. a full disk: keep running, report it once
            self.error = exc

    def _shown(self, value: object) -> str:
        """A value JSON cannot hold, as its text, redacted (the walk passes it by)."""
        return self.redact.text(str(value))

    def copy_to(self, target: Path) -> None:
        """A copy of the transcript so far (step mode's 'save')."""
        if self.fh is not None:
            self.fh.flush()
        shutil.copyfile(self.path, target)

    def _close_fh(self) -> None:
        fh, self.fh = self.fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError as exc:
                self.error = exc

    def close(self) -> None:
        self._close_fh()


def _common(before: Sequence[JSON], now: Sequence[JSON]) -> int:
    """How many first items ``now`` shares with ``before``."""
    if len(now) >= len(before) and now[:len(before)] == before:   # appended to: the usual case,
        return len(before)                                        # compared in C (identity first)
    n = 0
    for a, b in zip(before, now):
        if a is not b and a != b:  # the engine keeps objects; a proxy re-parses them
            break
        n += 1
    return n


def _body_delta(body: JSONObject,
                before: JSONObject | None) -> tuple[JSONObject, dict[str, int] | None]:
    """``body`` with each array cut to what the same array of ``before`` did not hold."""
    if before is None:
        return body, None
    stored, cuts = dict(body), {}
    for key, value in body.items():
        previous = before.get(key)
        if isinstance(value, list) and isinstance(previous, list):
            n = _common(previous, value)
            if n:
                stored[key], cuts[key] = value[n:], n
    return stored, cuts or None


_SESSION_EVENTS: dict[str, type[Event]] = {
    "request": Request, "response": Response, "model_error": ModelError, "blocked": Blocked,
    "tool": Tool, "action": Action, "stop": Stop}


#: each session event's fields (msgspec's order, the line's): (JSON name, given at all,
#: typed float) — made at the first event
_PLANS: dict[str, tuple[tuple[str, bool, bool], ...]] = {}


def _plan(kind: str) -> tuple[tuple[str, bool, bool], ...]:
    plan = _PLANS.get(kind)
    if plan is None:
        fields = msgspec.structs.fields(_SESSION_EVENTS[kind])
        plan = _PLANS[kind] = tuple(
            (f.encode_name, f.required, f.type is float or f.type == float | None) for f in fields)
    return plan


def _session_line(kind: str, data: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """The JSON object ``to_json_value(session_event(kind, data))`` makes, when it is the
    values as they came: a kind the transcript defines, every field it requires given, no
    ``type`` or ``seq`` among them, a request without ``body`` and with ``params`` an object
    or none, no integer where a float is typed (msgspec makes it a float). Else None: the
    typed event decides (``session_event``). A value of another type than the event's is
    written as it came either way (that is ``session_event``'s fallback), and msgspec keeps
    the values it validates (JSON payloads are ``Any``). ``seq`` (and a stop's ``prefix``
    and ``append`` unless given) are left None in their places; a request's ``prefix`` and
    ``append`` are 0 and [] until the writer splits its ``messages``."""
    if kind not in _SESSION_EVENTS or "type" in data or "seq" in data:
        return None
    if kind == "request" and (data.get("body") is not None
                              or not isinstance(data.get("params"), (dict, type(None)))):
        return None
    out: dict[str, JSON] = {"type": kind}
    get = data.get
    for name, required, floating in _plan(kind):
        if kind == "request" and name in ("prefix", "append", "messages"):
            if name != "messages":   # what ``session_event`` sets, whatever was given
                out[name] = 0 if name == "prefix" else []
            continue
        if name == "messages" and kind == "stop":
            continue                 # written as ``prefix`` + ``append``
        value = get(name)
        if value is None or value is msgspec.UNSET:
            if required:
                return None
            if name == "seq" or (kind == "stop" and name in ("prefix", "append")):
                out[name] = None     # its place in the line
            continue
        if floating and type(value) is int:
            return None
        out[name] = value
    return out


def session_event(kind: str, data: Mapping[str, JSON]) -> Event | Other:
    """The typed event for what a ``Session`` emits (``_emit(kind, **fields)``): the engine's
    fields are the event's (a request's and a stop's ``messages`` are the whole array). A kind
    the transcript does not define is written as it is (``Other``)."""
    fields = dict(data)
    if kind not in _SESSION_EVENTS:
        return Other(kind=kind, data=fields)
    messages = fields.pop("messages", None) if kind in ("request", "stop") else None
    if kind == "request":
        fields.update(prefix=0, append=[])
    cls = _SESSION_EVENTS[kind]
    try:
        event = msgspec.convert({"type": kind, **fields}, cls)
    except msgspec.ValidationError:
        # a value of another type than the event's (a provider's odd finish_reason …): written
        # as it came, never a crash mid-run; reading it back names the line and the field
        names = dict(zip(cls.__struct_encode_fields__, cls.__struct_fields__))
        given: dict[str, Any] = {names[k]: v for k, v in fields.items() if k in names}
        event = cls(**given)
    if isinstance(event, (Request, Stop)) and isinstance(messages, list):
        event.messages = messages  # type: ignore[assignment]  # the session's own list, not copied
    return event


def start_transcript(session: Observed, path: Path | None, *, model: str, provider: str,
                     base_url: str | None, question: str | None, redact: Iterable[str] = (),
                     secrets: Iterable[str] = (), parent: dict[str, JSON] | None = None
                     ) -> TranscriptWriter:
    """Attach a writer to ``session``: the header now, every event as it happens.

    ``path`` None: a new file in the runs folder, named after the question."""
    from agentdbg.transcript.redact import safe_url, url_secrets
    from agentdbg.transcript.runs import create_run_file, open_locked

    tools: list[JSON] = list(session.toolset.openai_tools())
    servers = getattr(session.toolset, "mcp", None)
    header = Header(
        model=model, provider=provider, base_url=safe_url(base_url), question=question,
        tools=tools, tools_hash=tools_hash(tools), tools_file=str(session.toolset.path),
        options=msgspec.convert(dict(vars(session.config)), Options),
        initial_messages=list(session.messages),
        parent=msgspec.convert(parent, Parent) if parent is not None else None,
        api=getattr(session.provider, "wire", "chat"),  # the wire format the run spoke
        api_params=getattr(session.provider, "wire_params", {}),  # what it adds to each body
        # each MCP server: how it was started (no secrets), who answered, its tools
        mcp_servers=servers.records() if servers is not None else None)
    if path is None:
        path, fh = create_run_file(question or "run")
    else:
        path = Path(path)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
        fh = open_locked(path)
    redactor = Redactor(list(redact), [*secrets, *url_secrets(base_url)])
    writer = TranscriptWriter(path, header, redactor, fh=fh)
    session.observers.append(writer)
    return writer
