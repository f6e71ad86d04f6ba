"""The messages view, for every wire format: pure functions from a request (+ findings) to
Rich renderables.

One renderer draws Chat Completions messages, Responses items, Anthropic messages and their
content blocks, Gemini contents and their parts: from the format-neutral conversation model
(``agentdbg.conversation``, read by the format's codec) and the one pairing analysis
(``agentdbg.wire.pairing``). Pairing is shown with a label per call (A, B, ...) repeated on its
result, plus a check mark when the pair is right and where the other half is, in the format's
own paths (``[6]``, ``[4].content[0]``, ``[2].parts[1]``); findings sit on the exact entry they
concern. What differs per format (what a result without an id is called, what an orphan is)
the codec says; nothing here asks which format it draws.

Every piece of untrusted text goes through ``safe()`` into a ``Text`` object, so neither Rich
markup nor terminal control sequences get through. Everything reads without colour too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentdbg.conversation import (
    AssistantText,
    HostedCall,
    HostedResult,
    Instructions,
    Loc,
    Note,
    Other,
    Part,
    Reasoning,
    ToolCall,
    ToolResult,
    UserText,
    text_of,
)
from agentdbg.i18n import _, recorded
from agentdbg.messages import NestedTooDeeply, duplicate_keys, json_kind, loads_json, shown_json
from agentdbg.render.safe import safe
from agentdbg.render.wrap import CJKText, cell_fold, cjk
from agentdbg.wire import codec as codecs
from agentdbg.wire.codec import Codec
from agentdbg.wire.pairing import CallState, Pairing, ResultState, analyze

ROLE_STYLE = {"system": "magenta", "developer": "magenta", "user": "green",
              "assistant": "cyan", "tool": "yellow", "function": "yellow"}
LABEL_STYLES = ["bold blue", "bold magenta", "bold green", "bold dark_orange", "bold cyan",
                "bold red", "bold purple", "bold yellow"]
FOLD_AT = 800
#: a text this long (an ``oversized`` fault, a runaway result) shows only its start: ~3 rows
HUGE, HUGE_FOLD_AT = 20 * FOLD_AT, 240
ARGS_INDENT = 4   # every line of a call's arguments, wrapped lines included
KIND_STYLE = {"function_call": "cyan", "custom_tool_call": "cyan", "reasoning": "dim cyan",
              "function_call_output": "yellow", "custom_tool_call_output": "yellow"}


def label_style(label: str) -> str:
    return LABEL_STYLES[sum(map(ord, label)) % len(LABEL_STYLES)]


def fold(text: str, full: bool, limit: int = FOLD_AT) -> Text:
    """Escaped text, folded with a marker saying how much is hidden: at ``limit`` cells of
    the screen (a Chinese character takes two, so a Chinese result folds as soon as an
    English one of the same size on screen); a huge text at a few rows."""
    shown = text if full else cell_fold(text, min(limit, HUGE_FOLD_AT) if len(text) > HUGE else limit)
    out = CJKText(safe(shown))
    if len(shown) < len(text):
        out.append(_("\n… {n} more characters hidden (--full shows all)").format(
            n=len(text) - len(shown)), style="dim italic")
    return out


def pretty_arguments(arguments: Any) -> Text:
    if not isinstance(arguments, str):
        return Text(safe(shown_json(arguments)) + _("   (arguments is {kind}, not a string)").format(
            kind=json_kind(arguments)), style="red")
    try:
        value = loads_json(arguments)
    except NestedTooDeeply as exc:
        return Text(safe(arguments) + f"   (JSON {exc})", style="red")
    except ValueError:
        return Text(safe(arguments) + _("   (not valid JSON)"), style="red")
    compact = isinstance(value, dict) and len(json.dumps(value, ensure_ascii=False)) <= 60
    out = CJKText(safe(json.dumps(value, ensure_ascii=False, indent=None if compact else 2)))
    return out.append(repeated_note(arguments), style="red")     # a Chinese value folds as one


def repeated_note(arguments: str) -> str:
    """What to add after arguments shown parsed when their text repeats a key: the value shown
    is the last, the one the tool gets (every JSON parser keeps it); '' when none repeats."""
    keys = duplicate_keys(arguments)
    if not keys:
        return ""
    return _("   (repeats the key {key}: the tool gets the last value, shown; the first is "
             "ignored)").format(key=repr(safe(keys[0])))


def shown_arguments(arguments: Any) -> str:
    """One line of arguments as the tool will get them: the text as sent, unless it repeats a
    key — then parsed and re-encoded (the last value, the one the tool gets) and said so."""
    if not isinstance(arguments, str):
        return safe(shown_json(arguments))
    if not duplicate_keys(arguments):
        return safe(arguments)
    return safe(json.dumps(loads_json(arguments, max_depth=None), ensure_ascii=False)) + \
        repeated_note(arguments)


def severity_word(severity: str) -> str:
    """"error" or "warning", in the chosen language."""
    return {"error": _("error"), "warning": _("warning")}.get(severity, severity)


def finding_text(f: Any) -> str:
    """What a finding says is wrong, in the chosen language (as recorded when it was read back)."""
    text = getattr(f, "text", None)
    return text() if callable(text) else str(getattr(f, "message", ""))


def render_finding(f: Any) -> Text:
    sev = getattr(f, "severity", "error")
    style = "bold red" if sev == "error" else "bold yellow"
    mark = "✗" if sev == "error" else "!"
    out = Text()
    out.append(f"{mark} {severity_word(sev)} {f.rule}", style=style)
    out.append(_(": ") + safe(finding_text(f)))
    if getattr(f, "api_error", None):
        source = getattr(f, "api_source", None)
        out.append("\n    " + _("{api} says: ").format(api=safe(source) if source else "API"),
                   style="dim")
        out.append(safe(f.api_error), style="italic")
    return cjk(out)     # Chinese folds between characters, as the rest of the view


def finding_line(f: Any) -> Text:
    """A finding on one line (cut with "…" where the column ends), for a message the reader
    has seen with its finding already."""
    sev = getattr(f, "severity", "error")
    out = Text(f"{'✗' if sev == 'error' else '!'} {severity_word(sev)} {f.rule}",
               style="bold red" if sev == "error" else "bold yellow")
    out.append(_(": ") + safe(finding_text(f)), style="dim")
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


def render_tools(definitions: list[dict], full: bool = False) -> Text:
    """The request's tools: their names on one line (hosted ones marked), or with ``full``
    one line per tool with its description and parameters."""
    from agentdbg.conversation import definitions_text

    lines = definitions_text(definitions, full)
    out = Text(_("tools: "), style="dim")
    if not lines:
        return out + Text(_("(none sent)"), style="dim")
    if full:
        out.append("\n")
        return out + Text(safe("\n".join(f"  {line}" for line in lines)))
    return out + Text(safe(lines[0]))


def findings_by_index(findings: Iterable) -> dict[Any, list]:
    """Findings grouped by the message they sit on (None: the request as a whole)."""
    by_index: dict[Any, list] = {}
    for f in findings:
        by_index.setdefault(getattr(f, "index", None), []).append(f)
    return by_index


def message_grid() -> Table:
    """The view's grid: new-marker, [index], role, body (the body folds, the rest never wraps)."""
    grid = Table.grid(padding=(0, 1), expand=False)
    grid.add_column(width=1, no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


# -- one conversation, any wire format --------------------------------------------------------

def _plain_value(value: Any, full: bool) -> Text:
    """A tool result's content (or any value) as the view shows it: text folded, an object as
    JSON, anything else red with its kind."""
    if isinstance(value, str):
        return fold(value, full) if value else Text('""', style="dim")
    if isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str)
                                       for p in value):
        return fold(text_of(value), full)
    if isinstance(value, dict):
        return pretty_arguments(shown_json(value))
    return Text(safe(shown_json(value))[:300] + f"   ({json_kind(value)})", style="red")


