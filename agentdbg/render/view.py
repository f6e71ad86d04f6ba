"""The messages view: pure functions from messages (+ findings) to Rich renderables.

Every piece of untrusted text goes through ``safe()`` into a ``Text`` object,
so neither Rich markup nor terminal control sequences get through. Pairing is
shown with a label per call (A, B, ...) repeated on its result, plus a check
mark when the pair is right; findings sit on the exact message they concern.
Everything reads without colour too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentdbg.checker.pairing import CallState, Pairing, ResultState, analyze
from agentdbg.i18n import N_, _
from agentdbg.messages import NestedTooDeeply, duplicate_keys, json_kind, loads_json, shown_json
from agentdbg.render.safe import safe
from agentdbg.render.wrap import CJKText, cell_fold, cjk

ROLE_STYLE = {"system": "magenta", "developer": "magenta", "user": "green",
              "assistant": "cyan", "tool": "yellow", "function": "yellow"}
LABEL_STYLES = ["bold blue", "bold magenta", "bold green", "bold dark_orange", "bold cyan",
                "bold red", "bold purple", "bold yellow"]
FOLD_AT = 800
ARGS_INDENT = 4   # every line of a call's arguments, wrapped lines included
STATUS_TEXT = {
    ResultState.ORPHAN: N_("✗ orphan: no assistant tool_calls before it"),
    ResultState.MISMATCH: N_("✗ tool_call_id not in the previous tool_calls"),
    ResultState.DUPLICATE: N_("✗ second answer to the same call"),
    ResultState.MISSING_ID: N_("✗ no tool_call_id"),
}


def label_style(label: str) -> str:
    return LABEL_STYLES[sum(map(ord, label)) % len(LABEL_STYLES)]


def fold(text: str, full: bool, limit: int = FOLD_AT) -> Text:
    """Escaped text, folded with a marker saying how much is hidden: at ``limit`` cells of
    the screen (a Chinese character takes two, so a Chinese result folds as soon as an
    English one of the same size on screen)."""
    shown = text if full else cell_fold(text, limit)
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
    out = Text(safe(json.dumps(value, ensure_ascii=False, indent=None if compact else 2)))
    return out.append(repeated_note(arguments), style="red")


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


def _content(message: dict, full: bool) -> Text | None:
    if "content" not in message:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            return None  # legal on a tool-call turn: nothing to show
        return Text(_("(no content key)"), style="dim")
    content = message["content"]
    if content is None:
        return Text("content: null", style="dim") if message.get("role") != "assistant" or \
            not message.get("tool_calls") else None
    if isinstance(content, str):
        return fold(content, full) if content else Text('content: ""', style="dim")
    if isinstance(content, list):  # content parts
        texts = [p.get("text", "") for p in content if isinstance(p, dict)]
        if all(isinstance(t, str) for t in texts) and len(texts) == len(content):
            return fold("".join(texts), full)
    return Text(safe(shown_json(content)) + _("   (content is {kind})").format(kind=json_kind(content)),
                style="red")


def _call_lines(index: int, message: dict, pairing: Pairing) -> list[RenderableType]:
    lines: list[RenderableType] = []
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return [Text(f"tool_calls: {safe(shown_json(calls))}", style="red")]
    if not calls:
        return [Text(_("tool_calls: [] (empty)"), style="red")]
    seen: set = set()
    for pos, call in enumerate(calls):
        if not isinstance(call, dict):
            lines.append(Text(f"→ {safe(repr(call))}", style="red"))
            continue
        cid = call.get("id")
        fn: dict = call["function"] if isinstance(call.get("function"), dict) else {}
        label = pairing.label(cid)
        head = Text("→ ")
        head.append(f"{label} " if label else "? ", style=label_style(label) if label else "red")
        head.append(safe(cid) if isinstance(cid, str) and cid else _("(no id)"),
                    style="" if label else "red")
        head.append("  ")
        head.append(safe(fn.get("name") or _("(no name)")), style="bold")
        head.append(*call_status(index, pos, isinstance(cid, str) and cid in seen, pairing))
        if isinstance(cid, str) and cid:
            seen.add(cid)
        lines.append(head)
        args = pretty_arguments(fn.get("arguments")) if "arguments" in fn else \
            Text(_("(no arguments)"), style="red")
        lines.append(Padding(args, (0, 0, 0, ARGS_INDENT), expand=False))
    return lines


def call_status(index: int, pos: int, repeated: bool, pairing: Pairing) -> tuple[str, str]:
    if repeated:
        return "   " + _("✗ same id as a call above"), "red"
    state = pairing.call_state(index, pos)
    if state is CallState.ANSWERED:
        return "   " + _("✓ answered at [{index}]").format(index=pairing.answer_of[(index, pos)][0]), "green"
    if state is CallState.LATE:
        block = pairing.block_at(index)
        interloper = block.interloper if block is not None else None
        return "   " + _("✗ answered late at [{index}], after [{other}] cut in").format(
            index=pairing.answer_of[(index, pos)][0], other=interloper), "red"
    if state is CallState.PENDING:
        return "   " + _("… pending execution"), "yellow"
    return "   " + _("✗ unanswered"), "red"


def result_status(index: int, message: dict, pairing: Pairing,
                  messages: list) -> tuple[str, str, int | None, str | None]:
    """(text, style, the assistant it answers, the call's name) for tool message ``index``."""
    status = pairing.status.get((index,), ResultState.ORPHAN)
    if status in (ResultState.OK, ResultState.LATE):
        asst, pos = pairing.call_of[(index,)]
        call = messages[asst]["tool_calls"][pos]
        fn = call.get("function") if isinstance(call, dict) else None
        name = fn.get("name") if isinstance(fn, dict) and isinstance(fn.get("name"), str) else None
        if status is ResultState.OK:
            return _("✓ answers [{index}]").format(index=asst), "green", asst, name
        block = pairing.block_at(asst)
        interloper = block.interloper if block is not None else None
        return _("✗ late: answers [{index}] after [{other}] cut in").format(
            index=asst, other=interloper), "bold red", asst, name
    if status is ResultState.IDLESS:
        return (_("✗ attributed to the call without id in [{index}]").format(
            index=pairing.block_of[(index,)][0]), "bold red", None, None)
    return _(STATUS_TEXT[status]), "bold red", None, None


def _tool_head(index: int, message: dict, pairing: Pairing, messages: list) -> Text:
    tid = message.get("tool_call_id")
    text, style, asst, name = result_status(index, message, pairing, messages)
    label = pairing.label(tid) if asst is not None else None
    head = Text("← ")
    head.append(f"{label} " if label else "? ", style=label_style(label) if label else "red")
    head.append(safe(tid) if isinstance(tid, str) and tid else _("(no tool_call_id)"))
    if name is not None:
        head.append(f"  {safe(name)}", style="bold")
    head.append(f"   {text}", style=style)
    return head


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


def render_message(index: int, message: Any, pairing: Pairing, messages: list, *,
                   full: bool = False, meta: str | None = None,
                   findings: Iterable = ()) -> list[RenderableType]:
    """The body lines of one message (the index/role columns are added by the table)."""
    body: list[RenderableType] = []
    if not isinstance(message, dict):
        body.append(Text(f"(not an object: {safe(repr(message))[:200]})", style="red"))
    else:
        role = message.get("role")
        if role == "tool":
            body.append(_tool_head(index, message, pairing, messages))
        text = _content(message, full)
        if text is not None:
            body.append(text)
        if role == "assistant" and "tool_calls" in message:
            body.extend(_call_lines(index, message, pairing))
        if role == "function":
            body.insert(0, Text(_("(legacy function result, name={name})").format(
                name=safe(message.get("name"))), style="dim"))
        for key in ("reasoning_content",):
            if message.get(key):
                body.insert(0, Text(f"{key}: ", style="dim") + fold(str(message[key]), full, 200))
    if meta:
        body.append(CJKText(safe(meta), style="dim"))
    body.extend(render_finding(f) for f in findings)
    return body


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


def summary_line(index: int, message: Any, pairing: Pairing, messages: list,
                 width: int = 200) -> Text:
    """One line for a message the reader has already seen: its pairing marks (label, call
    status) and a preview of its text, cut with "…" where the column ends."""
    if not isinstance(message, dict):
        return Text("(not an object)", style="red")
    role = message.get("role")
    calls = message.get("tool_calls")
    if role == "tool":
        out = _tool_head(index, message, pairing, messages)
    elif role == "assistant" and isinstance(calls, list) and calls:
        out = _calls_summary(index, calls, pairing)
    else:
        out = Text()
    preview = _preview(message.get("content"), bare=not out, limit=width)
    if preview:
        if out:
            out.append("  ")
        out.append(safe(preview if len(preview) <= width else preview[:width - 1] + "…"),
                   style="dim")
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


def _calls_summary(index: int, calls: list, pairing: Pairing) -> Text:
    out = Text()
    seen: set = set()
    for pos, call in enumerate(calls):
        call = call if isinstance(call, dict) else {}
        cid = call.get("id")
        fn = call["function"] if isinstance(call.get("function"), dict) else {}
        label = pairing.label(cid)
        if pos:
            out.append("; ")
        out.append(f"→ {label or '?'} ", style=label_style(label) if label else "red")
        name = fn.get("name")
        out.append(safe(name if isinstance(name, str) and name else "?"), style="bold")
        text, style = call_status(index, pos, isinstance(cid, str) and cid in seen, pairing)
        out.append(text, style=style)
        if isinstance(cid, str):
            seen.add(cid)
    return out


def _preview(content: Any, bare: bool, limit: int) -> str:
    """The content on one line (its start: a preview costs the same for a huge message);
    ``bare``: nothing else is on the line, so say what it is."""
    if isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str)
                                         for p in content):
        content = "".join(p["text"] for p in content)
    if isinstance(content, str):
        return " ".join(content.lstrip()[:limit * 2].split()) or ('content: ""' if bare else "")
    if content is None:
        return "content: null" if bare else ""
    return shown_json(content)


