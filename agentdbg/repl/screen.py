"""What step mode shows: the header, each event, the new messages, the banner, narration.

A mixin of ``Debugger`` (pdb's ``print_stack_entry`` and friends): every text comes from the
message catalog and is folded with ``CJKText`` (Chinese breaks between characters, never
between a number and its measure word). ``present`` (``--present``) is the view for a room:
the header on one line, only what is new with one line for the rest, no dim or italic text.
"""

from __future__ import annotations

import json
from typing import Any

from rich.cells import cell_len, chop_cells
from rich.text import Text

from agentdbg.engine.phases import Phase, StopReason
from agentdbg.engine.session import ApprovalNeeded, Event, ModelReplied, RequestBlocked
from agentdbg.i18n import N_, Msg, _, language
from agentdbg.messages import call_arguments, call_name
from agentdbg.render import run as view_run
from agentdbg.render.safe import safe
from agentdbg.render.view import render_finding, render_messages, shown_arguments
from agentdbg.render.wrap import Paragraph, cjk
from agentdbg.repl.explain import narrate

#: protocol words: English on every screen, and set apart so a student sees them as such
PROTOCOL_WORDS = ("tool_calls", "tool_call_id", "finish_reason", "role", '"tool"', "assistant",
                  "user", "system", "tools", "messages", "arguments")
TERM_STYLE = "bold underline"


