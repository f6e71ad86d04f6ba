"""The transcript's events, typed: one class per kind of line, decoded and checked by ``msgspec``.

A transcript may come from anyone: a field of the wrong type is a one-line error naming the
line and the field (``decode_event``), never a crash somewhere later. Unknown fields are left
alone and an event of an unknown kind is kept as ``Other`` (newer writers may add them).

What an event records from the wire (messages, request bodies, responses, findings) is JSON
data, typed with the ``JSON`` aliases: the parser already made it JSON, so it is not walked
again, but the parts the engine acts on are checked (``tool_calls`` hold objects, usage counts
are numbers). Version 2 stores each message once (``reader`` reads version 1 too):

* the header's ``initial_messages`` are the start; the first request's ``prefix`` counts them
  (version 1 counted from none, repeating them in its ``append``);
* a request's ``params`` leave out ``tools`` when they are the header's (restored on read);
* the stop event keeps its final messages as ``prefix`` + ``append`` of the last request;
* a request's native ``body`` (the proxy's Responses / Anthropic requests) keeps of each of
  its arrays only what the previous request's body did not hold (``body_prefix``);
* the header's ``question`` is a preview of at most ``QUESTION_PREVIEW`` characters.
"""

# annotations are evaluated at class creation (no __future__ import): msgspec reads them as
# objects instead of compiling each of their texts (129 compile() calls per process)

from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
from msgspec.structs import astuple as _astuple

from agentdbg.i18n import N_, Join, Msg

FORMAT = "agentdbg-transcript"
VERSION = 2
READS = (1, 2)                 # the versions this agentdbg reads (1 through a migration)
QUESTION_PREVIEW = 300

if TYPE_CHECKING:
    from typing import TypeAlias

    JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
else:   # at run time a JSON value is what the parser made; msgspec does not walk it again
    JSON = Any
JSONObject = dict[str, JSON]
#: one recorded message (the chat form the engine works on; a Responses or Anthropic
#: message keeps its native original under "wire")
Message = JSONObject
#: a usage object as the API reported it: every count kept (the known ones are numbers)
Usage = JSONObject
#: a recorded finding, ``Finding.to_dict()``
FindingRecord = JSONObject

USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


class _Event(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="type"):
    seq: int | None = None
    event_type: ClassVar[str]

    def problem(self) -> Msg | None:
        """What the types alone do not say (None: nothing a reader would trip on)."""
        return None


class Options(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The run's options as the header records them (``RunConfig``'s fields)."""
    model: str | msgspec.UnsetType | None = msgspec.UNSET
    max_turns: int | msgspec.UnsetType = msgspec.UNSET
    max_tool_calls: int | msgspec.UnsetType = msgspec.UNSET
    repeat_limit: int | msgspec.UnsetType = msgspec.UNSET
    timeout: float | msgspec.UnsetType | None = msgspec.UNSET
    approve: str | msgspec.UnsetType | None = msgspec.UNSET
    tool_choice: JSON | msgspec.UnsetType = msgspec.UNSET
    parallel_tool_calls: bool | msgspec.UnsetType | None = msgspec.UNSET
    temperature: float | msgspec.UnsetType | None = msgspec.UNSET
    send_anyway: bool | msgspec.UnsetType = msgspec.UNSET
    stop_on_invalid: bool | msgspec.UnsetType = msgspec.UNSET

    def given(self) -> dict[str, JSON]:
        """The options the recording holds (absent ones left out)."""
        return {f: getattr(self, f) for f in self.__struct_fields__
                if getattr(self, f) is not msgspec.UNSET}


class Parent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A fork's recording and the message it was forked at."""
    path: str
    from_index: int


