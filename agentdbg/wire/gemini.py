"""The Gemini API (``models/{model}:generateContent``) seen as Chat Completions, and back.

``to_chat(body)``: ``systemInstruction`` becomes a leading system message; a ``model`` content
becomes one assistant message (text parts -> ``content``, ``thought: true`` parts ->
``reasoning_content``, ``functionCall`` parts -> ``tool_calls`` whose ``arguments`` is the JSON
text of ``args``); a ``user`` content is split in order into ``tool`` messages (one per
``functionResponse`` part) and user messages (runs of other parts). Gemini pairs a response
with a call by position within the turns, not by id: a call without an ``id`` gets
``call_{content}_{part}``, and the k-th response of a turn the id of the k-th call of the
model turn before it.

Kept verbatim under ``"wire"`` and re-emitted by ``from_chat``: ``thoughtSignature`` and every
other field of a part, the parts themselves when unedited. The wire JSON is camelCase; the
snake_case the API also accepts (``function_call``, ``thought_signature``) is read too.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from agentdbg.wire.common import WIRE, ChatForm, as_dict, as_list, canonical, seal, strip_wire, text_of

if TYPE_CHECKING:
    from agentdbg.conversation import JsonObject

CHAT_KEYS = ("contents", "systemInstruction", "system_instruction", "tools", "toolConfig",
             "tool_config")
SNAKE = re.compile(r"(?<!^)(?=[A-Z])")


def field(d: Any, name: str) -> Any:
    """``d[name]`` in camelCase, else in snake_case (both are the API's JSON)."""
    if not isinstance(d, dict):
        return None
    return d[name] if name in d else d.get(SNAKE.sub("_", name).lower())


def call_id(i: int, j: int, part: Any) -> str:
    """A call's id: its own ``id`` when it has one, else one from where it stands."""
    fn = as_dict(field(part, "functionCall"))
    own = fn.get("id")
    return own if isinstance(own, str) and own else f"call_{i}_{j}"


# -- native -> chat -----------------------------------------------------------------------

def to_chat(body: dict | list) -> ChatForm:
    """The chat form of a generateContent body (or a bare ``contents`` array)."""
    if isinstance(body, list):
        body = {"contents": body}
    form = ChatForm(params={k: v for k, v in body.items() if k not in CHAT_KEYS})
    system = field(body, "systemInstruction")
    if system is not None:
        _add(form, {"role": "system", "content": text_of(as_dict(system).get("parts")),
                    WIRE: {"from": "system", "system": system}}, "systemInstruction", ())
    pending: list[str] = []            # ids of the calls of the last model turn, in order
    for i, content in enumerate(as_list(field(body, "contents"))):
        content = as_dict(content)
        if content.get("role") == "model":
            pending = _model(form, i, content)
        else:
            _user(form, i, content, pending)
            pending = []
    _tools_to_chat(body, form)
    for m in form.messages:
        seal(m)
    return form


def _add(form: ChatForm, msg: dict, source: str, loc: tuple) -> None:
    form.messages.append(msg)
    form.sources.append(source)
    form.locs.append(loc)


def _model(form: ChatForm, i: int, content: dict) -> list[str]:
    parts = as_list(content.get("parts"))
    msg: dict[str, Any] = {"role": "assistant", "content": None,
                           WIRE: {"content": content}}
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
             and not p.get("thought")]
    thoughts = [str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
                and p.get("thought")]
    if thoughts:
        msg["reasoning_content"] = "".join(thoughts)
    if texts:
        msg["content"] = "".join(texts)
    calls: list[dict] = []
    ids: list[str] = []
    for j, part in enumerate(parts):
        fn = field(part, "functionCall")
        if not isinstance(fn, dict):
            continue
        cid = call_id(i, j, part)
        form.call_locs[(len(form.messages), len(calls))] = (i, j)
        args = fn.get("args")
        calls.append({"id": cid, "type": "function",
                      "function": {"name": fn.get("name"),
                                   "arguments": json.dumps(args if args is not None else {},
                                                           ensure_ascii=False)},
                      WIRE: {"part": part}})
        ids.append(cid)
    if calls:
        msg["tool_calls"] = calls
    _add(form, msg, f"contents[{i}]", (i,))
    return ids