class Screen:
    console: Any
    session: Any
    options: Any
    explain: bool
    present: bool
    full: bool
    last: Any
    seen: list
    findings: Any

    # -- printing ------------------------------------------------------------------------
    def say(self, text: str, style: str = "") -> None:
        self.console.print(Paragraph(safe(text), style))

    def error(self, text: str) -> None:
        self.console.print(Paragraph(f"*** {safe(text)}", "red"))

    def note(self, text: str) -> None:
        """A teacher's note from the lesson file: set apart, never dim."""
        self.console.print(Paragraph(Text.assemble(("✎ ", "bold magenta"), (safe(text), "bold"))))

    def print_json(self, obj: Any, title: str = "") -> None:
        if title:
            self.say(title + _(":"))
        self.console.print(Paragraph(safe(json.dumps(obj, ensure_ascii=False, indent=2))))

    def clear_screen(self) -> None:
        self.console.clear()

    # -- the run -------------------------------------------------------------------------
    def header(self) -> None:
        o = self.options
        self.console.print(view_run.render_header(o.model_desc, self.session.toolset,
                                                  o.offline, o.title, compact=self.present))

    def report(self, event: Event) -> None:
        if isinstance(event, ModelReplied):
            self.console.print(view_run.render_turn_title(event.turn))
            if event.stats.note:
                self.console.print(view_run.render_note(event.stats.note))
        elif isinstance(event, ApprovalNeeded):
            names = ", ".join(f"{call_name(c)} ({c.get('id')})" for c in event.calls)
            self.say(_("approval needed before running {names}: 'approve' or 'deny'").format(
                names=names))
        elif isinstance(event, RequestBlocked):
            for f in event.findings:
                self.console.print(render_finding(f))
            self.say(_("not sent: the request breaks the protocol. Fix it (edit/drop/rewind) or "
                       "'send' to send it anyway and see what the API answers."))

    def show_new(self) -> None:
        """The messages not shown yet; the ones shown before as one line. A message shown
        before that is not there any more (a rewind, an edit, a replayed action) is said, and
        everything from it on is shown again."""
        msgs = self.session.messages
        same = 0
        while same < min(len(self.seen), len(msgs)) and _same(self.seen[same], msgs[same]):
            same += 1
        changed = min(len(self.seen), len(msgs)) - same
        if changed > 0:
            self.say((_("(message {index} is not the one shown before: the history changed; shown "
                        "again below)") if changed == 1 else
                      _("(messages {index} are not the ones shown before: the history changed; "
                        "shown again below)")).format(index=span(same, same + changed - 1)),
                     "bold yellow")
        elif len(msgs) < len(self.seen):
            cut = len(self.seen) - len(msgs)
            self.say((_("(message {index} was cut from the history)") if cut == 1 else
                      _("(messages {index} were cut from the history)")).format(
                index=span(len(msgs), len(self.seen) - 1)), "bold yellow")
        if same:
            self._unchanged(same)
        if same < len(msgs):
            self._render(same, self.full)
        self.seen = list(msgs)

    def _unchanged(self, upto: int) -> None:
        if self.present:
            self.console.print(cjk(_("  [{index}] {summary}").format(
                index=span(0, upto - 1), summary=summary(self.session.messages[:upto])), "bold"))
            return
        self.console.print(cjk((_("  (message {index} unchanged; 'messages' shows all)") if upto == 1
                                else _("  (messages {index} unchanged; 'messages' shows all)")).format(
            index=span(0, upto - 1)), "dim"))

    def show_all(self, full: bool = False) -> None:
        self._render(0, full)
        self.seen = list(self.session.messages)

    def changed(self) -> None:
        """After the user changed the history: the whole view, what comes next, narration."""
        self.show_all()
        self.last = self.session.actions[-1] if self.session.actions else None
        self.banner()

    def _render(self, start: int, full: bool, focus: set[int] | None = None) -> None:
        self.console.print(render_messages(
            self.session.messages, findings=self.findings(), full=full, start=start,
            meta=view_run.message_meta(self.session), in_progress=self.session.phase is Phase.TOOLS,
            focus=focus))

    def focus(self, target: str) -> None:
        indices = focus_indices(self.session.messages, target)
        self._render(0, self.full, focus=indices)

    def banner(self) -> None:
        s = self.session
        if s.stop_reason is not None:
            empty = _(" (warning: the answer is empty)") if view_run.empty_answer(s) else ""
            style = ("bold green" if s.stop_reason is StopReason.COMPLETED and not empty
                     else "bold red" if not empty else "bold yellow")
            self.console.print(cjk(Text.assemble(
                (_("■ stopped: "), "bold"), (view_run.stop_label(s.stop_reason.value), style),
                (empty, "bold yellow"), stopped_tail(safe(view_run.stop_text(s).rstrip()), go_on(s)))))
        elif s.phase is Phase.MODEL:
            self.console.print(cjk(_("▶ next: ask the model (turn {turn}) with {n} message(s)").format(
                turn=len(s.turns) + 1, n=len(s.messages)), "bold"))
        else:
            self._pending_banner()
        self.narrate()

    def _pending_banner(self) -> None:
        calls = [f"{safe(c.get('id'))} {safe(call_name(c))}({shown_arguments(call_arguments(c))})"
                 for c in self.session.pending]
        head = _("▶ next: execute {n} call(s):").format(n=len(calls))
        one = f"{head}{'' if head.endswith('：') else ' '}{calls[0]}" if len(calls) == 1 else ""
        if one and cell_len(one) <= self.console.width:
            self.console.print(Text(one, style="bold"))
            return
        self.console.print(Text(head, style="bold"))   # a call a line, folded under itself
        width = max(20, self.console.width - 4)
        for call in calls:
            parts = chop_cells(call, width) if self.console.is_terminal else [call]
            self.console.print(Text("\n".join("    " + p for p in parts), style="bold"),
                               soft_wrap=True)

    def narrate(self) -> None:
        if not self.explain:
            return
        text = cjk(safe(narrate(self.session, self.last)), "cyan" if self.present else "italic cyan")
        words = PROTOCOL_WORDS if language() != "en" else PROTOCOL_WORDS[:4]
        text.highlight_words(words, TERM_STYLE)
        self.console.print(Paragraph(text))

    # -- looking -------------------------------------------------------------------------
    def show_tools(self) -> None:
        from agentdbg.render.tools import tools_table

        self.console.print(tools_table(self.session.toolset))

    def show_usage(self) -> None:
        from agentdbg.render.budget import budget_of_session, render_budget

        s = self.session
        for t in s.turns:
            u = t.usage
            self.say(_("turn {turn}: {prompt} prompt + {completion} completion tokens{estimated}; "
                       "model {model_ms} ms; tools {tool_ms} ms").format(
                turn=t.turn, prompt=u.get("prompt_tokens", 0), completion=u.get("completion_tokens", 0),
                estimated=_(" (estimated)") if u.get("estimated") else "",
                model_ms=f"{t.latency_ms:.1f}", tool_ms=f"{t.tool_ms:.1f}"))
        total = s.usage
        self.say(_("total: {tokens} tokens over {n} request(s)").format(
            tokens=total["total_tokens"], n=len(s.turns)))
        if s.cut_turns:
            cut = sum(int(t.usage.get("total_tokens") or 0) for t in s.cut_turns)
            self.say(_("and {n} request(s) whose replies were cut from the history "
                       "(rewind, retry, drop): {tokens} tokens").format(n=len(s.cut_turns),
                                                                       tokens=cut))
        self.console.print(render_budget(budget_of_session(s)))

    def show_glossary(self, glossary: list[tuple[str, str]]) -> None:
        for word, meaning in glossary:
            self.console.print(Paragraph(Text.assemble((word, TERM_STYLE), _(": "), _(meaning))))


