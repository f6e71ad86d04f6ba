"""The Anthropic Messages API (``POST /v1/messages``) seen as Chat Completions, and back.

``to_chat(body)``: the top-level ``system`` becomes a leading system message; an assistant
message becomes one chat assistant message (text blocks -> ``content``, ``tool_use`` blocks ->
``tool_calls`` whose ``arguments`` is the JSON text of ``input``); a user message is split in
order into chat messages: each ``tool_result`` block -> a ``tool`` message (``is_error: true``
kept as a key), each run of other blocks -> a user message. A ``role: "system"`` message inside
``messages`` stays a system message. Consecutive same-role messages are not combined (the API
combines them; the chat form keeps them apart so every message keeps its own location).

Not carried into the chat form, kept verbatim under ``"wire"`` and re-emitted by ``from_chat``:
``thinking`` / ``redacted_thinking`` blocks and signatures (the thinking text is also the chat
message's ``reasoning_content``, so it is shown and recorded), server tool blocks
(``server_tool_use``, ``*_tool_result``, ``mcp_*``), ``cache_control``, citations, ``is_error:
false``. Images become chat ``image_url`` parts (base64 as a data URL); documents, search results
and other blocks stay as ``{"type": "wire", "item": block}`` parts. Server tools go to
``ChatForm.native_tools``; ``max_tokens``, ``thinking`` and the other fields to ``ChatForm.params``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentdbg.wire.common import (
    WIRE,
    ChatForm,
    as_list,
    canonical,
    seal,
    strip_wire,
    text_of,
)

CHAT_KEYS = ("messages", "system", "tools", "tool_choice")
ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")


# -- native -> chat -----------------------------------------------------------------------

def to_chat(body: dict | list) -> ChatForm:
    """The chat form of a Messages request body (or a bare ``messages`` array)."""
    if isinstance(body, list):
        body = {"messages": body}
    form = ChatForm(params={k: v for k, v in body.items() if k not in CHAT_KEYS})
    if "system" in body:
        system = body["system"]
        content = system if isinstance(system, str) else _parts(system)
        _add(form, {"role": "system", "content": content,
                    WIRE: {"from": "system", "system": system}}, "system", ())
    messages = body.get("messages")
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        _message(form, i, m if isinstance(m, dict) else {})
    _tools_to_chat(body, form)
    for m in form.messages:
        seal(m)
    return form


def _add(form: ChatForm, msg: dict, source: str, loc: tuple) -> None:
    form.messages.append(msg)
    form.sources.append(source)
    form.locs.append(loc)


def _message(form: ChatForm, i: int, m: dict) -> None:
    role, content = m.get("role"), m.get("content")
    extra = {k: v for k, v in m.items() if k not in ("role", "content")}
    if role == "assistant":
        _assistant(form, i, content, extra)
    elif not isinstance(content, list) or role == "system":
        chat_content = content if not isinstance(content, list) else _parts(content)
        _add(form, {"role": role, "content": chat_content,
                    WIRE: {"msg": i, "content": content, "extra": extra}},
             f"messages[{i}].content", (i,))
    else:
        _user_blocks(form, i, content, extra)


def _assistant(form: ChatForm, i: int, content: Any, extra: dict) -> None:
    msg: dict[str, Any] = {"role": "assistant", "content": None if isinstance(content, list)
                           else content}
    msg[WIRE] = {"msg": i, "content": content, "extra": extra}
    _add(form, msg, f"messages[{i}].content", (i,))
    if not isinstance(content, list):
        return
    thoughts = [b["thinking"] for b in content if isinstance(b, dict) and b.get("type") == "thinking"
                and isinstance(b.get("thinking"), str) and b["thinking"]]
    if thoughts:   # shown and recorded as the chat form's reasoning; the block goes back as it came
        msg["reasoning_content"] = "\n\n".join(thoughts)
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if texts:
        msg["content"] = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
    calls = [(j, b) for j, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "tool_use"]
    for k, (j, _) in enumerate(calls):
        form.call_locs[(len(form.messages) - 1, k)] = (i, j)
    if calls:
        msg["tool_calls"] = [call_to_chat(b) for _, b in calls]


def call_to_chat(block: dict) -> dict:
    args = block.get("input")
    text = json.dumps(args, ensure_ascii=False) if "input" in block else None
    return {"id": block.get("id"), "type": "function",
            "function": {"name": block.get("name"), "arguments": text}, WIRE: {"block": block}}


def _user_blocks(form: ChatForm, i: int, content: list, extra: dict) -> None:
    run: list[tuple[int, Any]] = []

    def flush() -> None:
        if run:
            blocks = [b for _, b in run]
            _add(form, {"role": "user", "content": _parts(blocks),
                        WIRE: {"msg": i, "blocks": blocks, "extra": extra}},
                 f"messages[{i}].content[{run[0][0]}]", (i, run[0][0]))
            run.clear()

    for j, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            flush()
            msg = {"role": "tool", "tool_call_id": block.get("tool_use_id"),
                   "content": _result_content(block)}
            if block.get("is_error") is True:
                msg["is_error"] = True
            msg[WIRE] = {"msg": i, "blocks": [block], "extra": extra}
            _add(form, msg, f"messages[{i}].content[{j}]", (i, j))
        else:
            run.append((j, block))
    flush()
    if not content:
        _add(form, {"role": "user", "content": [], WIRE: {"msg": i, "blocks": [], "extra": extra}},
             f"messages[{i}].content", (i,))


def _result_content(block: dict) -> Any:
    if "content" not in block:
        return ""
    content = block["content"]
    return _parts(content) if isinstance(content, list) else content


def _parts(blocks: Any) -> Any:
    """Content blocks as chat content: one text block -> its string, else a list of parts."""
    if not isinstance(blocks, list):
        return blocks
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].get("type") == "text" \
            and isinstance(blocks[0].get("text"), str):
        return blocks[0]["text"]
    out = []
    for b in blocks:
        kind = b.get("type") if isinstance(b, dict) else None
        source = b.get("source") if isinstance(b, dict) else None
        if kind == "text" and isinstance(b.get("text"), str):
            out.append({"type": "text", "text": b["text"]})
        elif kind == "image" and isinstance(source, dict) and source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
            out.append({"type": "image_url", "image_url": {"url": url}})
        elif kind == "image" and isinstance(source, dict) and source.get("type") == "url":
            out.append({"type": "image_url", "image_url": {"url": source.get("url")}})
        else:
            out.append({"type": "wire", "item": b})
    return out


def _tools_to_chat(body: dict, form: ChatForm) -> None:
    tools = body.get("tools")
    for t in tools if isinstance(tools, list) else []:
        if isinstance(t, dict) and t.get("type") in (None, "custom"):
            fn = {"name": t.get("name")}
            if "description" in t:
                fn["description"] = t["description"]
            if "input_schema" in t:
                fn["parameters"] = t["input_schema"]
            form.tools.append({"type": "function", "function": fn, WIRE: {"tool": t}})
        else:
            form.native_tools.append(t)
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        kind = choice.get("type")
        mapped = {"auto": "auto", "any": "required", "none": "none"}
        form.tool_choice = ({"type": "function", "function": {"name": choice.get("name")}}
                            if kind == "tool" else mapped.get(str(kind), choice))
        if isinstance(choice.get("disable_parallel_tool_use"), bool):
            form.parallel_tool_calls = not choice["disable_parallel_tool_use"]
    elif "tool_choice" in body:
        form.tool_choice = choice


# -- chat -> native -----------------------------------------------------------------------

def from_chat(messages: list[dict], tools: list[dict] | None = None, tool_choice: Any = None,
              parallel_tool_calls: bool | None = None, *, params: dict | None = None,
              native_tools: list[dict] | None = None) -> dict:
    """A Messages request body from chat messages (+ tools …); ``params`` adds ``model``,
    ``max_tokens`` and the rest. Leading system messages become ``system``; consecutive tool
    messages become one user message of ``tool_result`` blocks (a user message right after new
    results joins it, after them). Unedited messages from ``to_chat`` go back unchanged."""
    body: dict[str, Any] = dict(params or {})
    out: list[dict] = []
    systems: list[Any] = []
    group: list[dict] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        if group and not _joins(group, m):
            out.append(_user_message(group))
            group = []
        role, wire = m.get("role"), _wire(m)
        if wire.get("from") == "system":
            body["system"] = wire["system"] if _unchanged(m) else m.get("content")
        elif role in ("system", "developer") and not out and "msg" not in wire:
            systems.append(text_of(m.get("content")))
        elif role == "assistant":
            out.append({"role": "assistant", "content": assistant_blocks(m), **wire.get("extra", {})})
        elif role in ("user", "tool"):
            group.append(m)
        else:                                    # a system message inside messages
            content = wire.get("content") if _unchanged(m) else content_from_chat(m.get("content"))
            role = "system" if role == "developer" else role
            out.append({"role": role, "content": content, **wire.get("extra", {})})
    if group:
        out.append(_user_message(group))
    if systems and "system" not in body:
        body["system"] = "\n\n".join(systems)
    body["messages"] = out
    all_tools = [tool_from_chat(t) for t in tools or []] + list(native_tools or [])
    if all_tools:
        body["tools"] = all_tools
    choice = choice_from_chat(tool_choice, parallel_tool_calls)
    if choice is not None:
        body["tool_choice"] = choice
    return body


def _wire(m: dict) -> dict:
    wire = m.get(WIRE)
    return wire if isinstance(wire, dict) else {}


def _unchanged(m: dict) -> bool:
    wire = _wire(m)
    return "seen" in wire and wire["seen"] == canonical(strip_wire(m))


def _joins(group: list[dict], m: dict) -> bool:
    """Does chat message ``m`` belong to the same native user message as ``group``?"""
    if m.get("role") not in ("user", "tool"):
        return False
    first, mine = _wire(group[0]).get("msg"), _wire(m).get("msg")
    if first is not None or mine is not None:
        return first == mine
    return group[-1].get("role") == "tool"       # new results, then (optionally) new text


def _user_message(group: list[dict]) -> dict:
    wire, first = _wire(group[0]), group[0]
    if len(group) == 1 and first.get("role") == "user" and "blocks" not in wire:
        content = wire["content"] if _unchanged(first) else content_from_chat(first.get("content"))
        return {"role": "user", "content": content, **wire.get("extra", {})}
    blocks: list = []
    for m in group:
        blocks.extend(_wire(m)["blocks"] if _unchanged(m) else _blocks_from_chat(m))
    return {"role": "user", "content": blocks, **wire.get("extra", {})}


def _blocks_from_chat(m: dict) -> list:
    orig = (_wire(m).get("blocks") or [None])[0]
    content = m.get("content")
    if m.get("role") != "tool":
        return [{"type": "text", "text": content}] if isinstance(content, str) \
            else content_from_chat(content)
    block = dict(orig) if isinstance(orig, dict) and orig.get("type") == "tool_result" \
        else {"type": "tool_result"}
    block["tool_use_id"] = m.get("tool_call_id")
    block.pop("content", None)
    if content != "":
        block["content"] = content_from_chat(content)
    if m.get("is_error") is True:
        block["is_error"] = True
    elif block.get("is_error") is True:
        del block["is_error"]
    return [block]


def content_from_chat(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            out.append({"type": "text", "text": part.get("text")})
        elif kind == "image_url":
            out.append(_image_block(str((part.get("image_url") or {}).get("url"))))
        elif kind == "wire":
            out.append(part.get("item"))
        else:
            out.append(part)
    return out


def _image_block(url: str) -> dict:
    match = re.match(r"^data:([^;,]+);base64,(.*)$", url, re.S)
    if match:
        return {"type": "image", "source": {"type": "base64", "media_type": match.group(1),
                                            "data": match.group(2)}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def assistant_blocks(m: dict, new_id: Any = None) -> Any:
    """The content of a chat assistant message as Anthropic blocks. ``new_id(n)`` gives
    ``tool_use`` ids to calls whose id the API would reject (a built response)."""
    wire = _wire(m)
    if _unchanged(m):
        return wire.get("content")
    orig = as_list(wire.get("content"))
    calls = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    texts = _text_blocks(m.get("content"), bool(calls))
    used: set[int] = set()
    out: list = []
    for block in orig:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            out.extend(texts)
            texts = []
        elif kind == "tool_use":
            k = next((k for k, c in enumerate(calls) if k not in used
                      and (c.get(WIRE) or {}).get("block") == block), None)
            if k is not None:
                used.add(k)
                out.append(_tool_use(calls[k], new_id, k))
        else:
            out.append(block)
    first_call = next((n for n, b in enumerate(out) if b.get("type") == "tool_use"), len(out))
    out[first_call:first_call] = texts
    out.extend(_tool_use(c, new_id, k) for k, c in enumerate(calls) if k not in used)
    if not calls and isinstance(m.get("content"), str) and not isinstance(wire.get("content"), list):
        return m["content"]              # a string content stays a string
    return out


def _text_blocks(content: Any, has_calls: bool) -> list[dict]:
    if isinstance(content, list):
        return [{"type": "text", "text": p.get("text")} for p in content
                if isinstance(p, dict) and p.get("type") == "text"]
    if content is None or (content == "" and has_calls):
        return []
    return [{"type": "text", "text": content}]


def _tool_use(call: dict, new_id: Any, n: int) -> dict:
    orig = (call.get(WIRE) or {}).get("block")
    block = dict(orig) if isinstance(orig, dict) else {"type": "tool_use"}
    cid = call.get("id")
    if new_id is not None and not (isinstance(cid, str) and ID_RE.match(cid)):
        cid = new_id(n)
    fn = call.get("function") or {}
    args = fn.get("arguments")
    try:
        value = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        value = args                     # not JSON: carried as is (the checker reports it)
    if new_id is not None and not isinstance(value, dict):
        value = {}
    block.update({"id": cid, "name": fn.get("name"), "input": value})
    return block


def tool_from_chat(tool: dict) -> dict:
    wire = tool.get(WIRE) if isinstance(tool, dict) else None
    fn = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(fn, dict):
        return tool
    orig = dict(wire["tool"]) if isinstance(wire, dict) and isinstance(wire.get("tool"), dict) else {}
    out = {**orig, "name": fn.get("name")}
    if "description" in fn:
        out["description"] = fn["description"]
    if fn.get("parameters") is not None:
        out["input_schema"] = fn["parameters"]
    elif not orig:
        out["input_schema"] = {"type": "object", "properties": {}}
    return out


def choice_from_chat(choice: Any, parallel: bool | None = None) -> Any:
    if choice is None and parallel is None:
        return None
    if isinstance(choice, dict) and choice.get("type") == "function":
        out: dict[str, Any] = {"type": "tool", "name": (choice.get("function") or {}).get("name")}
    elif choice in (None, "auto", "required", "none"):
        out = {"type": {"required": "any", "none": "none"}.get(choice, "auto")}
    else:
        return choice
    if parallel is not None:
        out["disable_parallel_tool_use"] = not parallel
    return out


