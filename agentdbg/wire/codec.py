"""One protocol for every wire format, and the registry that names them.

A ``Codec`` is everything agentdbg knows about one wire format, in one place: its endpoint
paths, how to tell a body that cannot be processed (``shape_error``, as the real API's schema
check words it), the request's chat form (what the engine and the offline model work on) and
its format-neutral conversation (``parse_request``: what the view, the report and the budget
read), how to send a request (``encode_request``) and answer one (``answer``, ``stream``), how to
rebuild a relayed response (``reply``, ``accumulator``), how the real API words an error and
rejects a request (``error``, ``rejection``).

Code above the codecs asks a codec, never a format's name: ``get("responses").key`` is
``"input"``. A codec does not judge anything: the checker's format rules register themselves
keyed by the codec's name (``agentdbg.checker.formats``).

    from agentdbg.wire import codec
    c = codec.get("anthropic")         # by name
    c = codec.detect(body)             # by what the document looks like
    c = codec.route("/v1beta/models/gemini-2.5-flash:generateContent")
"""

from __future__ import annotations

import importlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeGuard

from agentdbg.i18n import N_
from agentdbg.wire.common import ChatForm, ChatReply

if TYPE_CHECKING:
    from agentdbg.conversation import JSON, JsonObject, Part, Request, ToolDef
    from agentdbg.wire.pairing import Entry as PairingEntry

#: every codec: name -> (module, class); imported on first use
MODULES: dict[str, tuple[str, str]] = {
    "chat": ("agentdbg.wire.chat", "ChatCodec"),
    "responses": ("agentdbg.wire.responses_codec", "ResponsesCodec"),
    "anthropic": ("agentdbg.wire.anthropic_codec", "AnthropicCodec"),
    "gemini": ("agentdbg.wire.gemini_codec", "GeminiCodec"),
}
NAMES = tuple(MODULES)
DEFAULT = "chat"     # agentdbg's own chat form, and what a transcript without "api" spoke
PROBLEM = tuple[str, "str | None"]
OPENAI_BAD_JSON = ("We could not parse the JSON body of your request. (HINT: This likely means you "
                   "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
                   "but what was sent was not valid JSON.)")


class FindingLike(Protocol):
    """What a codec reads of a checker finding to word the API's rejection."""

    rule: str
    severity: str
    index: int | None
    api_error: str | None
    path: str | None


class StreamReader(Protocol):
    """Rebuilds a relayed response from its raw server-sent-event bytes, in any chunking."""

    def feed(self, data: bytes) -> None: ...
    def close(self) -> None: ...
    @property
    def reply(self) -> ChatReply: ...
    @property
    def native(self) -> JSON: ...
    def shape(self) -> list[str]: ...