def _user(form: ChatForm, i: int, content: dict, pending: list[str]) -> None:
    run: list[tuple[int, Any]] = []
    answered = 0

    def flush() -> None:
        if run:
            parts = [p for _, p in run]
            _add(form, {"role": "user", "content": _text(parts),
                        WIRE: {"content": content, "parts": parts}},
                 f"contents[{i}].parts[{run[0][0]}]", (i, run[0][0]))
            run.clear()

    parts = as_list(content.get("parts"))
    for j, part in enumerate(parts):
        fr = field(part, "functionResponse")
        if isinstance(fr, dict):
            flush()
            tid = pending[answered] if answered < len(pending) else \
                (fr.get("id") if isinstance(fr.get("id"), str) else f"response_{i}_{j}")
            answered += 1
            msg = {"role": "tool", "tool_call_id": tid, "content": _response_text(fr.get("response"))}
            msg[WIRE] = {"content": content, "parts": [part]}
            _add(form, msg, f"contents[{i}].parts[{j}]", (i, j))
        else:
            run.append((j, part))
    flush()
    if not parts:
        _add(form, {"role": "user", "content": "", WIRE: {"content": content, "parts": []}},
             f"contents[{i}]", (i,))


def _text(parts: list) -> Any:
    texts = [p.get("text") for p in parts if isinstance(p, dict)]
    if all(isinstance(t, str) for t in texts):
        return "".join(str(t) for t in texts)
    return [{"type": "text", "text": p["text"]} if isinstance(p, dict) and isinstance(p.get("text"), str)
            else {"type": "wire", "item": p} for p in parts]


def _response_text(response: Any) -> str:
    """A function response as the tool's text: ``{"result": text}`` (the SDK's shape) gives
    the text, any other object its JSON."""
    if isinstance(response, dict) and set(response) == {"result"} and isinstance(response["result"], str):
        return response["result"]
    return json.dumps(response, ensure_ascii=False)


def _tools_to_chat(body: dict, form: ChatForm) -> None:
    for t in as_list(body.get("tools")):
        declarations = field(t, "functionDeclarations")
        if not isinstance(declarations, list):
            form.native_tools.append(as_dict(t))
            continue
        for d in declarations:
            d = as_dict(d)
            fn: JsonObject = {k: d[k] for k in ("name", "description") if k in d}
            schema = field(d, "parametersJsonSchema") or d.get("parameters")
            if schema is not None:
                fn["parameters"] = schema
            form.tools.append({"type": "function", "function": fn, WIRE: {"declaration": d}})
    config = as_dict(field(as_dict(field(body, "toolConfig")), "functionCallingConfig"))
    mode = config.get("mode")
    if mode is not None:
        names = config.get(SNAKE.sub("_", "allowedFunctionNames").lower()) or \
            config.get("allowedFunctionNames")
        form.tool_choice = ({"type": "function", "function": {"name": names[0]}}
                            if mode == "ANY" and isinstance(names, list) and len(names) == 1
                            else {"AUTO": "auto", "ANY": "required", "NONE": "none"}.get(str(mode), mode))


# -- chat -> native -----------------------------------------------------------------------

