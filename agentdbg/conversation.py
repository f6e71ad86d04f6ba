"""The format-neutral conversation model: what a tool loop is made of, whatever the wire format.

Each wire format's codec (``agentdbg.wire.codec``) reads a request body into a ``Request`` and a
response into a ``Reply``. Their parts are typed (instructions, user text, assistant text, tool
call, tool result, reasoning, hosted tool use and result, compaction and reference items), each
with where it sits in the native body (``Where``: ``messages[3].content[1]``, ``input[5]``,
``contents[2].parts[0]``) and the agent that produced it where the format says so (a message's
``name``). Tool definitions are part of the request (functions, namespaced ones such as Codex's
``multi_agent_v1``, hosted ones such as ``web_search``), so they can be shown and counted;
``Usage`` carries every count the APIs report, side by side.

Everything here is data read from outside: every field holds what the body held, or None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
JsonObject: TypeAlias = dict[str, JSON]
Loc: TypeAlias = tuple[int, ...]
P = TypeVar("P", bound="Part")


@dataclass(frozen=True)
class Where:
    """Where a part sits in its native body: ``loc`` indexes into the conversation key
    (``(3, 1)`` is ``messages[3].content[1]``; ``()`` is a top-level field), ``path`` says it."""

    loc: Loc
    path: str

    @property
    def index(self) -> int | None:
        """The top-level entry (message, item, content) it belongs to; None for a top-level field."""
        return self.loc[0] if self.loc else None


@dataclass(frozen=True)
class Note:
    """What a part's value is when the body holds it in a shape worth saying (``content: null``,
    ``(arguments is an array, not a string)``), in the format's own words: ``text`` is an
    English template (marked for translation where it is written) filled with ``values``;
    ``shows``: the value as sent comes first, as JSON."""

    text: str
    values: tuple[tuple[str, str], ...] = ()
    wrong: bool = True                # the API rejects it, or the model is misled (else: a remark)
    shows: bool = False
    value: JSON = field(default=None, compare=False)


@dataclass(frozen=True)
class Part:
    """What every part has: where it is, who produced it (when the format says), the original;
    ``note``: what to say in place of its value when the body holds an unusual shape there."""

    where: Where
    raw: JSON = field(default=None, repr=False, compare=False)
    agent: str | None = None
    note: Note | None = field(default=None, kw_only=True, compare=False)


@dataclass(frozen=True)
class Instructions(Part):
    """A system/developer prompt: ``system``, ``instructions``, ``systemInstruction`` or a message."""

    text: str = ""


@dataclass(frozen=True)
class UserText(Part):
    text: str = ""


@dataclass(frozen=True)
class AssistantText(Part):
    text: str = ""


@dataclass(frozen=True)
class ToolCall(Part):
    """A call of a client tool. ``arguments``: as sent (JSON text in Chat Completions and the
    Responses API, an object in Anthropic and Gemini requests)."""

    call_id: str | None = None
    name: str | None = None
    arguments: JSON = None
    kind: str = "function"            # function | custom | the format's own call type
    signature: str | None = None      # Gemini: the thoughtSignature riding on the call


@dataclass(frozen=True)
class ToolResult(Part):
    call_id: str | None = None
    name: str | None = None           # Gemini: the function the response is for
    content: JSON = None
    is_error: bool = False


@dataclass(frozen=True)
class Reasoning(Part):
    """Reasoning or thinking the model produced, with what must come back unchanged."""

    text: str = ""
    signature: str | None = None      # Anthropic signature, Gemini thoughtSignature
    encrypted: str | None = None      # Responses encrypted_content, Anthropic redacted_thinking
    item_id: str | None = None        # Responses: rs_…
    kind: str = "reasoning"           # what the format calls it: reasoning_content, thinking …


@dataclass(frozen=True)
class HostedCall(Part):
    """A tool the provider runs itself (web search, code interpreter, an Anthropic server tool)."""

    call_id: str | None = None
    name: str | None = None
    payload: JSON = None


@dataclass(frozen=True)
class HostedResult(Part):
    call_id: str | None = None
    payload: JSON = None


@dataclass(frozen=True)
class Compaction(Part):
    """A compacted stretch of the conversation the server expands (opaque to the client)."""

    encrypted: str | None = None


@dataclass(frozen=True)
class Reference(Part):
    """An item the server holds, referred to by id (``item_reference``)."""

    ref: str | None = None


@dataclass(frozen=True)
class Other(Part):
    """Anything else the format carries (images, documents, audio, a message of a role the
    format does not know), kept as it was; ``text``: its text, when it has one."""

    kind: str = ""
    text: str | None = None


@dataclass(frozen=True)
class ToolDef:
    """A tool the request offers the model.

    ``kind``: ``function`` (JSON-schema arguments), ``custom`` (free-form input), ``hosted``
    (run by the provider: ``web_search``, ``code_interpreter``, an Anthropic server tool).
    ``namespace``: the group a function belongs to (Codex's ``multi_agent_v1``)."""

    name: str
    kind: str = "function"
    namespace: str | None = None
    description: str | None = None
    schema: JSON = None
    where: str = ""                   # its native path, e.g. "tools[2]" or "tools[0].tools[1]"
    raw: JSON = field(default=None, repr=False, compare=False)

    @property
    def qualified(self) -> str:
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    def to_dict(self) -> JsonObject:
        """What a transcript records of it (``tool_definitions`` in a header)."""
        out: JsonObject = {"name": self.qualified, "kind": self.kind}
        if self.namespace:
            out["namespace"] = self.namespace
        if self.description is not None:
            out["description"] = self.description
        if self.schema is not None:
            out["parameters"] = self.schema
        return out


def definitions_text(definitions: list[JsonObject], full: bool = False) -> list[str]:
    """Tool definitions as lines a person reads: names (``web_search (hosted)``) on one line,
    or with ``full`` one line per tool with its description and parameters."""
    import json

    def name(d: JsonObject) -> str:
        kind = d.get("kind")
        return f"{d.get('name')}" + (f" ({kind})" if kind not in ("function", None) else "")
    if not full:
        return [", ".join(name(d) for d in definitions)] if definitions else []
    out = []
    for d in definitions:
        line = name(d)
        if isinstance(d.get("description"), str) and d["description"]:
            line += f": {d['description']}"
        if d.get("parameters") is not None:
            line += f"  parameters {json.dumps(d['parameters'], ensure_ascii=False, default=str)}"
        out.append(line)
    return out


def definitions_of(header_tools: object, recorded: object) -> list[JsonObject]:
    """A transcript's tool definitions: the header's ``tool_definitions`` when recorded, else
    the Chat Completions ``tools`` it holds (function and custom tools)."""
    if isinstance(recorded, list):
        return [d for d in recorded if isinstance(d, dict) and isinstance(d.get("name"), str)]
    out: list[JsonObject] = []
    for t in header_tools if isinstance(header_tools, list) else []:
        fn = (t.get("custom") if t.get("type") == "custom" else t.get("function")) \
            if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            d: JsonObject = {"name": fn["name"], "kind": "custom" if t.get("type") == "custom"
                             else "function"}
            if isinstance(fn.get("description"), str):
                d["description"] = fn["description"]
            if fn.get("parameters") is not None:
                d["parameters"] = fn["parameters"]
            out.append(d)
    return out


@dataclass(frozen=True)
class Usage:
    """Token counts as the API reported them; None where it reported none.

    ``input`` is every input token, cached or not (Anthropic reports its uncached, cache-creation
    and cache-read tokens apart: ``input`` is their sum, and each is kept as it came);
    ``cached`` the part of ``input`` read from a cache; ``reasoning`` the part of ``output``
    spent reasoning."""

    input: int | None = None
    output: int | None = None
    cached: int | None = None
    cache_creation: int | None = None
    cache_read: int | None = None
    uncached: int | None = None       # Anthropic's own input_tokens
    reasoning: int | None = None

    @property
    def total(self) -> int | None:
        if self.input is None and self.output is None:
            return None
        return (self.input or 0) + (self.output or 0)

    def counts(self) -> JsonObject:
        """The chat usage object agentdbg records: prompt/completion/total plus every detail."""
        out: JsonObject = {"prompt_tokens": self.input or 0,
                               "completion_tokens": self.output or 0,
                               "total_tokens": self.total or 0}
        caching = bool(self.cache_creation or self.cache_read)
        details = {"cached_tokens": self.cached, "cache_creation_input_tokens": self.cache_creation,
                   "cache_read_input_tokens": self.cache_read,
                   "input_tokens": self.uncached if caching else None,
                   "reasoning_tokens": self.reasoning}
        out.update({k: v for k, v in details.items() if v})   # a count of 0 says nothing new
        return out

    @classmethod
    def from_counts(cls, usage: object) -> Usage:
        """The model of a usage object agentdbg recorded (``counts()``), or of any chat usage."""
        u = usage if isinstance(usage, dict) else {}
        return cls(input=count(u.get("prompt_tokens")), output=count(u.get("completion_tokens")),
                   cached=count(u.get("cached_tokens")),
                   cache_creation=count(u.get("cache_creation_input_tokens")),
                   cache_read=count(u.get("cache_read_input_tokens")),
                   uncached=count(u.get("input_tokens")),
                   reasoning=count(u.get("reasoning_tokens")))


@dataclass
class Request:
    """One request: its parts in order, the tools it offers, and its other fields."""

    codec: str
    parts: list[Part] = field(default_factory=list)
    tools: list[ToolDef] = field(default_factory=list)
    tool_choice: JSON = None
    params: JsonObject = field(default_factory=dict)
    model: str | None = None

    def of(self, kind: type[P]) -> list[P]:
        return [p for p in self.parts if isinstance(p, kind)]

    def tool_names(self) -> list[str]:
        return [t.qualified for t in self.tools]


@dataclass
class Reply:
    """One response: what the model produced, what it cost, why it stopped."""

    parts: list[Part] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish: str | None = None


def count(value: object) -> int | None:
    """A token count as reported: a non-negative integer, else None (counts are data too)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def text_of(content: object) -> str:
    """The plain text of a string or a list of parts carrying ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