def _compact(value: Any, full: bool) -> Text:
    return fold(shown_json(value), full, 300)


def note_text(note: Note) -> str:
    """A part's note in the chosen language (the value as JSON first when it ``shows``)."""
    said = _(note.text).format(**{k: _(v) if k == "kind" else v for k, v in note.values})
    return (shown_json(note.value) + said) if note.shows else said


def _note(note: Note) -> Text:
    return CJKText(safe(note_text(note)), style="red" if note.wrong else "dim")


class ConversationView:
    """One rendering of one request (or history) of any format: its parts by entry, the
    pairing's labels and marks, and what is still pending."""

    def __init__(self, codec: Codec, body: Any, pairing: Pairing | None = None, *,
                 full: bool = False, in_progress: bool = False) -> None:
        body = body if isinstance(body, dict) else {codec.key: body}
        raw = body.get(codec.key)
        self.entries: list = [{"role": "user", "content": raw}] if isinstance(raw, str) and \
            codec.text_input else raw if isinstance(raw, list) else []
        self.codec, self.full = codec, full
        self.p = pairing if pairing is not None else \
            analyze(codec, codec.items(body), in_progress=in_progress)
        self.top = codec.top_parts(body)
        self._parts: dict[int, list[Part]] = {}     # read when drawn: a redraw reads 2 entries
        self.pending_from = self._pending_from() if in_progress else None
        self._repeats: set[Loc] | None = None

    def repeated(self, loc: Loc) -> bool:
        """Does a call before this one have its id: in the same entry, or anywhere in the
        request where the format wants call ids unique in it?"""
        cid = self.p.calls.get(loc)
        if not cid:
            return False
        if self.codec.ids_unique_in == "entry":
            return any(self.p.calls.get(p.where.loc) == cid for p in self.parts(loc[0])
                       if p.where.loc < loc and len(p.where.loc) == len(loc))
        if self._repeats is None:
            seen: set[str] = set()
            self._repeats = set()
            for k, c in self.p.calls.items():
                if c and c in seen:
                    self._repeats.add(k)
                elif c:
                    seen.add(c)
        return loc in self._repeats

    def parts(self, i: int) -> list[Part]:
        """The parts of entry ``i`` (none for an entry that is not an object)."""
        found = self._parts.get(i)
        if found is None:
            item = self.entries[i] if 0 <= i < len(self.entries) else None
            found = self._parts[i] = self.codec.entry_parts(i, item) if isinstance(item, dict) \
                else []
        return found

    def call_at(self, loc: Loc) -> ToolCall | HostedCall | None:
        return next((p for p in self.parts(loc[0]) if p.where.loc == loc
                     and isinstance(p, (ToolCall, HostedCall))), None)

    def _pending_from(self) -> int:
        """The first of the trailing entries that only make calls: the ones being executed."""
        k = len(self.p.entries)
        while k and self.p.entries[k - 1][1] and not self.p.entries[k - 1][2]:
            k -= 1
        return k

    # -- marks ------------------------------------------------------------------------------
    def call_mark(self, loc: Loc, repeated: bool) -> tuple[str, str]:
        """(text, style) after a call: answered where, late, pending or unanswered."""
        if repeated:
            return "   " + _("✗ same id as a call above"), "red"
        p, answer = self.p, self.p.answer_of.get(loc)
        if answer is not None and p.status.get(answer) is ResultState.LATE:
            block = p.block_at(loc[0])
            return "   " + _("✗ answered late at [{index}], after [{other}] cut in").format(
                index=answer[0], other=block.interloper if block is not None else None), "red"
        if answer is not None:
            return "   " + _("✓ answered at {where}").format(where=self.codec.shown_at(answer)), \
                "green"
        if self.pending_from is not None and loc[0] >= self.pending_from:
            return "   " + _("… pending execution"), "yellow"
        return "   " + _("✗ unanswered"), "red"

    def result_mark(self, loc: Loc) -> tuple[str, str, Loc | None]:
        """(text, style, the call it answers) for the result at ``loc``."""
        p = self.p
        status = p.status.get(loc, ResultState.ORPHAN)
        call = p.call_of.get(loc)
        if status is ResultState.OK and call is not None:
            return _("✓ answers {where}").format(where=self.codec.shown_at(call)), "green", call
        if status is ResultState.LATE and call is not None:
            block = p.block_at(call[0])
            return _("✗ late: answers [{index}] after [{other}] cut in").format(
                index=call[0], other=block.interloper if block is not None else None), "bold red", call
        if status is ResultState.IDLESS:
            return _("✗ attributed to the call without id in [{index}]").format(
                index=p.block_of[loc][0]), "bold red", None
        if status is ResultState.EXTERNAL:
            return _("… answers a call held in the stored response"), "yellow", None
        if status is ResultState.DUPLICATE:
            return _("✗ second answer to the same call"), "bold red", None
        text = self.codec.result_texts.get(status.value)
        return (_(text) if text else f"✗ {status.value}"), "bold red", None

    def call_head(self, part: ToolCall | HostedCall, repeated: bool) -> Text:
        loc = part.where.loc
        cid = self.p.calls.get(loc)
        label = self.p.label(cid)
        head = CJKText("→ ")
        head.append(f"{label} " if label else "? ", style=label_style(label) if label else "red")
        head.append(safe(cid) if cid else _("(no id)"), style="" if label else "red")
        head.append("  ")
        head.append(safe(part.name or _("(no name)")), style="bold")
        head.append(*self.call_mark(loc, repeated))
        if isinstance(part, ToolCall) and part.signature:
            head.append("  (signed)", style="dim")
        return head

    def result_head(self, part: Part) -> Text:
        loc = part.where.loc
        # the id it names (by position: its call's), as the pairing read it
        tid = self.p.named[loc] if loc in self.p.named else \
            part.call_id if isinstance(part, (ToolResult, HostedResult)) else None
        text, style, call = self.result_mark(loc)
        label = self.p.label(tid) if call is not None else None
        head = CJKText("← ")
        head.append(f"{label} " if label else "? ", style=label_style(label) if label else "red")
        head.append(safe(tid) if tid else _(self.codec.no_result_id))
        called = self.call_at(call) if call is not None else None
        if called is not None and called.name:
            head.append(f"  {safe(called.name)}", style="bold")
        head.append(f"   {text}", style=style)
        if isinstance(part, ToolResult) and part.is_error:
            head.append("  (is_error)", style="yellow")
        return head

    # -- one entry ----------------------------------------------------------------------------
    def _arguments(self, part: ToolCall | HostedCall) -> Text:
        args = part.arguments if isinstance(part, ToolCall) else part.payload
        if part.note is not None:
            return _note(part.note)
        if isinstance(part, ToolCall) and part.kind != "function":
            return _compact(args, self.full)
        if isinstance(args, str):
            return pretty_arguments(args)
        shown = shown_json({} if args is None else args)
        return pretty_arguments(shown) if shown.startswith("{") else Text(safe(shown), style="red")

    def part_lines(self, part: Part) -> list[RenderableType]:
        loc, full = part.where.loc, self.full
        if isinstance(part, (ToolCall, HostedCall)) and loc in self.p.calls:
            return [self.call_head(part, self.repeated(loc)),
                    Padding(self._arguments(part), (0, 0, 0, ARGS_INDENT), expand=False)]
        if isinstance(part, ToolResult) or (isinstance(part, HostedResult) and loc in self.p.status):
            value = part.content if isinstance(part, ToolResult) else part.payload
            body = _note(part.note) if part.note is not None else _plain_value(value, full)
            return [self.result_head(part), body] if loc in self.p.status else [body]
        if part.note is not None:
            if not part.note.wrong and isinstance(part, (Instructions, UserText, AssistantText)) \
                    and part.text:         # a remark on a text (who wrote it to whom): both
                return [_note(part.note), fold(part.text, full)]
            return [_note(part.note)]
        if isinstance(part, (Instructions, UserText, AssistantText)):
            return [fold(part.text, full) if part.text else Text('""', style="dim")]
        if isinstance(part, Reasoning):
            return [self._reasoning(part)]
        if isinstance(part, Other) and part.text is not None:
            return [fold(part.text, full)]
        raw = part.raw if isinstance(part.raw, dict) else {}
        if len(loc) > 1 and "type" in raw:     # a block inside an entry: its type, then the rest
            return [Text(f"{safe(str(raw['type']))} ", style="dim") + _compact(
                {k: v for k, v in raw.items() if k != "type"}, full)]
        return [_compact(part.raw, full)]

    def _reasoning(self, part: Reasoning) -> Text:
        entry = self.entries[part.where.loc[0]]
        # its kind, unless the role column says it already (a Responses reasoning item)
        line = Text("" if self.codec.entry_label(entry) == part.kind else safe(part.kind), style="dim")
        if part.item_id:
            line.append(f" {safe(part.item_id)}" if line else safe(part.item_id), style="dim")
        for flag, said in ((part.signature, "signed"), (part.encrypted, "encrypted")):
            if flag:
                line.append(f" ({said})", style="dim")
        return cjk(line + Text(": ", style="dim") + fold(part.text, self.full, 200)) if part.text \
            else line

    def entry(self, i: int, *, meta: str | None = None,
              findings: Iterable = ()) -> list[RenderableType]:
        """The body lines of entry ``i`` (the index and role columns are the grid's)."""
        item = self.entries[i]
        body: list[RenderableType] = []
        if not isinstance(item, dict):
            body.append(Text(f"(not an object: {safe(repr(item))[:200]})", style="red"))
        else:
            parts = self.parts(i)
            many = sum(len(p.where.loc) > 1 for p in parts) > 1
            for part in parts:
                lines = self.part_lines(part)
                prefix = self.codec.part_prefix(part.where.loc) if many else ""
                if prefix and lines and isinstance(lines[0], Text):
                    lines[0] = cjk(Text(prefix, style="dim") + lines[0])
                body.extend(lines)
        if meta:
            body.append(CJKText(safe(meta), style="dim"))
        body.extend(render_finding(f) for f in findings)
        return body

    def summary(self, i: int, width: int = 200) -> Text:
        """One line for an entry the reader has already seen: its pairing marks and a preview
        of its text, cut with "…" where the column ends."""
        item = self.entries[i]
        if not isinstance(item, dict):
            return Text("(not an object)", style="red")
        out, preview = Text(), ""
        for part in self.parts(i):
            loc = part.where.loc
            if loc in self.p.calls:         # a call, or what stands where a call should
                label = self.p.label(self.p.calls[loc])
                name = part.name if isinstance(part, (ToolCall, HostedCall)) else None
                out.append("; " if out else "")
                out.append(f"→ {label or '?'} ", style=label_style(label) if label else "red")
                out.append(safe(name or "?"), style="bold")
                out.append(*self.call_mark(loc, self.repeated(loc)))
                continue
            if isinstance(part, (ToolResult, HostedResult)) and loc in self.p.status:
                out.append("; " if out else "")
                out.append_text(self.result_head(part))
            preview = preview or self._preview(part, width)
        if not preview and not out:    # nothing else on the line: say what the entry holds
            preview = next((note_text(p.note) for p in self.parts(i) if p.note is not None
                            and not isinstance(p, (ToolCall, HostedCall))), "") or next(
                (" ".join(p.text[:width * 2].split()) for p in self.parts(i)
                 if isinstance(p, Reasoning) and p.text), "")
        if preview:
            out.append("  " if out else "")
            out.append(safe(preview if len(preview) <= width else preview[:width - 1] + "…"),
                       style="dim")
        out.no_wrap, out.overflow = True, "ellipsis"
        return out

    @staticmethod
    def _preview(part: Part, width: int) -> str:
        """A part's text on one line (its start: a preview costs the same for a huge one)."""
        if part.note is not None:
            return shown_json(part.note.value) if part.note.shows else ""
        if isinstance(part, (Instructions, UserText, AssistantText)) or \
                (isinstance(part, Other) and part.text is not None):
            text = part.text or ""
        elif isinstance(part, ToolResult):
            value = part.content
            text = value if isinstance(value, str) else text_of(value) if isinstance(value, list) \
                else shown_json(value)
        else:
            return ""
        return " ".join(text.lstrip()[:width * 2].split())

    def label(self, item: Any) -> Text:
        label = self.codec.entry_label(item)
        if label is None:
            return Text("?", style="red")
        return Text(safe(label), style=ROLE_STYLE.get(label) or KIND_STYLE.get(label, "dim"))