class Codec(ABC):
    """What every format shares; each format's module fills in its own pieces."""

    name: str = ""
    label: str = ""                     # how the view names the format
    paths: tuple[str, ...] = ()         # endpoint paths under /v1 (starlette route syntax)
    stream_end: tuple[bytes, ...] = ()  # bytes that say a stream is complete
    key: str = "messages"               # the body's key that holds the conversation
    unit: str = "message"               # what one entry of ``key`` is called
    stores: bool = False                # a response can be continued by its id (Responses API)
    chat_native: bool = False           # the body is its own chat form (Chat Completions)
    entry_local: bool = False           # each entry of ``key`` has a chat form of its own, so a
                                        # body's is its other fields' then its entries', in order
    text_input: bool = False            # ``key`` may be a plain string (one user message)
    provider: str | None = None         # OpenTelemetry's gen_ai.provider.name for an endpoint
                                        # of this format on an unknown host (None: "openai")
    secret_headers: tuple[str, ...] = ()  # request headers that carry a key (besides Authorization)
    secret_params: tuple[str, ...] = ()   # query parameters that carry a key

    # -- reading a request --------------------------------------------------------------
    @abstractmethod
    def shape_error(self, body: JSON) -> tuple[str, str | None] | None:
        """(message, param) when the body cannot be processed at all, else None."""

    @abstractmethod
    def chat_form(self, body: JsonObject) -> ChatForm:
        """The request as Chat Completions messages (what the engine works on)."""

    @abstractmethod
    def parse_request(self, body: JSON) -> Request:
        """The request as the format-neutral conversation model."""

    def top_parts(self, body: JSON) -> list[Part]:
        """The parts outside the conversation key (``system``, ``instructions``)."""
        return []

    @abstractmethod
    def entry_parts(self, i: int, item: JsonObject) -> list[Part]:
        """The parts of entry ``i`` of the conversation key (``parse_request`` is the top
        parts then every entry's: the view reads only the entries it draws)."""

    def tools(self, body: JSON) -> list[ToolDef]:
        """The tools the request offers (function, namespaced and hosted)."""
        return self.parse_request(body).tools

    def items(self, body: JSON) -> list:
        """The entries of the conversation key as sent (a bare string input is one user item)."""
        value = body.get(self.key) if isinstance(body, dict) else body
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        return [x if isinstance(x, dict) else {} for x in value] if isinstance(value, list) else []

    def definition_error(self, body: JSON) -> tuple[str, str | None] | None:
        """(message, param) for a tool definition that is not a JSON Schema (``serve`` answers
        400; the proxy still checks and records such a request)."""
        return None

    # -- pairing: how the API binds a result to its call (``agentdbg.wire.pairing``) -------
    pairs_by: str = "id"                # "id": a result names its call; "position": the k-th
                                        # result of a turn answers the k-th call before it
    pairs_within: str = "block"         # "block": results right after their calls (later ones
                                        # are late); "turn": the next turn; "request": anywhere
    merges: tuple[str, ...] = ()        # roles whose consecutive entries are one turn
    skips: tuple[str, ...] = ()         # roles whose entries neither call nor answer
    calling_role: str = "assistant"     # the role of the entries that make calls
    parts_key: str = "content"          # where an entry's parts are (``path``)

    @abstractmethod
    def pairing_entries(self, items: list) -> list[PairingEntry]:
        """The conversation entries as the pairing reads them: each one's role, its calls
        and its results, with their native locations."""

    def path(self, loc: tuple[int, ...]) -> str:
        """The native path of a location: ``input[5]``, ``contents[2].parts[0]``."""
        head = f"{self.key}[{loc[0]}]" if loc else self.key
        return head + "".join(f".{self.parts_key}[{j}]" for j in loc[1:])

    def reasons(self, body: JsonObject) -> bool:
        """Does the request ask a reasoning model to reason (and so expect its reasoning back)?"""
        return False

    def continues(self, body: JSON) -> str | None:
        """The id of a stored response this request continues (``previous_response_id``)."""
        return None

    def answer_schema(self, body: JSON) -> JsonObject | None:
        """The JSON Schema the request wants its answer in (``{}``: any JSON; None: text)."""
        return None

    def routes(self) -> list[str]:
        """The paths serve and the proxy answer: each of ``paths`` with and without ``/v1``."""
        return [route for path in self.paths for route in ("/v1" + path, path)]

    def upstream_url(self, upstream: str, path: str) -> str:
        """Where a request to ``path`` (one of ``routes()``) goes on ``upstream``, a base URL
        that ends with its version (``https://api.openai.com/v1``)."""
        return upstream + (path[len("/v1"):] if path.startswith("/v1/") else path)

    def streams(self, path: str, body: JSON) -> bool:
        """Does the request ask for server-sent events?"""
        return isinstance(body, dict) and body.get("stream") is True

    def model_of(self, path: str, body: JSON) -> str | None:
        """Which model the request is for (from the body, or the path for formats that say it there)."""
        model = body.get("model") if isinstance(body, dict) else None
        return model if isinstance(model, str) else None

    # -- the messages view (``agentdbg.render.view`` draws every format; here are its words) --
    result_texts: ClassVar[dict[str, str]] = {}   # a result's pairing state -> what the view says of it
                                        # (``orphan``, ``mismatch``, ``missing_id``)
    no_result_id: str = "(no id)"       # a result that names no call
    hidden_text: str = N_("({n} earlier {unit}(s) unchanged, no findings; --full shows them)")
    ids_unique_in: str = "request"      # "request": a call id used twice anywhere is marked;
                                        # "entry": only twice within one entry

    def entry_label(self, item: JSON) -> str | None:
        """What the view's role column says of one entry of ``key`` (its role)."""
        role = item.get("role") if isinstance(item, dict) else None
        return role if isinstance(role, str) else None

    def shown_at(self, loc: tuple[int, ...]) -> str:
        """How the view names a location next to the ``[index]`` column: ``[6]``,
        ``[4].content[0]`` (the native path without the conversation key)."""
        return self.path(loc)[len(self.key):]

    def part_prefix(self, loc: tuple[int, ...]) -> str:
        """What the view writes before a part of an entry of several parts: ``.content[1] ``."""
        return f".{self.parts_key}[{loc[1]}] " if len(loc) > 1 else ""

    # -- sending a request ----------------------------------------------------------------
    @abstractmethod
    def encode_request(self, messages: list[JsonObject], tools: list[JsonObject] | None = None,
                       tool_choice: JSON = None, parallel_tool_calls: bool | None = None, *,
                       params: JsonObject | None = None) -> JsonObject:
        """The native request body for chat messages (+ tools …); ``params`` adds the rest."""

    def tool_from_chat(self, tool: JsonObject) -> JsonObject:
        """A Chat Completions tool definition in this format's shape."""
        return tool

    # -- errors ---------------------------------------------------------------------------
    def error(self, status: int, message: str, *, param: str | None = None,
              code: str | None = None, type_: str = "invalid_request_error", **extra: JSON) -> JsonObject:
        return {"error": {"message": message, "type": type_, "param": param, "code": code, **extra}}

    def bad_json(self) -> JsonObject:
        return self.error(400, OPENAI_BAD_JSON)

    @abstractmethod
    def rejection(self, findings: Sequence[FindingLike]) -> tuple[int, JsonObject] | None:
        """What the real API answers for the first error among ``findings`` (None: it accepts)."""

    # -- answering --------------------------------------------------------------------------
    @abstractmethod
    def answer(self, message: JsonObject, body: JsonObject, usage: JsonObject | None, finish: str | None,
               model_name: str = "offline") -> JsonObject:
        """The native response object for a chat assistant reply (deterministic ids)."""

    @abstractmethod
    def stream(self, native: JsonObject, body: JsonObject) -> Iterator[bytes]:
        """The server-sent events of ``native`` as the real API streams it."""

    # -- reading a response -----------------------------------------------------------------
    @abstractmethod
    def accumulator(self) -> StreamReader:
        ...

    @abstractmethod
    def reply(self, doc: JSON) -> ChatReply | None:
        """The chat reply of a plain (non-streamed) response body, None when it is not one."""

    def output(self, native: JSON) -> list:
        """The native entries a response adds to the conversation (in the shape of ``key``)."""
        return []