def render_messages(messages: list, *, findings: Iterable = (), new_from: int | None = None,
                    full: bool = False, meta: dict[int, str] | None = None,
                    start: int = 0, in_progress: bool = False,
                    pairing: Pairing | None = None, seen: int = 0,
                    hide_seen: bool = False, brief_seen: bool = False,
                    focus: set[int] | None = None) -> RenderableType:
    """The messages array as a grid: new-marker, [index], role, body.

    ``start`` renders only messages from that index on (pairing and findings still
    consider the whole array); request-level findings are shown only with start=0.
    ``in_progress``: the last message's calls are about to run (shown as pending).
    ``seen``: messages before this index were shown already: one line each, with their
    findings (``brief_seen``: one line each too); ``hide_seen`` leaves out those without a
    finding (one note says how many).
    ``focus``: only these messages in full, marked ▶; every other message one line.
    """
    if pairing is None:
        pairing = analyze(messages, in_progress=in_progress)
    by_index = findings_by_index(findings)
    grid = message_grid()
    hidden = 0
    for i, message in enumerate(messages):
        if i < start:
            continue
        role = message.get("role") if isinstance(message, dict) else None
        role_text = Text(safe(role) if isinstance(role, str) else "?",
                         style=ROLE_STYLE.get(role, "bold red") if isinstance(role, str) else "red")
        mark = Text("+", style="bold green") if new_from is not None and i >= new_from else Text(" ")
        if focus is not None:
            mark = Text("▶", style="bold reverse") if i in focus else Text(" ")
        if i < seen or (focus is not None and i not in focus):
            if hide_seen and i not in by_index:
                hidden += 1
                continue
            body: list[RenderableType] = [summary_line(i, message, pairing, messages)]
            show = finding_line if brief_seen else render_finding
            body.extend(show(f) for f in by_index.get(i, ()))
        else:
            body = render_message(i, message, pairing, messages, full=full,
                                  meta=(meta or {}).get(i), findings=by_index.get(i, ()))
        grid.add_row(mark, Text(f"[{i}]", style="dim"), role_text, Group(*body))
    past_end = [f for index, fs in by_index.items() if isinstance(index, int)
                and index >= len(messages) for f in fs]
    if past_end:  # e.g. where the missing results should have been
        grid.add_row(Text(" "), Text(f"[{len(messages)}]", style="dim"), Text("—", style="red"),
                     Group(Text(_("(missing: nothing here)"), style="dim"),
                           *[render_finding(f) for f in past_end]))
    parts: list[RenderableType] = [render_finding(f) for f in by_index.get(None, ())] \
        if start == 0 else []
    if hidden:
        parts.append(Text("  " + _("({n} earlier message(s) unchanged, no findings; --full shows "
                                   "them)").format(n=hidden), style="dim"))
    parts.append(grid)
    return Group(*parts)