def render_conversation(codec: Codec, body: Any, pairing: Pairing | None = None, *,
                        findings: Iterable = (), new_from: int | None = None, full: bool = False,
                        meta: dict[int, str] | None = None, start: int = 0,
                        in_progress: bool = False, seen: int = 0, hide_seen: bool = False,
                        brief_seen: bool = False, focus: set[int] | None = None,
                        notes: Iterable[str] = ()) -> RenderableType:
    """A request body (or its conversation array) of ``codec``'s format as a grid: new-marker,
    [index], role, body; the request's own fields (``system``, ``instructions``) first.

    ``pairing``: the analysis the checker judged on (None: analysed here). ``start``: entries
    before this index are not drawn (pairing and findings still consider them all); request-
    level findings are shown only with start=0. ``in_progress``: the trailing calls are being
    executed (pending, not missing). ``seen``: entries before this index were shown already:
    one line each, with their findings (``brief_seen``: one line each too); ``hide_seen``
    leaves out those without a finding (one note says how many). ``focus``: only these
    entries in full, marked ▶; every other one on one line. ``notes``: what the pairing could
    not know, said under the grid."""
    view = ConversationView(codec, body, pairing, full=full, in_progress=in_progress)
    by_index = findings_by_index(findings)
    grid = message_grid()
    if not start:
        for part in view.top:
            text = part.text if isinstance(part, Instructions) else shown_json(part.raw)
            grid.add_row(Text(" "), Text(""), Text(safe(part.where.path), style="magenta"),
                         fold(text, full, 300))
    hidden = 0
    for i, item in enumerate(view.entries):
        if i < start:
            continue
        mark = Text("+", style="bold green") if new_from is not None and i >= new_from else Text(" ")
        if focus is not None:
            mark = Text("▶", style="bold reverse") if i in focus else Text(" ")
        if i < seen or (focus is not None and i not in focus):
            if hide_seen and i not in by_index:
                hidden += 1
                continue
            show = finding_line if brief_seen else render_finding
            cell: list[RenderableType] = [view.summary(i), *(show(f) for f in by_index.get(i, ()))]
        else:
            cell = view.entry(i, meta=(meta or {}).get(i), findings=by_index.get(i, ()))
        grid.add_row(mark, Text(f"[{i}]", style="dim"), view.label(item), Group(*cell))
    past_end = [f for index, fs in by_index.items() if isinstance(index, int)
                and index >= len(view.entries) for f in fs]
    if past_end:  # e.g. where the missing results should have been
        grid.add_row(Text(" "), Text(f"[{len(view.entries)}]", style="dim"), Text("—", style="red"),
                     Group(Text(_("(missing: nothing here)"), style="dim"),
                           *[render_finding(f) for f in past_end]))
    parts: list[RenderableType] = [render_finding(f) for f in by_index.get(None, ())] \
        if start == 0 else []
    if hidden:
        parts.append(cjk("  " + _(codec.hidden_text).format(n=hidden, unit=codec.unit), "dim"))
    parts.append(grid)
    parts.extend(cjk("  " + _("note: {note}").format(note=safe(recorded(n, nested=True))), "yellow")
                 for n in notes)
    return Group(*parts)


