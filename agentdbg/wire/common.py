"""What the wire formats share: the chat form they convert to, server-sent-event parsing,
deterministic ids, and the bookkeeping that lets a converted message go back unchanged.

Every native item or block that becomes part of a chat message is kept, verbatim, under
the chat object's ``"wire"`` key. ``from_chat`` re-emits the original when the chat-visible
fields are unchanged, and rebuilds it (keeping its other fields) when an edit changed them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar, cast

from agentdbg.i18n import N_
from agentdbg.messages import NestedTooDeeply, loads_json, utf8_json

if TYPE_CHECKING:
    from agentdbg.conversation import JSON, JsonObject

Loc = tuple[int, ...]
_T = TypeVar("_T")
WIRE = "wire"     # the key under which a chat object keeps its native original(s)
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: put between two responses' outputs in a list of what was seen (a proxy's, serve's): the
#: calls after it came in another response than a reasoning item before it
OUTPUT_END = "agentdbg.output_end"


@dataclass
class ChatForm:
    """A native request seen as Chat Completions: what agentdbg's engine and offline model use.

    ``sources[i]`` / ``locs[i]`` say where chat message ``i`` came from ("input[5]",
    "messages[3].content[1]", "instructions", "system"; a location tuple into ``input`` /
    ``messages``, ``()`` for a top-level field). ``call_locs[(i, j)]`` is the native location of
    ``messages[i].tool_calls[j]``.
    """

    messages: list[JsonObject] = field(default_factory=list)
    tools: list[JsonObject] = field(default_factory=list)   # chat function (and custom) tools
    tool_choice: JSON = None                                # None: not sent
    parallel_tool_calls: bool | None = None
    sources: list[str] = field(default_factory=list)
    locs: list[Loc] = field(default_factory=list)
    call_locs: dict[tuple[int, int], Loc] = field(default_factory=dict)
    native_tools: list[JsonObject] = field(default_factory=list)  # hosted/server tools: no chat form
    params: JsonObject = field(default_factory=dict)        # every other request field, verbatim
    notes: list[str] = field(default_factory=list)          # what the chat form does not carry

    def body(self) -> JsonObject:
        """The Chat Completions request body this stands for."""
        body: JsonObject = {"messages": cast("list[JSON]", self.messages)}
        if "model" in self.params:
            body = {"model": self.params["model"], **body}
        if self.tools:
            body["tools"] = cast("list[JSON]", self.tools)
        if self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        if self.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = self.parallel_tool_calls
        return body


@dataclass
class ChatReply:
    """A native response seen as Chat Completions: the assistant message, usage, finish reason."""

    message: JsonObject
    usage: JsonObject = field(default_factory=dict)
    finish_reason: str | None = None


def wire_meta(message: JsonObject) -> JsonObject:
    """The agentdbg-only record (``WIRE``) a chat-form message carries: where it came from, what
    the format had that Chat has not (made empty if the message has none)."""
    meta = message.get(WIRE)
    if not isinstance(meta, dict):
        meta = message[WIRE] = {}
    return meta


def seal(message: JsonObject) -> None:
    """Note what the chat-form message is as made, so a later change to it can be told."""
    wire_meta(message)["seen"] = canonical(strip_wire(message))


# -- ids ------------------------------------------------------------------------------

def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(body: object) -> str:
    """The request's fingerprint: every id of a built response derives from it."""
    return hashlib.sha256(utf8(canonical(body))).hexdigest()


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 for hashing: a lone surrogate (valid in a JSON string, from a request's
    ``"\\ud800"``) is encoded as is instead of raising."""
    return text.encode("utf-8", "surrogatepass")


def hex_id(prefix: str, seed: str, *parts: object, length: int = 48) -> str:
    text = ":".join([seed, *map(str, parts)])
    return prefix + hashlib.sha256(utf8(text)).hexdigest()[:length]


def base62_id(prefix: str, seed: str, *parts: object, length: int = 22) -> str:
    text = ":".join([seed, *map(str, parts)])
    n = int(hashlib.sha256(utf8(text)).hexdigest(), 16)
    out = []
    for _ in range(length):
        n, r = divmod(n, 62)
        out.append(BASE62[r])
    return prefix + "".join(out)


# -- small helpers --------------------------------------------------------------------

def strip_wire(value: _T) -> _T:
    """``value`` without any ``"wire"`` keys (what the chat side can see and edit): a copy of
    the same shape."""
    try:
        return cast("_T", _strip(value))
    except RecursionError:   # nested deeper than the stack: the same, without recursion
        return cast("_T", _strip_deep(value))


def _strip(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != WIRE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _strip_deep(value: object) -> object:
    root: dict[str, object] = {}
    todo: list[tuple[object, dict[str, object] | list[object], str | int]] = [(value, root, "")]
    while todo:
        item, into, key = todo.pop()
        copied: object = item
        if isinstance(item, dict):
            kept = dict.fromkeys(k for k in item if k != WIRE)
            todo.extend((v, kept, k) for k, v in item.items() if k != WIRE)
            copied = kept
        elif isinstance(item, list):
            slots: list[object] = [None] * len(item)
            todo.extend((v, slots, i) for i, v in enumerate(item))
            copied = slots
        if isinstance(into, dict) and isinstance(key, str):  # noqa: SIM114 (each narrows for the type checker)
            into[key] = copied
        elif isinstance(into, list) and isinstance(key, int):
            into[key] = copied
    return root[""]


def text_of(content: object) -> str:
    """The plain text of a chat/native content value (string or list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def as_dict(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[JSON]:
    return value if isinstance(value, list) else []


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def chat_usage(prompt: object, completion: object) -> JsonObject:
    p = prompt if isinstance(prompt, int) else 0
    c = completion if isinstance(completion, int) else 0
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def usage_counts(usage: object) -> tuple[int, int]:
    """(prompt, completion) token counts from a chat usage dict (0 when absent)."""
    if not isinstance(usage, dict):
        return 0, 0
    p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (p if isinstance(p, int) else 0), (c if isinstance(c, int) else 0)


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or []


def sse(event: str, data: JsonObject) -> bytes:
    """One server-sent event as the real APIs frame it: an ``event:`` line and a ``data:`` line."""
    return (f"event: {event}\ndata: ".encode() + utf8_json(data).encode("utf-8")
            + b"\n\n")


class Pending:
    """Strings built from many deltas: appending is O(1), the join happens once, on ``flush``
    (``s += piece`` on a string kept in a dict copies it every time: quadratic on long output)."""

    def __init__(self) -> None:
        self._open: dict[tuple[object, ...], tuple[JsonObject, str, list[str]]] = {}

    def add(self, key: tuple[object, ...], target: JsonObject, field: str, piece: str) -> None:
        entry = self._open.get(key)
        if entry is None or entry[0] is not target:
            start = target.get(field)
            entry = self._open[key] = (target, field, [start if isinstance(start, str) else ""])
        entry[2].append(piece)

    def flush(self) -> None:
        for target, name, parts in self._open.values():
            if len(parts) > 1:
                parts[:] = ["".join(parts)]
            target[name] = parts[0]

    def close(self, key: tuple[object, ...]) -> None:
        """Flush, then forget one string (a ``.done`` event states its final value)."""
        self.flush()
        self._open.pop(key, None)

    def drop(self, first: object) -> None:
        """Forget the strings whose key starts with ``first`` (their target was replaced)."""
        for key in [k for k in self._open if k[0] == first]:
            del self._open[key]


# -- server-sent events, incrementally ---------------------------------------------------

class SSEParser:
    """Split raw bytes into (event, data) pairs; chunk boundaries may fall anywhere.

    Follows the EventSource rules: ``\\n``, ``\\r\\n`` or ``\\r`` end a line, ``data:`` lines
    join with newlines, a blank line dispatches, ``:`` starts a comment. Never raises.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0         # bytes of the buffer known to hold no line end (long lines)
        self._event = ""
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        self._buffer += data      # a bytearray: appending is amortised O(1)
        while True:
            cut = _line_end(self._buffer, self._scanned)
            if cut is None:
                self._scanned = max(0, len(self._buffer) - 1)
                return out
            end, skip = cut
            line = self._buffer[:end].decode("utf-8", errors="replace")
            del self._buffer[:end + skip]
            self._scanned = 0
            self._line(line, out)

    def close(self) -> list[tuple[str, str]]:
        """The last event when the stream ended without its blank line."""
        out: list[tuple[str, str]] = []
        if self._buffer:
            self._line(self._buffer.decode("utf-8", errors="replace"), out)
            self._buffer = bytearray()
        self._line("", out)
        return out

    def _line(self, line: str, out: list) -> None:
        if not line:
            if self._data or self._event:
                out.append((self._event, "\n".join(self._data)))
            self._event, self._data = "", []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)


def _line_end(buffer: bytearray, start: int = 0) -> tuple[int, int] | None:
    n, r = buffer.find(b"\n", start), buffer.find(b"\r", start)
    if r == -1 and n == -1:
        return None
    if r == -1 or (n != -1 and n < r):
        return n, 1
    if r == len(buffer) - 1:
        return None        # a lone \r at the end: wait, it may be half of \r\n
    return (r, 2) if buffer[r + 1:r + 2] == b"\n" else (r, 1)


#: shape lines too short to be told apart from other text (``i18n.recorded`` reads back only
#: templates with words enough of their own): ``stream_note`` reads them back alone
SHORT_SHAPES = (N_("{kind} block {index}"), N_("{kind} item {item}"))


def stream_note(line: str) -> str:
    """A stream's note or shape line (English, as the transcript records it) in the chosen
    language: each a template of its own, its values as the stream carried them."""
    from agentdbg.i18n import Msg, recorded

    said = recorded(line, nested=True)
    if said != line:
        return said
    for template in SHORT_SHAPES:
        found = Msg.parse(template, line)
        if found is not None and not any(" " in v for v in found.values.values()):
            return found.tr()
    return line


def parse_event(data: str, notes: list[str]) -> JsonObject | None:
    """The JSON object an event carries, or None (with a note) for garbage."""
    try:
        value = loads_json(data, max_depth=None)
    except NestedTooDeeply:
        notes.append(N_("an event nested too deeply to read: {raw}").format(raw=repr(data[:60])))
        return None
    except ValueError:
        notes.append(N_("an event that is not JSON: {raw}").format(raw=repr(data[:60])))
        return None
    if not isinstance(value, dict):
        notes.append(N_("an event that is not a JSON object: {raw}").format(raw=repr(data[:60])))
        return None
    return value
