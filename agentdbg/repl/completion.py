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
        kind = cmd.args[position - 1]
        meta = self.labels(kind) if kind in ("call", "approval") else {}
        for option in [*meta, *(o for o in self.options(kind) if o not in meta)]:
            if option.startswith(prefix):
                yield Completion(option, start_position=-len(prefix), display_meta=meta.get(option))

    def labels(self, kind: str) -> dict[str, str]:
        """The labels on screen (A, B …) of the calls a ``kind`` argument may name, each with
        its call's tool name: every call of the history, or those waiting for approval."""
        from agentdbg.checker.pairing import analyze

        s = self.dbg.session
        calls = [c for m in s.messages if isinstance(m, dict)
                 for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
        if kind == "approval":
            waiting = {c.get("id") for c in s.needs_approval()}
            calls = [c for c in calls if c.get("id") in waiting]
        if not calls:
            return {}
        labels = analyze(s.messages).labels
        named = {str(c.get("id")) for c in calls} | {call_name(c) or "" for c in calls}
        found: dict[str, str] = {}
        for c in calls:
            cid = c.get("id")
            label = labels.get(cid) if isinstance(cid, str) else None
            if label is not None and label not in named:    # an id or a name wins over a label
                found.setdefault(label, call_name(c) or "")
        return found

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
        if kind == "clear":
            return ["screen", "breaks", *(str(b.id) for b in self.dbg.breakpoints.items)]
        if kind == "approval":
            return [str(c.get("id")) for c in s.needs_approval()] + ["all"]
        if kind == "command":
            return sorted(COMMANDS)
        return []
