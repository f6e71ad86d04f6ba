"""What the proxy prints: each request's new messages with its findings, each response.

Output per request is bounded by what is new in the conversation: messages the
previous request already carried are left out unless a finding sits on them (one line
each, then the finding); ``--full`` prints the whole array every time.
"""

from __future__ import annotations

from rich.rule import Rule
from rich.text import Text

from agentdbg.checker import summary
from agentdbg.render.safe import safe
from agentdbg.render.view import render_messages
from agentdbg.transcript.compare import common_prefix


class ProxyView:
    """Prints from the analyst's thread only (one writer, no lock needed)."""

    def __init__(self, console, redactor, full: bool = False):
        self.console = console
        self.redact = redactor
        self.full = full
        self.count = 0

    def show_request(self, conv, body: dict, findings: list) -> None:
        messages = self.redact(body["messages"])
        self.count += 1
        stream = " · stream" if body.get("stream") else ""
        n = len(messages)
        self.console.print(Rule(f"request {self.count} · conversation {conv.number} · "
                                f"{n} message{'s' if n != 1 else ''}{stream}", align="left",
                                style="dim"))
        new_from = common_prefix(conv.last_messages, body["messages"]) if conv.requests else 0
        self.console.print(render_messages(messages, findings=findings, new_from=new_from,
                                           full=self.full, seen=0 if self.full else new_from,
                                           hide_seen=True))
        rules = ", ".join(sorted({f"{f.rule}@{f.index}" for f in findings}))
        style = "bold red" if any(f.severity == "error" for f in findings) else \
            "bold yellow" if findings else "bold green"
        self.console.print(Text(f"{'✗' if findings else '✓'} {summary(findings)}"
                                f"{': ' + rules if rules else ''}", style=style), soft_wrap=True)

    def show_response(self, conv, messages: list, reply: dict, shape: list[str],
                      latency_ms: float) -> None:
        shown = self.redact(list(messages) + [reply])
        self.console.print(Text(f"← response for conversation {conv.number} "
                                f"({latency_ms:.0f} ms):", style="dim"))
        self.console.print(render_messages(shown, start=len(messages), full=self.full,
                                           in_progress=bool(reply.get("tool_calls"))))
        for line in shape:
            self.console.print(Text(f"  stream: {safe(line)}", style="yellow"))

    def note(self, text: str) -> None:
        self.console.print(Text(safe(self.redact(text)), style="dim"), soft_wrap=True)