def from_chat(messages: list[dict], tools: list[dict] | None = None, tool_choice: Any = None,
              parallel_tool_calls: bool | None = None, *, params: dict | None = None) -> dict:
    """A generateContent body from chat messages; unedited messages from ``to_chat`` go back
    as they came (signatures included). Consecutive tool messages become one user content of
    ``functionResponse`` parts, named after the calls they answer."""
    body: dict[str, Any] = dict(params or {})
    contents: list[dict] = []
    origins: list[Any] = []            # the native content each of ``contents`` came from
    names: dict[str, Any] = {}
    systems: list[str] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        wire, role = as_dict(m.get(WIRE)), m.get("role")
        if wire.get("from") == "system":
            body["systemInstruction"] = wire["system"] if _unchanged(m) else \
                {"parts": [{"text": text_of(m.get("content"))}]}
        elif role in ("system", "developer"):
            systems.append(text_of(m.get("content")))
        elif role == "assistant":
            for call in m.get("tool_calls") or []:
                if isinstance(call, dict):
                    names[str(call.get("id"))] = as_dict(call.get("function")).get("name")
            contents.append(as_dict(wire["content"]) if _unchanged(m) else _model_content(m))
            origins.append(wire.get("content"))
        else:
            parts = as_list(wire["parts"]) if _unchanged(m) and "parts" in wire else _parts(m, names)
            origin = wire.get("content")
            if origin is not None:     # parts of one native content go back into one
                same = bool(origins) and origins[-1] is origin
            else:                      # new results join the response turn before them
                same = bool(contents) and role == "tool" and contents[-1].get("role") == "user" \
                    and _joins(contents[-1])
            if same:
                contents[-1] = {**contents[-1], "parts": [*contents[-1]["parts"], *parts]}
            else:
                contents.append({**(origin if isinstance(origin, dict) else {"role": "user"}),
                                 "parts": list(parts)})
                origins.append(origin)
    if systems and "systemInstruction" not in body:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(systems)}]}
    body["contents"] = contents
    declarations = [tool_from_chat(t) for t in tools or []]
    if declarations:
        body["tools"] = [{"functionDeclarations": declarations}]
    config = _choice(tool_choice)
    if config is not None:
        body["toolConfig"] = {"functionCallingConfig": config}
    return body


def _unchanged(m: dict) -> bool:
    wire = as_dict(m.get(WIRE))
    return "seen" in wire and wire["seen"] == canonical(strip_wire(m))


def _joins(content: dict) -> bool:
    """A user content ending in function responses takes the next ones (one turn)."""
    parts = as_list(content.get("parts"))
    return bool(parts) and isinstance(field(parts[-1], "functionResponse"), dict)


def _parts(m: dict, names: dict[str, Any]) -> list[dict]:
    if m.get("role") == "tool":
        tid = m.get("tool_call_id")
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(strip_wire(content),
                                                                    ensure_ascii=False)
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        response = value if isinstance(value, dict) else {"result": text}
        orig = as_list(as_dict(m.get(WIRE)).get("parts"))
        part = dict(orig[0]) if orig and isinstance(orig[0], dict) else {}
        part["functionResponse"] = {**as_dict(field(part, "functionResponse")),
                                    "name": names.get(str(tid)), "response": response}
        return [part]
    content = m.get("content")
    if isinstance(content, list):
        return [p["item"] if isinstance(p, dict) and p.get("type") == "wire" else
                {"text": as_dict(p).get("text")} for p in content]
    return [{"text": content if isinstance(content, str) else ""}]


def _model_content(m: dict) -> dict:
    parts: list[dict] = []
    if isinstance(m.get("reasoning_content"), str) and m["reasoning_content"]:
        parts.append({"text": m["reasoning_content"], "thought": True})
    text = text_of(m.get("content"))
    if text:
        parts.append({"text": text})
    for call in m.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        orig = as_dict(as_dict(call.get(WIRE)).get("part"))
        fn = as_dict(call.get("function"))
        raw = fn.get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = raw
        part = {k: v for k, v in orig.items() if k not in ("functionCall", "function_call")}
        own = as_dict(field(orig, "functionCall"))
        call_fn: dict[str, Any] = {"name": fn.get("name"), "args": args}
        if "id" in own:
            call_fn["id"] = own["id"]
        parts.insert(len(parts), {"functionCall": call_fn, **part})
    return {"role": "model", "parts": parts}


def tool_from_chat(tool: dict) -> dict:
    wire = as_dict(tool.get(WIRE)) if isinstance(tool, dict) else {}
    fn = as_dict(tool.get("function")) if isinstance(tool, dict) else {}
    out = dict(as_dict(wire.get("declaration")))
    out["name"] = fn.get("name")
    if "description" in fn:
        out["description"] = fn["description"]
    if fn.get("parameters") is not None and "parameters" not in out and "parametersJsonSchema" not in out:
        out["parametersJsonSchema"] = fn["parameters"]
    return out


def _choice(choice: Any) -> dict | None:
    if choice is None:
        return None
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"mode": "ANY", "allowedFunctionNames": [as_dict(choice.get("function")).get("name")]}
    return {"mode": {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(str(choice), "AUTO")}
