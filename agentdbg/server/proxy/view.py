"""What the proxy prints: each request's new messages with its findings, each response.

Output per request is bounded by what is new in the conversation: messages (items) the
previous request already carried are left out unless a finding sits on them (one line
each, then the finding); ``--full`` prints the whole array every time. Every format is drawn
on its own entries (messages, items, contents) by the one messages view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.rule import Rule
from rich.text import Text

from agentdbg.checker import summary
from agentdbg.i18n import _, ngettext, pgettext, recorded, tr
from agentdbg.render.run import empty_answer_finding, no_text
from agentdbg.render.safe import safe
from agentdbg.render.view import render_conversation, render_finding, render_tools
from agentdbg.server.proxy.lineage import lineage_lines
from agentdbg.wire.common import stream_note

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console, RenderableType

    from agentdbg.conversation import JSON
    from agentdbg.server.proxy.conversations import Conversation
    from agentdbg.server.proxy.reading import Seen
    from agentdbg.transcript.redact import Redactor


def _unit(what: str) -> str:
    """What one entry of a request is called (a codec's ``unit``), in the chosen language."""
    return {"message": pgettext("unit", "message"), "item": pgettext("unit", "item"),
            "content": pgettext("unit", "content")}.get(what, what)


class ProxyView:
    """Prints from the analyst's thread only (one writer, no lock needed)."""

    def __init__(self, console: Console, redactor: Redactor, full: bool = False) -> None:
        self.console = console
        self.redact = redactor
        self.full = full
        self.count = 0
        # the analysis sets the tracker's parent_of
        self.tracker_parent: Callable[[Conversation], Conversation | None] = lambda conv: None

    def show_request(self, seen: Seen) -> None:
        body, findings = seen.body, seen.findings
        self.count += 1
        stream = _(" · stream") if body.get("stream") else ""
        n, what = self._size(seen)
        fmt = "" if seen.wire.chat_native else f" · {seen.wire.label}"
        conv = _("conversation {n}").format(n=seen.conv.number)
        if seen.conv.agent:
            conv = _("{conversation} ({agent})").format(conversation=conv, agent=safe(seen.conv.agent))
        title = ngettext("request {count} · {conversation} · {n} {unit}",
                         "request {count} · {conversation} · {n} {unit}s", n).format(
            count=self.count, conversation=conv, n=n, unit=_unit(what))
        self.console.print(Rule(f"{title}{fmt}{stream}", align="left", style="dim"))
        for line in lineage_lines(seen, self.tracker_parent):
            self.console.print(Text(safe(self.redact(line)), style="magenta"), soft_wrap=True)
        shown_from = 0 if self.full else seen.new_from
        if self.full or seen.new_from == 0:   # a conversation's first request shows its tools
            definitions = [d.to_dict() for d in seen.wire.tools(body)]
            self.console.print(render_tools(self.redact(definitions), self.full))
        self.console.print(render_conversation(seen.wire, self.redact(body), seen.pairing,
                                               findings=findings, new_from=seen.new_from,
                                               full=self.full, seen=shown_from, hide_seen=True,
                                               notes=self.redact(seen.notes)))
        for edit in seen.edits:
            if not edit.lost:
                said = tr(edit.shown) if edit.shown is not None else recorded(edit.text)
                self.console.print(Text("  " + _("history: {text} (note)").format(text=safe(said)),
                                        style="dim"), soft_wrap=True)
        rules = ", ".join(sorted({f"{f.rule}@{f.index}" for f in findings}))
        style = "bold red" if any(f.severity == "error" for f in findings) else \
            "bold yellow" if findings else "bold green"
        mark = "✗" if any(f.severity == "error" for f in findings) else "!" if findings else "✓"
        said = _("{summary}: {rules}").format(summary=summary(findings), rules=rules) if rules \
            else summary(findings)
        self.console.print(Text(f"{mark} {said}", style=style), soft_wrap=True)

    @staticmethod
    def _size(seen: Seen) -> tuple[int, str]:
        return len(seen.wire.items(seen.body)), seen.wire.unit

    def show_response(self, seen: Seen, reply: dict, native: JSON, shape: list[str],
                      latency_ms: float) -> None:
        self.console.print(Text(_("← response for conversation {n} ({ms} ms):").format(
            n=seen.conv.number, ms=f"{latency_ms:.0f}"), style="dim"))
        pending = bool(reply.get("tool_calls"))
        # a reply without calls ends the app's loop: with no text, the user gets nothing
        empty = [] if pending or not no_text(reply) else \
            [empty_answer_finding(len(seen.messages), reply)]
        if seen.wire.chat_native:
            messages = seen.messages
            self.console.print(render_conversation(seen.wire, self.redact(list(messages) + [reply]),
                                                   findings=empty, start=len(messages),
                                                   full=self.full, in_progress=pending))
        else:
            self.console.print(self._native_response(seen, native, pending))
            for finding in empty:
                self.console.print(render_finding(finding))
        for line in shape:
            said = _("stream: {note}").format(note=stream_note(self.redact(line)))
            self.console.print(Text("  " + safe(said), style="yellow"))

    def _native_response(self, seen: Seen, native: JSON, pending: bool) -> RenderableType:
        """The request's items (or messages) and the response's, drawn from the response on."""
        from agentdbg.checker.formats import pair

        before = seen.wire.items(seen.body)
        together = before + seen.wire.output(native)
        pairing = pair(seen.wire.name, together)
        return render_conversation(seen.wire, self.redact({seen.wire.key: together}), pairing,
                                   start=len(before), full=self.full, in_progress=pending)

    def note(self, text: str) -> None:
        self.console.print(Text(safe(self.redact(text)), style="dim"), soft_wrap=True)