class ParentCall(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Read only: the ``parent_call`` header field of transcripts imported before it became
    ``started_by`` (the call of another conversation that started this one). The reader turns
    it into ``started_by``; nothing writes it any more."""
    conversation: int | None = None
    path: str | None = None
    call_id: str | None = None


class StartedBy(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The call in another conversation of the same run that started this one: a subagent
    (Claude Code's ``Agent``/``Task``, Codex's ``spawn_agent``, a team leader's delegation) or
    a handoff (``transfer_to_…``: the history goes on under another agent)."""
    conversation: int | None = None        # the starting conversation's number (None: not known)
    call_id: str | None = None             # the call that started it (None: not known)
    tool: str | None = None                # that call's tool
    kind: str = "subagent"                 # subagent | handoff
    path: str | None = None                # an imported run: the starting conversation's transcript


class Header(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="type", tag="header"):
    format: str | None = None
    version: JSON = None
    agentdbg_version: str | None = None
    created: str | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    question: str | None = None            # a preview (version 1: the whole question)
    tools: list[JSON] | None = None
    #: the proxy: every tool the requests offered in their own form (hosted, namespaced too)
    tool_definitions: list[JSON] | None = None
    tools_hash: str | None = None
    tools_file: str | None = None
    options: Options | None = None
    initial_messages: list[Message] | None = None
    parent: Parent | None = None
    api: str | None = None                 # the wire format the run spoke (None: chat)
    api_params: JSONObject | None = None   # what the run's provider adds to each body
    mcp_servers: list[JSON] | None = None
    conversation: int | None = None        # the proxy's number for the conversation
    #: the agent that held this conversation (a subagent's type, ``gen_ai.agent.name``)
    agent: str | None = None
    #: read only, never written: older imports' name for ``started_by`` (see ``__post_init__``)
    parent_call: ParentCall | None = None
    #: an imported run: what it was read from ("claude-code FILE") and what that source does
    #: not record ("… does not record the tool definitions …"), said once
    source: str | None = None
    notes: list[str] | None = None
    #: multi-agent runs: one run's conversations form a tree (``transcript.tree``)
    run: str | None = None                 # the run this conversation belongs to (its name)
    started_by: StartedBy | None = None    # the call that started it (None: a root)

    def __post_init__(self) -> None:
        """A transcript imported before the two fields were one carries ``parent_call``: it is
        read as ``started_by`` (a subagent's), and written back, if ever, as that."""
        old = self.parent_call
        if old is not None:
            if self.started_by is None:
                self.started_by = StartedBy(conversation=old.conversation, call_id=old.call_id,
                                            path=old.path)
            self.parent_call = None

    def problem(self) -> Msg | None:
        return _messages_problem("initial_messages", self.initial_messages)

    @property
    def wire(self) -> str:
        return self.api or "chat"

    @property
    def app_driven(self) -> bool:
        """The app drove the loop (a proxy recording, an imported run): each recorded request
        is the history as the app sent it."""
        return self.provider == "proxy" or self.source is not None

    @property
    def tool_list(self) -> list[JSON]:
        return self.tools or []


class Request(_Event, kw_only=True, tag="request"):
    """A request sent: the previous request's first ``prefix`` messages, then ``append``."""
    event_type: ClassVar[str] = "request"
    turn: int | None = None
    params: JSONObject | None = None       # the rest of the body (tools: see the module)
    prefix: int
    append: list[Message]
    findings: list[FindingRecord] | None = None  # the proxy's checks of it
    #: the proxy: how this request edited the history the previous one sent (``Edit.to_dict``:
    #: kind, at, text, severity note|warning; the warnings are findings too)
    edits: list[JSONObject] | None = None
    body: JSONObject | None = None         # the proxy: a Responses / Anthropic body as sent
    #: version 2: the body's arrays (its items, its tools) hold what the previous request's
    #: body did not: ``{name: how many of that array's first items come from it}``
    body_prefix: dict[str, int] | None = None
    #: the whole messages array, rebuilt by the reader (never written)
    messages: list[Message] | None = None

    def problem(self) -> Msg | None:
        if self.prefix < 0:
            return Msg("field 'prefix' must be an integer >= 0")
        if any(n < 0 for n in (self.body_prefix or {}).values()):
            return Msg("field 'body_prefix' must count items (integers >= 0)")
        return _messages_problem("append", self.append)

    @property
    def param_map(self) -> JSONObject:
        return self.params or {}


class Response(_Event, kw_only=True, tag="response"):
    event_type: ClassVar[str] = "response"
    turn: int | None = None
    message: Message
    usage: Usage | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None
    note: str | None = None
    id: JSON = None                       # the proxy: a Responses API response's id ...
    output: JSON = None                   # ... and its output items

    def problem(self) -> Msg | None:
        return _message_problem("message", self.message) or _usage_problem(self.usage)


class ModelError(_Event, kw_only=True, tag="model_error"):
    event_type: ClassVar[str] = "model_error"
    turn: int | None = None
    message: str | None = None
    status: int | None = None
    latency_ms: float | None = None


class Blocked(_Event, kw_only=True, tag="blocked"):
    """The pre-send check stopped a request (not sent)."""
    event_type: ClassVar[str] = "blocked"
    turn: int | None = None
    findings: list[FindingRecord] | None = None


class Tool(_Event, kw_only=True, tag="tool"):
    """One tool call executed (or, through the proxy, run by the app)."""
    event_type: ClassVar[str] = "tool"
    turn: int | None = None
    index: int | None = None               # the tool message's index
    tool_call_id: str | None = None
    name: str | None = None
    arguments: JSON = None                 # as the model sent them (normally a string)
    ok: bool | None = None
    error_type: str | None = None
    retryable: bool | None = None
    content: str | None = None
    detail: str | None = None
    duration_ms: float | None = None
    started_ms: float | None = None
    ended_ms: float | None = None
    truncated_chars: int | None = None
    stubbed: bool | None = None
    injected: bool | None = None
    note: str | None = None
    cause: str | None = None               # the handler's exception (type, message, file:line)
    mcp: JSONObject | None = None


class Action(_Event, kw_only=True, tag="action"):
    """The user's hand: edit, drop, rewind, back, retry, inject, fail, send."""
    event_type: ClassVar[str] = "action"
    action: str
    at_ms: float | None = None
    index: int | None = None
    before: Message | None = None
    after: Message | None = None
    message: Message | None = None         # drop: the message removed
    cut: int | None = None
    tool_call_id: JSON = None
    fault: str | None = None
    kind_: str | None = msgspec.field(default=None, name="kind")  # a fault's kind
    custom: str | None = None
    pending: bool | None = None
    content: str | None = None
    tool: str | None = None
    sticky: bool | None = None

    def problem(self) -> Msg | None:
        need: tuple[str, ...] = _ACTION_NEEDS.get(self.action, ())
        if self.action == "inject":
            need = ("tool_call_id",) if self.pending else ("index",)
        for name in need:
            value = getattr(self, name)
            if value is None:
                return Msg("{action} action event without its field '{field}'",
                           {"action": self.action, "field": name})
            if name == "index" and value < 0:
                return Msg("{action} action event: field 'index' must be an integer >= 0, got {value}",
                           {"action": self.action, "value": value})
            if name == "tool_call_id" and not isinstance(value, str):
                return Msg("{action} action event: field 'tool_call_id' must be a string",
                           {"action": self.action})
        problem = _message_problem("after", self.after) if self.after is not None else None
        return Msg("{action} action event: {problem}", {"action": self.action, "problem": problem}) \
            if problem else None


_ACTION_NEEDS: dict[str, tuple[str, ...]] = {
    "edit": ("index", "after"), "drop": ("index",), "rewind": ("index",),
    "back": ("index",),        # step mode's 'back': a rewind that re-ran nothing
    "fail": ("tool",)}


class Stop(_Event, kw_only=True, tag="stop"):
    """How the run ended, and its final messages (version 2: ``prefix`` + ``append`` of the
    last request; the reader rebuilds ``messages``)."""
    event_type: ClassVar[str] = "stop"
    reason: str
    detail: str | None = None
    messages: list[Message] | None = None
    prefix: int | None = None
    append: list[Message] | None = None
    usage: Usage | None = None
    ended_on_call: bool | None = None      # the proxy: the app ended on a call it never answered

    def problem(self) -> Msg | None:
        if self.prefix is not None and self.prefix < 0:
            return Msg("field 'prefix' must be an integer >= 0")
        return (_messages_problem("messages", self.messages) or _messages_problem("append", self.append)
                or _usage_problem(self.usage))


class AgentNamed(_Event, kw_only=True, tag="agent"):
    """The conversation's agent, learned after its header was written (a framework names the
    agent on its own messages, which come later: AutoGen's and Semantic Kernel's ``name``)."""
    event_type: ClassVar[str] = "agent"
    turn: int | None = None
    name: str


class Other(msgspec.Struct, kw_only=True):
    """An event of a kind this agentdbg does not know (a newer writer's): kept, not read."""
    kind: str
    seq: int | None = None
    data: JSONObject = msgspec.field(default_factory=dict)

    def problem(self) -> Msg | None:
        return None

    @property
    def event_type(self) -> str:
        return self.kind


Event = Request | Response | ModelError | Blocked | Tool | Action | Stop | AgentNamed
AnyEvent = Event | Other
KINDS: dict[str, type[Event]] = {c.event_type: c for c in (Request, Response, ModelError, Blocked,
                                                      Tool, Action, Stop, AgentNamed)}


# -- the checks types cannot say ---------------------------------------------------------------

def _message_problem(name: str, message: JSON) -> Msg | None:
    """A message whose ``tool_calls``, when a list, holds objects (the engine runs them)."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if isinstance(calls, list) and not all(isinstance(c, dict) for c in calls):
        return Msg("field '{field}.tool_calls' must hold objects", {"field": name})
    return None


def _messages_problem(name: str, messages: list[Message] | None) -> Msg | None:
    for i, m in enumerate(messages or ()):
        problem = _message_problem(f"{name}[{i}]", m)
        if problem is not None:
            return problem
    return None


def _usage_problem(usage: Usage | None) -> Msg | None:
    for key in USAGE_COUNTS:
        value = (usage or {}).get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return Msg("field 'usage.{key}' must be a number or null", {"key": key})
    return None


# -- decoding ------------------------------------------------------------------------------------

_DECODER = msgspec.json.Decoder(Event)
_HEADER_DECODER = msgspec.json.Decoder(Header)


class EventError(ValueError):
    """A line that is not the event it says it is; the text names the field."""


def decode_line(raw: bytes, *, header: bool) -> Header | AnyEvent:
    """One line as its typed event. The fast path decodes the bytes straight into the type;
    whatever it refuses is parsed again by ``json`` (which reads what our writer may write:
    a lone surrogate escape, a number too large for a float) and converted, so the error said
    is the same either way. Raises ``EventError`` (bad types) or ``ValueError`` (bad JSON)."""
    try:
        event: Header | AnyEvent = (_HEADER_DECODER if header else _DECODER).decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        import json

        return convert(json.loads(raw), header=header)
    return _checked(event)


def convert(value: JSON, *, header: bool) -> Header | AnyEvent:
    """A parsed line as its typed event (``EventError`` naming the field when it is not)."""
    tag = value.get("type") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(tag, str):
        raise EventError(Msg("each line must be a JSON object with a 'type'"))
    kind = "header" if header else tag
    cls: type[Header] | type[Event] | None = Header if header else KINDS.get(kind)
    if cls is None:
        seq = value.get("seq")
        return Other(kind=kind, seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
                     data=value)
    try:
        event: Header | AnyEvent = msgspec.convert(value, cls)
    except msgspec.ValidationError as exc:
        said = _said(str(exc), value)
        raise EventError(Msg("{kind} event without its field '{field}'",
                             {"kind": kind, "field": said.values["field"]})
                         if isinstance(said, Msg) and said.template == WITHOUT else
                         Msg("{kind} event: {problem}", {"kind": kind, "problem": said})) from None
    return _checked(event)


def _checked(event: Header | AnyEvent) -> Header | AnyEvent:
    problem = event.problem()
    if problem is not None:
        kind = "header" if isinstance(event, Header) else \
            event.kind if isinstance(event, Other) else event.event_type
        raise EventError(problem if isinstance(event, Action) else
                         Msg("{kind} event: {problem}", {"kind": kind, "problem": problem}))
    return event


_WORDS = {"int": N_("an integer"), "float": N_("a number"), "str": N_("a string"),
          "bool": N_("true or false"), "object": N_("an object"), "array": N_("an array"),
          "null": "null"}
WITHOUT = N_("without its field '{field}'")


def _said(text: str, value: JSON) -> Msg | str:
    """msgspec's words as this project says them: ``field 'options.max_turns' must be an
    integer, got "x"``; ``without its field 'prefix'``."""
    import re

    missing = re.match(r"Object missing required field `([^`]+)`(?: - at `\$\.?(.*)`)?$", text)
    if missing:
        where = f"{missing.group(2)}.{missing.group(1)}" if missing.group(2) else missing.group(1)
        return Msg(WITHOUT, {"field": where})
    at = re.match(r"(.*) - at `\$\.?(.*)`$", text)
    if not at:
        return text
    said, where = at.group(1), at.group(2)
    expected = re.match(r"Expected `(.+)`, got `.+`$", said)
    if expected:
        kinds = [_WORDS.get(k.strip(), k.strip()) for k in expected.group(1).split("|")]
        if "an integer" in kinds and "a number" in kinds:
            kinds.remove("an integer")
        words = Join(tuple(Msg(k) if k in _WORDS.values() else k for k in kinds), N_(" or "))
        return Msg("field '{field}' must be {kinds}, got {value}",
                   {"field": where, "kinds": words, "value": _shown(_at(value, where))})
    problem = said[:1].lower() + said[1:]      # msgspec's own words, verbatim
    return Msg("field '{field}': {problem}", {"field": where, "problem": problem})


def _at(value: JSON, where: str) -> JSON:
    """The value at ``where`` (``usage.prompt_tokens``, ``append[0].role``) in ``value``."""
    import re

    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", where):
        if index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        elif name and isinstance(value, dict):
            value = value.get(name)
        else:
            return None
    return value


def _shown(value: JSON) -> Msg | str:
    import json

    if isinstance(value, dict):
        return Msg(_WORDS["object"])
    if isinstance(value, list):
        return Msg(_WORDS["array"])
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:40] + "…"


# -- encoding ------------------------------------------------------------------------------------

def to_json_value(event: Header | Event | Other) -> JSONObject:
    """The event as the JSON object its line holds (``type`` first, then ``seq``). Shallow:
    recorded payloads are passed on as they are, however deeply they nest."""
    if isinstance(event, Other):
        return {"type": event.kind, "seq": event.seq,
                **{k: v for k, v in event.data.items() if k not in ("type", "seq")}}
    out: JSONObject = {"type": type(event).__struct_config__.tag}
    out.update(_fields(event))
    if isinstance(event, Request):
        out.pop("messages", None)   # rebuilt on read, never written
    return out


def _fields(struct: msgspec.Struct) -> JSONObject:
    """The struct's fields by their JSON names, in order, absent ones (None, unset) left out
    (the values read in C by ``astuple``: every line written, every observer's event)."""
    unset = msgspec.UNSET
    values = zip(struct.__struct_encode_fields__, _astuple(struct))
    if not isinstance(struct, Header):   # an event's fields are JSON (typed so), never a struct
        return {key: value for key, value in values if value is not None and value is not unset}
    return {key: _fields(value) if isinstance(value, msgspec.Struct) else value
            for key, value in values if value is not None and value is not unset}


def fields_of(event: Event | Other) -> JSONObject:
    """The event's fields with its whole ``messages`` (what a session observer is given)."""
    if isinstance(event, Other):
        return {k: v for k, v in event.data.items() if k != "type"}
    return _fields(event)
