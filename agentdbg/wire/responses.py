"""The OpenAI Responses API (``POST /v1/responses``) seen as Chat Completions, and back.

``to_chat(body)`` turns ``instructions`` + ``input`` items into chat messages: message items
become system/developer/user/assistant messages; ``function_call`` items become ``tool_calls``
of one assistant message per run (``custom_tool_call`` as a chat custom call; ``computer_call``,
``local_shell_call``, ``shell_call``, ``apply_patch_call`` as a function call named after the
item type whose arguments are the item's payload); every ``*_output`` item becomes a ``tool``
message. Calls, call ids, arguments and outputs are carried unchanged. An ``agent_message``
item (Codex's agents writing to each other: ``author``, ``recipient``, a task or a final answer)
is a user message to the agent that receives it.

Not carried into the chat form, kept verbatim under ``"wire"`` and re-emitted by ``from_chat``:
``reasoning`` items (kept as markers before the items that followed them), ``compaction``,
``item_reference``, hosted-tool items (``web_search_call``, ``file_search_call``, ``mcp_*``,
``image_generation_call``, ``code_interpreter_call``, ``tool_search_*``, ``program*`` ...),
item ids (``fc_…``, ``msg_…``), ``status``, annotations and logprobs. Input parts other than
text and URL images (files, file-id images, audio) stay as ``{"type": "wire", "item": part}``.
Hosted tools go to ``ChatForm.native_tools``; other request fields to ``ChatForm.params``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentdbg.messages import VocabularyMap
from agentdbg.wire.common import (
    WIRE,
    ChatForm,
    as_dict,
    as_list,
    canonical,
    dumps,
    seal,
    strip_wire,
    text_of,
    wire_meta,
)

# call item type -> the output item type that answers it (paired by call_id)
CALL_OUTPUT = VocabularyMap({
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
})
OUTPUT_CALL = VocabularyMap({v: k for k, v in CALL_OUTPUT.items()})

#: a message one agent sends another (Codex): read as the receiver's user message
AGENT_MESSAGE = "agent_message"

CHAT_KEYS = ("input", "instructions", "tools", "tool_choice", "parallel_tool_calls")


# -- native -> chat -----------------------------------------------------------------------

def to_chat(body: dict | list) -> ChatForm:
    """The chat form of a Responses request body (or a bare ``input`` array)."""
    if isinstance(body, list):
        body = {"input": body}
    form = ChatForm(params={k: v for k, v in body.items() if k not in CHAT_KEYS})
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        _append(form, {"role": "system", "content": instructions,
                       WIRE: {"from": "instructions", "items": []}}, "instructions", ())
    elif instructions is not None:
        form.params["instructions"] = instructions
        form.notes.append("instructions given as a list of items are kept as a parameter")
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    _Walker(form).run(items if isinstance(items, list) else [])
    _tools_to_chat(body, form)
    _seal(form.messages)
    return form


class _Walker:
    """Walk ``input`` items once, building chat messages; ``merge``: one assistant message."""

    def __init__(self, form: ChatForm, merge: bool = False):
        self.form, self.merge = form, merge
        self.open: dict | None = None        # the assistant message being built
        self.pending: list = []              # marker items waiting for the next chat message

    def run(self, items: list) -> None:
        for i, item in enumerate(items):
            self.item(i, item if isinstance(item, dict) else {"type": None, "value": item})
        if self.pending and self.form.messages:
            wire_meta(self.form.messages[-1])["items"].extend(self.pending)  # type: ignore[union-attr]
        elif self.pending:
            self.form.notes.append(f"{len(self.pending)} item(s) with no chat message to carry them")

    def item(self, i: int, item: dict) -> None:
        kind = item.get("type")
        role = item.get("role")
        if kind in (None, "message") and role == "assistant":
            self.assistant_message(i, item)
        elif kind in (None, "message") and role is not None:
            self.close()
            self.add({"role": role, "content": content_to_chat(item.get("content"))}, i, item)
        elif kind == AGENT_MESSAGE:
            self.close()
            self.add({"role": "user", "content": content_to_chat(item.get("content"))}, i, item)
        elif kind in CALL_OUTPUT:
            self.call(i, item)
        elif kind in OUTPUT_CALL:
            self.close()
            msg = {"role": "tool", "tool_call_id": item.get("call_id"),
                   "content": content_to_chat(item.get("output"))}
            self.add(msg, i, item)
        elif self.open is not None:
            self.open[WIRE]["items"].append(item)   # reasoning, hosted-tool items: same turn
        else:
            self.pending.append(item)                # ... or carried by the next chat message

    def add(self, msg: dict, i: int, item: dict) -> None:
        msg[WIRE] = {"items": [*self.pending, item]}
        self.pending = []
        _append(self.form, msg, f"input[{i}]", (i,))

    def assistant_message(self, i: int, item: dict) -> None:
        if self.open is not None and not self.merge and (self.open["content"] is not None
                                                         or self.open.get("tool_calls")):
            self.close()
        msg = self.ensure(i)
        text, refusal = _assistant_text(item.get("content"))
        if text is not None:
            msg["content"] = text if msg["content"] is None else text_of(msg["content"]) + text
        if refusal is not None:
            msg["refusal"] = refusal
        msg[WIRE]["items"].append(item)

    def call(self, i: int, item: dict) -> None:
        msg = self.ensure(i)
        calls = msg.setdefault("tool_calls", [])
        self.form.call_locs[(len(self.form.messages) - 1, len(calls))] = (i,)
        calls.append(call_to_chat(item))
        msg[WIRE]["items"].append(item)

    def ensure(self, i: int) -> dict:
        if self.open is None:
            self.open = {"role": "assistant", "content": None, WIRE: {"items": self.pending}}
            self.pending = []
            _append(self.form, self.open, f"input[{i}]", (i,))
        return self.open

    def close(self) -> None:
        self.open = None


def _append(form: ChatForm, msg: dict, source: str, loc: tuple) -> None:
    form.messages.append(msg)
    form.sources.append(source)
    form.locs.append(loc)


def _seal(messages: list[dict]) -> None:
    """Remember what each converted message looked like, so ``from_chat`` can tell edits."""
    for m in messages:
        seal(m)


def call_to_chat(item: dict) -> dict:
    kind = item.get("type")
    if kind == "function_call":
        call = {"id": item.get("call_id"), "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
    elif kind == "custom_tool_call":
        call = {"id": item.get("call_id"), "type": "custom",
                "custom": {"name": item.get("name"), "input": item.get("input")}}
    else:
        payload = {k: v for k, v in item.items() if k not in ("type", "id", "call_id", "status")}
        call = {"id": item.get("call_id"), "type": "function",
                "function": {"name": kind, "arguments": dumps(payload)}}
    call[WIRE] = {"item": item}
    return call


def _assistant_text(content: Any) -> tuple[str | None, str | None]:
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        return None, None
    texts = [str(p["text"]) for p in content if isinstance(p, dict) and p.get("type") in
             ("output_text", "input_text", "text") and isinstance(p.get("text"), str)]
    refusals = [str(p["refusal"]) for p in content if isinstance(p, dict)
                and p.get("type") == "refusal" and isinstance(p.get("refusal"), str)]
    return ("".join(texts) if texts else None), ("".join(refusals) if refusals else None)


def content_to_chat(content: Any) -> Any:
    """Input content (or a tool output) as chat content; non-text parts are kept as markers."""
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            url = {"url": part["image_url"]}
            if part.get("detail"):
                url["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": url})
        else:
            parts.append({"type": "wire", "item": part})
    return parts


def _tools_to_chat(body: dict, form: ChatForm) -> None:
    tools = body.get("tools")
    for t in tools if isinstance(tools, list) else []:
        kind = t.get("type") if isinstance(t, dict) else None
        if kind == "function":
            fn = {k: t[k] for k in ("name", "description", "parameters", "strict") if k in t}
            form.tools.append({"type": "function", "function": fn, WIRE: {"tool": t}})
        elif kind == "custom":
            custom = {k: t[k] for k in ("name", "description", "format") if k in t}
            form.tools.append({"type": "custom", "custom": custom, WIRE: {"tool": t}})
        else:
            form.native_tools.append(t)
    if "tool_choice" in body:
        form.tool_choice = choice_to_chat(body["tool_choice"])
    if isinstance(body.get("parallel_tool_calls"), bool):
        form.parallel_tool_calls = body["parallel_tool_calls"]


def choice_to_chat(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function" and "name" in choice:
        return {"type": "function", "function": {"name": choice["name"]}}
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        tools = [{"type": "function", "function": {"name": t.get("name")}}
                 if isinstance(t, dict) and t.get("type") == "function" else t
                 for t in choice.get("tools") or []]
        return {"type": "allowed_tools",
                "allowed_tools": {"mode": choice.get("mode", "auto"), "tools": tools}}
    return choice


# -- chat -> native -----------------------------------------------------------------------

def from_chat(messages: list[dict], tools: list[dict] | None = None, tool_choice: Any = None,
              parallel_tool_calls: bool | None = None, *, params: dict | None = None,
              native_tools: list[dict] | None = None) -> dict:
    """A Responses request body from chat messages (+ tools …); ``params`` adds the other
    fields (model, store, reasoning …). Messages that came from ``to_chat`` and were not
    edited go back byte for byte; edited ones are rebuilt around their originals."""
    body: dict[str, Any] = dict(params or {})
    items: list = []
    kinds: dict[str, str] = {}       # chat call id -> native call item type
    for m in messages:
        if not isinstance(m, dict):
            continue
        wire = as_dict(m.get(WIRE))
        if wire.get("from") == "instructions":
            body["instructions"] = m.get("content")
            continue
        if m.get("role") == "assistant":
            items.extend(assistant_items(m))
            for call in m.get("tool_calls") or []:
                if isinstance(call, dict):
                    kinds[str(call.get("id"))] = _call_kind(call)
        elif _unchanged(m):
            items.extend(as_list(wire["items"]))
        else:
            items.extend(_rebuild(m, as_list(wire.get("items")), kinds))
    body["input"] = items
    all_tools = [tool_from_chat(t) for t in tools or []] + list(native_tools or [])
    if all_tools:
        body["tools"] = all_tools
    if tool_choice is not None:
        body["tool_choice"] = choice_from_chat(tool_choice)
    if parallel_tool_calls is not None:
        body["parallel_tool_calls"] = parallel_tool_calls
    return body


def _unchanged(m: dict) -> bool:
    wire = m.get(WIRE)
    return (isinstance(wire, dict) and isinstance(wire.get("items"), list)
            and wire.get("seen") == canonical(strip_wire(m)))


def _rebuild(m: dict, originals: list, kinds: dict) -> list:
    core = next((o for o in originals if _is_core(o, m)), None)
    out = [o for o in originals if o is not core]
    at = originals.index(core) if core is not None else len(out)
    out.insert(at, _message_item(m, core, kinds))
    return out


def _is_core(item: Any, m: dict) -> bool:
    if not isinstance(item, dict):
        return False
    if m.get("role") == "tool":
        return item.get("type") in OUTPUT_CALL
    return (item.get("type") in (None, "message") and "role" in item) or \
        (item.get("type") == AGENT_MESSAGE and m.get("role") == "user")


def _message_item(m: dict, orig: dict | None, kinds: dict) -> dict:
    base = dict(orig or {})
    if base.get("type") == AGENT_MESSAGE:
        base["content"] = content_from_chat(m.get("content"))
        return base
    if m.get("role") == "tool":
        call_kind = kinds.get(str(m.get("tool_call_id")), "function_call")
        base.setdefault("type", CALL_OUTPUT.get(call_kind, "function_call_output"))
        base["call_id"] = m.get("tool_call_id")
        base["output"] = content_from_chat(m.get("content"))
        return base
    base["role"] = m.get("role")
    base["content"] = content_from_chat(m.get("content"))
    return base


def content_from_chat(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            out.append({"type": "input_text", "text": part.get("text")})
        elif kind == "image_url":
            url = part.get("image_url") or {}
            out.append({"type": "input_image", "image_url": url.get("url"),
                        "detail": url.get("detail", "auto")})
        elif kind == "wire":
            out.append(part.get("item"))
        else:
            out.append(part)
    return out


def assistant_items(m: dict, new_id: Callable[[str, int], str] | None = None) -> list:
    """The native output items of a chat assistant message. ``new_id(kind, n)`` gives ids to
    items that have none (a built response); requests leave new items without ids."""
    if _unchanged(m):
        return list(m[WIRE]["items"])
    originals = (m.get(WIRE) or {}).get("items") or [] if isinstance(m.get(WIRE), dict) else []
    calls = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    used: set[int] = set()
    out: list = []
    text_done = m.get("content") is None and not m.get("refusal")
    for orig in originals:
        kind = orig.get("type") if isinstance(orig, dict) else None
        if kind in (None, "message"):
            if not text_done:
                out.append(_output_message(m, orig, new_id))
                text_done = True
        elif kind in CALL_OUTPUT:
            k = next((k for k, c in enumerate(calls) if k not in used
                      and (c.get(WIRE) or {}).get("item") == orig), None)
            if k is not None:
                used.add(k)
                out.append(_call_item(calls[k], new_id, k))
        else:
            out.append(orig)
    if not text_done:
        first_call = next((n for n, o in enumerate(out) if o.get("type") in CALL_OUTPUT), len(out))
        out.insert(first_call, _output_message(m, None, new_id))
    out.extend(_call_item(c, new_id, k) for k, c in enumerate(calls) if k not in used)
    return out


def _output_message(m: dict, orig: dict | None, new_id: Callable | None) -> dict:
    text, refusal = text_of(m.get("content")), m.get("refusal")
    if orig is None and new_id is None:
        return {"role": "assistant", "content": text}
    parts: list[dict] = []
    if m.get("content") is not None:
        parts.append({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
    if isinstance(refusal, str):
        parts.append({"type": "refusal", "refusal": refusal})
    item = dict(orig or {"id": new_id("msg_", 0) if new_id else None, "type": "message",
                         "status": "completed", "role": "assistant"})
    item["content"] = parts
    return item


def _native_call(call: dict) -> dict:
    wire = call.get(WIRE)
    orig = wire.get("item") if isinstance(wire, dict) else None
    return orig if isinstance(orig, dict) else {}


def _call_kind(call: dict) -> str:
    return (_native_call(call).get("type")
            or ("custom_tool_call" if call.get("type") == "custom" else "function_call"))


def _call_item(call: dict, new_id: Callable | None, n: int) -> dict:
    orig = _native_call(call)
    kind = _call_kind(call)
    if kind not in ("function_call", "custom_tool_call"):
        return orig                      # computer/shell/patch calls are not editable as chat
    item = dict(orig) if orig else {"type": kind}
    if not orig and new_id is not None:
        item = {"id": new_id("fc_" if kind == "function_call" else "ctc_", n), **item,
                "status": "completed"}
    item["call_id"] = call.get("id")
    if kind == "custom_tool_call":
        custom = call.get("custom") or {}
        item["name"], item["input"] = custom.get("name"), custom.get("input")
    else:
        fn = call.get("function") or {}
        item["name"], item["arguments"] = fn.get("name"), fn.get("arguments")
    return item


def tool_from_chat(tool: dict) -> dict:
    wire = tool.get(WIRE) if isinstance(tool, dict) else None
    if isinstance(wire, dict) and isinstance(wire.get("tool"), dict):
        orig = wire["tool"]
        inner = tool.get("function") or tool.get("custom") or {}
        return {**orig, **inner}
    if isinstance(tool, dict) and tool.get("type") == "custom":
        return {"type": "custom", **(tool.get("custom") or {})}
    fn = tool.get("function") if isinstance(tool, dict) else None
    return {"type": "function", **fn} if isinstance(fn, dict) else tool


def choice_from_chat(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "name": (choice.get("function") or {}).get("name")}
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        inner = choice.get("allowed_tools") or {}
        tools = [{"type": "function", "name": (t.get("function") or {}).get("name")}
                 if isinstance(t, dict) and t.get("type") == "function" else t
                 for t in inner.get("tools") or []]
        return {"type": "allowed_tools", "mode": inner.get("mode", "auto"), "tools": tools}
    return choice