def _same(a: Any, b: Any) -> bool:
    return a is b or a == b


#: how a sentence ends, in either script: the stop detail keeps its own (an API's text is quoted
#: as written) and the line's next sentence follows it; a closing parenthesis ends none
#: ("… (--max-turns)" is followed by a full stop)
ENDS = (".", "?", "!", "。", "？", "！")
WIDE_ENDS = ("。", "？", "！")

GO_ON = N_("'rewind N' or 'retry' to go on, 'save PATH', 'quit'.")
#: after an HTTP 400 the history is what the API refuses: fixing it is what works
FIX_FIRST = N_("Fix the history ('drop N', 'edit N' or 'rewind N'), then 'next' sends it; "
               "'retry' sends the same request again and gets the same answer; 'save PATH', "
               "'quit'.")
#: after a 429, a 5xx or no answer at all the same request may pass
SEND_AGAIN = N_("'retry' sends the same request again; 'rewind N' goes on from message N; "
                "'save PATH', 'quit'.")


def go_on(session: Any) -> Msg:
    """What works from a stopped run: after a model error, what the error calls for."""
    if session.stop_reason is not StopReason.MODEL_ERROR or session.model_failure is None:
        return Msg(GO_ON)
    return Msg(FIX_FIRST if getattr(session.model_failure, "status", None) == 400 else SEND_AGAIN)


def stopped_tail(detail: str, hint: Msg | None = None) -> str:
    """`` — DETAIL. 'rewind N' or 'retry' …``: a full stop only where the detail has none."""
    said = (hint or Msg(GO_ON)).tr()
    if not detail.endswith(ENDS):
        return _(" — {detail}. {hint}").format(detail=detail, hint=said)
    tail = _(" — {detail} {hint}").format(detail=detail, hint=said)
    return tail.replace(detail + " ", detail, 1) if detail.endswith(WIDE_ENDS) else tail


def span(first: int, last: int) -> str:
    """Message indices as said on screen: ``3`` alone, or ``0–3``."""
    return str(first) if first == last else f"{first}–{last}"


def summary(messages: list) -> str:
    """One line for messages a room has seen: each role, with the labels of its calls and
    results (``user · assistant →A · tool ←A ✓``)."""
    from agentdbg.checker.pairing import ResultState, analyze

    pairing = analyze(messages)
    out = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else "?"
        text = str(role)
        if role == "assistant" and isinstance(m.get("tool_calls"), list):
            labels = [pairing.label(c.get("id")) if isinstance(c, dict) else None
                      for c in m["tool_calls"]]
            text += " →" + ",".join(label or "?" for label in labels)
        elif role == "tool":
            label = pairing.label(m.get("tool_call_id"))
            ok = pairing.status.get((i,)) is ResultState.OK
            text += f" ←{label or '?'} {'✓' if ok else '✗'}"
        out.append(text)
    return " · ".join(out)


def focus_indices(messages: list, target: str) -> set[int]:
    """The messages ``focus`` highlights: message N, or the call (label, id or id prefix) and
    the result that answers it. ValueError (a ``Msg``) when nothing matches."""
    from agentdbg.checker.pairing import analyze
    from agentdbg.i18n import Msg

    if target.isdigit():
        index = int(target)
        if not 0 <= index < len(messages):
            raise ValueError(Msg("no message {index}; messages are 0..{last}",
                                 {"index": index, "last": len(messages) - 1}))
        return {index}
    pairing = analyze(messages)
    found: set[int] = set()
    for i, m in enumerate(messages):
        for c in (m.get("tool_calls") or []) if isinstance(m, dict) else []:
            cid = c.get("id") if isinstance(c, dict) else None
            if isinstance(cid, str) and (cid == target or (cid.startswith(target) and len(target) > 2)
                                         or pairing.label(cid) == target):
                found.add(i)
                found.update(j for j, n in enumerate(messages)
                             if isinstance(n, dict) and n.get("role") == "tool"
                             and n.get("tool_call_id") == cid)
    if not found:
        raise ValueError(Msg("no message or call {target}; 'messages' shows the calls and their "
                             "labels", {"target": repr(target)}))
    return found