_LOADED: dict[str, Codec] = {}


def get(name: str) -> Codec:
    """The codec called ``name`` (``KeyError`` for an unknown one)."""
    codec = _LOADED.get(name)
    if codec is None:
        module, cls = MODULES[name]
        codec = _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return codec


def known(name: object) -> TypeGuard[str]:
    return isinstance(name, str) and name in MODULES


def every() -> list[Codec]:
    return [get(name) for name in NAMES]


def detect(doc: JSON) -> Codec | None:
    """The codec whose format ``doc`` (a request body or a bare array) is written in."""
    from agentdbg.wire.detect import detect_format

    name = detect_format(doc)
    return get(name) if name is not None else None


def route(path: str) -> Codec | None:
    """The codec whose endpoint ``path`` is (with or without ``/v1``)."""
    for codec in every():
        for pattern in codec.paths:
            if re.fullmatch(_regex(pattern), path) or re.fullmatch(_regex("/v1" + pattern), path):
                return codec
    return None


def _regex(pattern: str) -> str:
    return re.sub(r"\\\{[a-z_]+(?::path)?\\\}", "[^/]+", re.escape(pattern))


# -- what the formats share ------------------------------------------------------------------

def type_word(value: JSON) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), "a value")


def schema_problem(tools: JSON, schema_key: str, nested: bool) -> tuple[str, str, int] | None:
    """(message, param, tool index) for a tool definition the API cannot read."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        return (f"Invalid type for 'tools': expected an array, but got {type_word(tools)} instead.",
                "tools", 0)
    for k, t in enumerate(tools):
        if not isinstance(t, dict):
            return (f"Invalid type for 'tools[{k}]': expected an object, but got {type_word(t)} "
                    "instead.", f"tools[{k}]", k)
        fn = t.get("function") if nested else t
        if not isinstance(fn, dict):
            continue
        where = f"tools[{k}].function.{schema_key}" if nested else f"tools[{k}].{schema_key}"
        schema = fn.get(schema_key)
        name = fn.get("name")
        if schema_key in fn and not isinstance(schema, dict):
            return f"Invalid schema for function '{name}': {schema!r} is not of type 'object'.", where, k
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(schema, dict) and "properties" in schema and not isinstance(props, dict):
            return (f"Invalid schema for function '{name}': {props!r} is not of type 'object'.",
                    f"{where}.properties", k)
    return None


def json_schema_error(tools: JSON, key: str, nested: bool) -> tuple[int, JSON, str, str, str] | None:
    """(tool index, its name, where, context, problem) for the first tool whose ``key`` schema
    is not a valid JSON Schema (OpenAI words it ``In context=(context), problem``)."""
    from agentdbg.schemas import schema_error

    for k, t in enumerate(tools if isinstance(tools, list) else []):
        fn = t.get("function") if nested and isinstance(t, dict) else t
        if not isinstance(fn, dict) or not isinstance(fn.get(key), dict):
            continue
        problem = schema_error(fn[key])
        if problem is not None:
            context = ", ".join(repr(p) for p in problem[0]) + ("," if len(problem[0]) == 1 else "")
            where = f"tools[{k}].function.{key}" if nested else f"tools[{k}].{key}"
            return k, fn.get("name"), where, context, problem[1]
    return None


def error_text(doc: JSON) -> str:
    """The message of an error body in any format's shape (for one line on a console)."""
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"])
    return json.dumps(doc, ensure_ascii=False)[:300]
