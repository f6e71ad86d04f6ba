"""Tab completion from the command table plus live state (indices, call ids, tools)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion

from agentdbg.engine.faults import KINDS
from agentdbg.messages import call_name
from agentdbg.repl.commands import ALIASES, COMMANDS

if TYPE_CHECKING:
    from prompt_toolkit.document import Document

    from agentdbg.repl.table import Stepper


class DebuggerCompleter(Completer):
    def __init__(self, dbg: Stepper) -> None:
        self.dbg = dbg

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterator[Completion]:
        text = document.text_before_cursor
        words = text.split()
        if not words or (len(words) == 1 and not text.endswith(" ")):
            prefix = words[0] if words else ""
            for name in sorted(set(COMMANDS) | set(ALIASES)):
                if name.startswith(prefix):
                    yield Completion(name, start_position=-len(prefix))
            return
        cmd = COMMANDS.get(ALIASES.get(words[0], words[0]))
        if cmd is None:
            return
        position = len(words) - 1 if not text.endswith(" ") else len(words)
        prefix = "" if text.endswith(" ") else words[-1]
        if position - 1 >= len(cmd.args):
            return
        for option in self.options(cmd.args[position - 1]):
            if option.startswith(prefix):
                yield Completion(option, start_position=-len(prefix))

    def options(self, kind: str) -> list[str]:
        s = self.dbg.session
        if kind == "index":
            return [str(i) for i in range(len(s.messages))]
        if kind == "call":
            pending = [str(c.get("id")) for c in s.pending] + [call_name(c) or "" for c in s.pending]
            tool_msgs = [str(i) for i, m in enumerate(s.messages) if m.get("role") == "tool"]
            finished = [str(m.get("tool_call_id")) for m in s.messages if m.get("role") == "tool"]
            return list(dict.fromkeys(pending + finished + tool_msgs))
        if kind == "tool":
            return s.toolset.names()
        if kind == "fault":
            return list(KINDS)
        if kind == "flag":
            return ["--sticky"]
        if kind == "break":
            return ["tool", "turn", "error", "finding"]
        if kind == "breakpoint":
            return [str(b.id) for b in self.dbg.breakpoints.items]
        if kind == "approval":
            return [str(c.get("id")) for c in s.needs_approval()] + ["all"]
        if kind == "command":
            return sorted(COMMANDS)
        return []
