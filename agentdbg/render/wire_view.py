"""The messages view for the Responses API and the Anthropic Messages API.

The same grid, labels, marks and findings as the Chat Completions view (``render.view``),
drawn on the format's own items and blocks: a Responses request is one row per ``input``
item (``function_call`` → A … ✓ answered at [6]; ``function_call_output`` ← A … ✓ answers
[5]); an Anthropic request is one row per message, with its content blocks inside
(``tool_use`` → A … ✓ answered at [4].content[0]). Pairing comes from the ``WirePairing``
the checker judged on; nothing here pairs anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from agentdbg.messages import json_kind, shown_json
from agentdbg.render.safe import safe
from agentdbg.render.view import (
    ROLE_STYLE,
    findings_by_index,
    fold,
    label_style,
    message_grid,
    pretty_arguments,
    render_finding,
)
from agentdbg.wire.common import text_of
from agentdbg.wire.gemini import field as gemini_field
from agentdbg.wire.pairing import Pairing as WirePairing
from agentdbg.wire.responses import AGENT_MESSAGE, CALL_OUTPUT, OUTPUT_CALL

Loc = tuple[int, ...]
RESULT_TEXT = {
    "responses": {"orphan": "✗ orphan: no call in this request has this call_id",
                  "mismatch": "✗ call_id of a call of another kind",
                  "missing_id": "✗ no call_id"},
    "anthropic": {"orphan": "✗ orphan: no tool_use with this id in the assistant message before it",
                  "mismatch": "✗ tool_use_id not among the previous assistant message's tool_use ids",
                  "missing_id": "✗ no tool_use_id"},
    "gemini": {"orphan": "✗ orphan: no function call in the model turn before it answers to it"},
}
PART_WORD = {"anthropic": "content", "gemini": "parts"}
KIND_STYLE = {"function_call": "cyan", "custom_tool_call": "cyan", "reasoning": "dim cyan",
              "function_call_output": "yellow", "custom_tool_call_output": "yellow"}


def where(fmt: str, loc: Loc) -> str:
    """How the view names a location: ``[6]`` (an input item), ``[4].content[0]`` (a block)."""
    if fmt in PART_WORD and len(loc) > 1:
        return f"[{loc[0]}].{PART_WORD[fmt]}[{loc[1]}]"
    return f"[{loc[0]}]"


class _Draw:
    """Pairing marks for one rendering: calls, results, and what is still pending."""

    def __init__(self, fmt: str, pairing: WirePairing, start: int, in_progress: bool):
        self.fmt, self.p = fmt, pairing
        self.pending_from = start if in_progress else None
        self.seen_ids: set[str] = set()

    def name_of(self, call: Loc | None, items: list) -> str | None:
        block = _at(self.fmt, items, call) if call is not None else None
        name = block.get("name") if isinstance(block, dict) else None
        return name if isinstance(name, str) else None

    def call_head(self, loc: Loc, block: dict, name: Any) -> Text:
        cid = self.p.calls.get(loc)
        label = self.p.label(cid)
        head = Text("→ ")
        head.append(f"{label} " if label else "? ", style=label_style(label) if label else "red")
        head.append(safe(cid) if cid else "(no id)", style="" if label else "red")
        head.append("  ")
        head.append(safe(name if isinstance(name, str) and name else "(no name)"), style="bold")
        head.append(*self.call_status(loc, cid))
        if cid:
            self.seen_ids.add(cid)
        return head

    def call_status(self, loc: Loc, cid: str | None) -> tuple[str, str]:
        if cid and cid in self.seen_ids:
            return "   ✗ same id as a call above", "red"
        answer = self.p.answer_of.get(loc)
        if answer is not None:
            return f"   ✓ answered at {where(self.fmt, answer)}", "green"
        if self.pending_from is not None and loc[0] >= self.pending_from:
            return "   … pending execution", "yellow"
        return "   ✗ unanswered", "red"

    def result_head(self, loc: Loc, items: list) -> Text:
        tid = self.p.results.get(loc)
        status = self.p.status.get(loc, "orphan")
        call = self.p.call_of.get(loc)
        label = self.p.label(tid) if status == "ok" else None
        head = Text("← ")
        head.append(f"{label} " if label else "? ", style=label_style(label) if label else "red")
        head.append(safe(tid) if tid else "(no id)")
        name = self.name_of(call, items) if status == "ok" else None
        if name:
            head.append(f"  {safe(name)}", style="bold")
        if status == "ok" and call is not None:
            head.append(f"   ✓ answers {where(self.fmt, call)}", style="green")
        elif status == "duplicate":
            head.append("   ✗ second answer to the same call", style="bold red")
        elif status == "external":
            head.append("   … answers a call held in the stored response", style="yellow")
        else:
            head.append(f"   {RESULT_TEXT[self.fmt].get(status, '✗ ' + status)}", style="bold red")
        return head


def _at(fmt: str, items: list, loc: Loc) -> Any:
    item = items[loc[0]] if 0 <= loc[0] < len(items) else None
    if fmt in PART_WORD and len(loc) > 1 and isinstance(item, dict):
        content = item.get(PART_WORD[fmt])
        part = content[loc[1]] if isinstance(content, list) and loc[1] < len(content) else None
        call = gemini_field(part, "functionCall")       # a Gemini part holds its call
        return call if isinstance(call, dict) else part
    return item


def _compact(value: Any, full: bool) -> Text:
    return fold(shown_json(value), full, 300)


def _output_text(value: Any, full: bool) -> Text:
    if isinstance(value, str):
        return fold(value, full) if value else Text('""', style="dim")
    if isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str)
                                       for p in value):
        return fold(text_of(value), full)
    return Text(safe(shown_json(value))[:300] +
                f"   ({json_kind(value)})", style="red")


# -- Responses ----------------------------------------------------------------------------

def _responses_item(i: int, item: dict, items: list, d: _Draw, full: bool) -> list[RenderableType]:
    kind = item.get("type")
    if kind in CALL_OUTPUT:
        body: list[RenderableType] = [d.call_head((i,), item, item.get("name") or kind)]
        if kind == "function_call":
            args = pretty_arguments(item["arguments"]) if "arguments" in item else \
                Text("(no arguments)", style="red")
        else:
            args = _compact(item.get("input") if kind == "custom_tool_call" else
                            {k: v for k, v in item.items() if k not in ("type", "id", "call_id")}, full)
        args.pad_left(4)
        return [*body, args]
    if kind in OUTPUT_CALL:
        return [d.result_head((i,), items), _output_text(item.get("output"), full)]
    if kind == "reasoning":
        summary = text_of(item.get("summary"))
        line = Text(safe(str(item.get("id") or "(no id)")), style="dim")
        if "encrypted_content" in item:
            line.append("  (encrypted_content)", style="dim")
        return [line, *([fold(summary, full, 200)] if summary else [])]
    if kind in (None, "message"):
        content = item.get("content")
        return [fold(text_of(content), full) if isinstance(content, (str, list)) else
                Text(safe(shown_json(content)), style="red")]
    if kind == AGENT_MESSAGE and isinstance(item.get("content"), list):
        return _agent_message(item, full)
    return [_compact(item, full)]


def _agent_message(item: dict, full: bool) -> list[RenderableType]:
    """One agent's message to another (Codex): who to whom, its text, and a mark where a part
    is encrypted (the model reads it; nobody else can)."""
    def who(value: object) -> str:
        return value if isinstance(value, str) else shown_json(value)
    line = Text(safe(f"{who(item.get('author'))} → {who(item.get('recipient'))}"), style="dim")
    if any(isinstance(p, dict) and p.get("type") == "encrypted_content" for p in item["content"]):
        line.append("  (encrypted_content)", style="dim")
    return [line, fold(text_of(item["content"]), full)]


def _responses_rows(body: dict) -> list[tuple[str | None, str, Any]]:
    """(index text, kind, item) per row: instructions first, then the input items."""
    rows: list[tuple[str | None, str, Any]] = []
    if isinstance(body.get("instructions"), str):
        rows.append((None, "instructions", {"role": "system", "content": body["instructions"]}))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for i, item in enumerate(items if isinstance(items, list) else []):
        item = item if isinstance(item, dict) else {"type": None, "value": item}
        kind = item.get("type")
        label = item.get("role") if kind in (None, "message") else kind
        rows.append((str(i), str(label), item))
    return rows


def _responses_summary(i: int, item: dict, items: list, d: _Draw) -> Text:
    kind = item.get("type")
    if kind in CALL_OUTPUT:
        return d.call_head((i,), item, item.get("name") or kind)
    if kind in OUTPUT_CALL:
        return d.result_head((i,), items)
    text = " ".join(text_of(item.get("content") or item.get("summary")).split())
    return Text(safe(text if len(text) <= 60 else text[:59] + "…"), style="dim")


# -- Anthropic ----------------------------------------------------------------------------

def _anthropic_message(i: int, m: dict, items: list, d: _Draw, full: bool) -> list[RenderableType]:
    content = m.get("content")
    if isinstance(content, str):
        return [fold(content, full) if content else Text('content: ""', style="dim")]
    if not isinstance(content, list):
        return [Text("(no content)" if content is None else
                     safe(shown_json(content)) + "   (not text or blocks)",
                     style="red")]
    out: list[RenderableType] = []
    many = len(content) > 1
    for j, block in enumerate(content):
        lines = _block((i, j), block if isinstance(block, dict) else {}, items, d, full)
        if many and lines and isinstance(lines[0], Text):
            lines[0] = Text(f".content[{j}] ", style="dim") + lines[0]
        out.extend(lines)
    return out or [Text("content: [] (empty)", style="red")]


def _block(loc: Loc, block: dict, items: list, d: _Draw, full: bool) -> list[RenderableType]:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return [fold(text, full) if isinstance(text, str) and text else
                Text("(empty text block)", style="red")]
    if loc in d.p.calls:
        shown = shown_json(block.get("input"))
        if not isinstance(block.get("input"), dict):
            args = Text(safe(shown) + "   (input is not an object)", style="red")
        elif shown.startswith("{"):
            args = pretty_arguments(shown)
        else:                                   # nested too deeply to show
            args = Text(safe(shown), style="red")
        args.pad_left(4)
        return [d.call_head(loc, block, block.get("name")), args]
    if loc in d.p.status:
        head = d.result_head(loc, items)
        if block.get("is_error") is True:
            head.append("  (is_error)", style="yellow")
        return [head, _output_text(block.get("content", ""), full)]
    if kind == "thinking":
        signed = ", signed" if block.get("signature") else ""
        return [Text(f"thinking ({len(str(block.get('thinking') or ''))} characters{signed}): ",
                     style="dim") + fold(str(block.get("thinking") or ""), full, 200)]
    if kind == "redacted_thinking":
        return [Text("redacted_thinking", style="dim")]
    return [Text(f"{safe(str(kind))} ", style="dim") + _compact(
        {k: v for k, v in block.items() if k != "type"}, full)]


def _anthropic_rows(body: dict) -> list[tuple[str | None, str, Any]]:
    rows: list[tuple[str | None, str, Any]] = []
    if "system" in body:
        system = body["system"]
        rows.append((None, "system", {"role": "system", "content": system if isinstance(system, str)
                                      else text_of(system)}))
    messages = body.get("messages")
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        m = m if isinstance(m, dict) else {}
        rows.append((str(i), str(m.get("role")), m))
    return rows


def _anthropic_summary(i: int, m: dict, items: list, d: _Draw) -> Text:
    content = m.get("content")
    out = Text()
    for j, block in enumerate(content if isinstance(content, list) else []):
        loc = (i, j)
        if loc in d.p.calls or loc in d.p.status:
            if out:
                out.append("; ")
            out.append_text(d.call_head(loc, block, block.get("name")) if loc in d.p.calls
                            else d.result_head(loc, items))
    if out:
        return out
    text = " ".join(text_of(content).split())
    return Text(safe(text if len(text) <= 60 else text[:59] + "…"), style="dim")


# -- Gemini -------------------------------------------------------------------------------

def _gemini_content(i: int, c: dict, items: list, d: _Draw, full: bool) -> list[RenderableType]:
    parts = c.get("parts")
    if not isinstance(parts, list):
        return [Text(safe(shown_json(parts)) + "   (parts is not an array)", style="red")]
    out: list[RenderableType] = []
    for j, part in enumerate(parts):
        lines = _part((i, j), part if isinstance(part, dict) else {}, items, d, full)
        if len(parts) > 1 and lines and isinstance(lines[0], Text):
            lines[0] = Text(f".parts[{j}] ", style="dim") + lines[0]
        out.extend(lines)
    return out or [Text("parts: [] (empty)", style="red")]


def _part(loc: Loc, part: dict, items: list, d: _Draw, full: bool) -> list[RenderableType]:
    call, response = gemini_field(part, "functionCall"), gemini_field(part, "functionResponse")
    signed = gemini_field(part, "thoughtSignature")
    if isinstance(call, dict):
        args = pretty_arguments(shown_json(call.get("args", {})))
        args.pad_left(4)
        head = d.call_head(loc, part, call.get("name"))
        if signed:
            head.append("  (signed)", style="dim")
        return [head, args]
    if isinstance(response, dict):
        value = response.get("response")
        shown = pretty_arguments(shown_json(value)) if isinstance(value, dict) else \
            _output_text(value, full)
        return [d.result_head(loc, items), shown]
    if isinstance(part.get("text"), str):
        if part.get("thought"):
            return [Text("thought: ", style="dim") + fold(part["text"], full, 200)]
        return [fold(part["text"], full) if part["text"] else Text('text: ""', style="dim")]
    return [_compact(part, full)]


def _gemini_rows(body: dict) -> list[tuple[str | None, str, Any]]:
    rows: list[tuple[str | None, str, Any]] = []
    system = gemini_field(body, "systemInstruction")
    if system is not None:
        parts = system.get("parts") if isinstance(system, dict) else None
        rows.append((None, "system", {"role": "system", "content": text_of(parts)}))
    contents = gemini_field(body, "contents")
    for i, c in enumerate(contents if isinstance(contents, list) else []):
        c = c if isinstance(c, dict) else {}
        rows.append((str(i), str(c.get("role")), c))
    return rows


def _gemini_summary(i: int, c: dict, items: list, d: _Draw) -> Text:
    out = Text()
    parts = c.get("parts")
    for j, _ in enumerate(parts if isinstance(parts, list) else []):
        loc = (i, j)
        if loc in d.p.calls or loc in d.p.status:
            if out:
                out.append("; ")
            out.append_text(d.call_head(loc, {}, (_at("gemini", items, loc) or {}).get("name"))
                            if loc in d.p.calls else d.result_head(loc, items))
    if out:
        return out
    text = " ".join(text_of(parts).split())
    return Text(safe(text if len(text) <= 60 else text[:59] + "…"), style="dim")


#: per format: (rows, one entry drawn in full, one entry on one line)
DRAW = {"responses": (_responses_rows, _responses_item, _responses_summary),
        "anthropic": (_anthropic_rows, _anthropic_message, _anthropic_summary),
        "gemini": (_gemini_rows, _gemini_content, _gemini_summary)}


# -- the grid -------------------------------------------------------------------------------

def render_wire(fmt: str, body: dict, pairing: WirePairing, *, findings: Iterable = (),
                new_from: int | None = None, full: bool = False, start: int = 0,
                in_progress: bool = False, seen: int = 0, hide_seen: bool = False,
                notes: Iterable[str] = ()) -> RenderableType:
    """A Responses / Anthropic request body as the messages view draws it.

    ``start``: rows before this native index are not drawn (a response's output after its
    request); ``in_progress``: calls from ``start`` on are being executed (pending, not
    missing); ``seen``/``hide_seen``: as ``render_messages``."""
    from agentdbg.wire.codec import get

    key = get(fmt).key
    raw = body.get(key)
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else \
        [x if isinstance(x, dict) else {} for x in raw] if isinstance(raw, list) else []
    d = _Draw(fmt, pairing, start, in_progress)
    by_index = findings_by_index(findings)
    grid = message_grid()
    hidden = 0
    rows_of, draw, summary_of = DRAW[fmt]
    rows = rows_of(body)
    for index, kind, item in rows:
        i = int(index) if index is not None else -1
        if (index is None and start) or (index is not None and i < start):
            continue
        style = ROLE_STYLE.get(kind) or KIND_STYLE.get(kind, "dim")
        mark = Text("+", style="bold green") if new_from is not None and i >= new_from else Text(" ")
        if index is not None and i < seen:
            if hide_seen and i not in by_index:
                hidden += 1
                continue
            summary = summary_of(i, item, items, d)
            cell: list[RenderableType] = [summary, *(render_finding(f) for f in by_index.get(i, ()))]
        elif index is None:
            cell = [fold(str(item.get("content") or ""), full, 300)]
        else:
            cell = [*draw(i, item, items, d, full), *(render_finding(f) for f in by_index.get(i, ()))]
        grid.add_row(mark, Text(f"[{index}]" if index is not None else "", style="dim"),
                     Text(safe(kind), style=style), Group(*cell))
    past_end = [f for index, fs in by_index.items() if isinstance(index, int)
                and index >= len(items) for f in fs]
    if past_end:
        grid.add_row(Text(" "), Text(f"[{len(items)}]", style="dim"), Text("—", style="red"),
                     Group(Text("(missing: nothing here)", style="dim"),
                           *[render_finding(f) for f in past_end]))
    parts: list[RenderableType] = [render_finding(f) for f in by_index.get(None, ())] \
        if start == 0 else []
    if hidden:
        what = f"{get(fmt).unit}(s)"
        parts.append(Text(f"  ({hidden} earlier {what} unchanged, no findings; --full shows "
                          "them)", style="dim"))
    parts.append(grid)
    parts.extend(Text(f"  note: {safe(n)}", style="yellow") for n in notes)
    return Group(*parts)