def chat() -> Codec:
    """agentdbg's own chat form (what the engine, step mode and a transcript hold)."""
    return codecs.get(codecs.DEFAULT)


def render_messages(messages: list, *, pairing: Pairing | None = None, **kw: Any) -> RenderableType:
    """A chat ``messages`` array (agentdbg's own form): ``render_conversation`` of it."""
    return render_conversation(chat(), messages, pairing, **kw)


def call_status(index: int, pos: int, repeated: bool, pairing: Pairing) -> tuple[str, str]:
    """The mark after call ``pos`` of chat message ``index`` (for the HTML report)."""
    view = ConversationView(chat(), [], pairing)
    if pairing.call_state(index, pos) is CallState.PENDING:
        view.pending_from = index
    return view.call_mark((index, pos), repeated)


def result_status(index: int, message: dict, pairing: Pairing,
                  messages: list) -> tuple[str, str, int | None, str | None]:
    """(text, style, the assistant it answers, the call's name) for chat tool message ``index``
    (for the HTML report)."""
    text, style, call = ConversationView(chat(), [], pairing).result_mark((index,))
    if call is None:
        return text, style, None, None
    calls = messages[call[0]].get("tool_calls") if isinstance(messages[call[0]], dict) else None
    fn = calls[call[1]].get("function") if isinstance(calls, list) and call[1] < len(calls) \
        and isinstance(calls[call[1]], dict) else None
    name = fn.get("name") if isinstance(fn, dict) and isinstance(fn.get("name"), str) else None
    return text, style, call[0], name
