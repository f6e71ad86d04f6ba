"""Every call from the report package into pairing, the checker and the terminal renderers.

The rest of ``agentdbg.report`` reaches those modules only through here, so when they
move (pairing into the checker as one analysis, renderers into ``render/``) this is the
one file to repoint. Heavy modules (rich, the checker's jsonschema) load inside functions.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

FOLD_AT = 800  # the terminal view folds contents longer than this (render.view.FOLD_AT)


def pair(messages: list, *, in_progress: bool = False) -> Any:
    """The checker's one pairing analysis: which tool message answers which call."""
    from agentdbg.checker.pairing import analyze

    return analyze(messages, in_progress=in_progress)


def call_status(index: int, pos: int, repeated: bool, pairing: Any) -> tuple[str, str]:
    """The terminal view's mark for call ``pos`` of message ``index``: (text, style)."""
    from agentdbg.render.view import call_status as _status

    return _status(index, pos, repeated, pairing)


def result_status(index: int, message: dict, pairing: Any, messages: list) -> tuple:
    """The terminal view's mark for tool message ``index``: (text, style, asst, name)."""
    from agentdbg.render.view import result_status as _status

    return _status(index, message, pairing, messages)


def check(messages: list, tools: list | None, profile: str = "openai", *,
          in_progress: bool = False) -> list:
    """Checker findings for a messages array (with the request's tools when known)."""
    from agentdbg.checker import check as _check

    request: Any = {"messages": messages, "tools": tools} if tools else messages
    return _check(request, profile, in_progress=in_progress)


def check_native(fmt: str, body: Any, messages: list, tools: list | None, params: dict,
                 profile: str, prior: list | None) -> tuple[list, Any]:
    """A recorded Responses / Anthropic request judged in its own format, as ``check`` and
    replay judge it (findings on the chat messages that hold the items). ``body``: the
    native body the proxy recorded (None: rebuilt from the chat form)."""
    from agentdbg.checker.judge import judge_native_request

    return judge_native_request(fmt, body, messages, tools, params, profile, prior)


def no_text(message: dict) -> bool:
    """The run view's test for an answer with no text."""
    from agentdbg.render.run import no_text as _no_text

    return _no_text(message)


def empty_answer_finding(index: int, message: dict) -> Any:
    """The run view's warning on an empty final answer."""
    from agentdbg.render.run import empty_answer_finding as _finding

    return _finding(index, message)


def finding_from_dict(d: dict) -> Any:
    """A recorded finding (``Finding.to_dict()`` in a transcript) back as a Finding: every
    field it wrote, where it is of its type (a hand-made file's odd values are left out)."""
    from agentdbg.checker import Finding

    return Finding.from_dict(d)


def is_checker_rule(rule: str) -> bool:
    """A rule the checker finds again from one request (not one only a sequence shows)."""
    from agentdbg.checker import RULES

    return rule in RULES and RULES[rule].scope != "conversation"


def safe(text: object) -> str:
    """Control and invisible characters made visible (as in every terminal view)."""
    from agentdbg.render.safe import safe as _safe

    return _safe(text)


_REDACTOR: Any = None


def redact(text: str) -> str:
    """The transcripts' default secret patterns applied again (a hand-made or older file)."""
    global _REDACTOR
    if _REDACTOR is None:
        from agentdbg.transcript import Redactor

        _REDACTOR = Redactor()
    return _REDACTOR.text(text)


def first_difference(a: Any, b: Any, path: str = "messages") -> tuple[str, Any, Any] | None:
    from agentdbg.transcript.compare import first_difference as _first
    from agentdbg.wire.common import strip_wire

    # what a format keeps verbatim for its own round trip is not part of the conversation
    return _first(strip_wire(a), strip_wire(b), path)


def describe_difference(diff: tuple[str, Any, Any]) -> str:
    from agentdbg.transcript.compare import describe_difference as _describe

    return _describe(diff)


def render_view_text(messages: list, *, findings: Iterable = (), indices: Iterable[int] | None = None,
                     width: int = 80, meta: dict[int, str] | None = None) -> str:
    """The terminal messages view as plain text (no colour) at ``width`` columns.

    ``indices``: only these messages (pairing and findings still consider the whole
    array); None shows them all.
    """
    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text

    from agentdbg.render.view import ConversationView, chat, render_messages

    console = Console(width=width, no_color=True, color_system=None, record=True,
                      force_terminal=False, highlight=False, file=io.StringIO())
    findings = list(findings)
    if indices is None:
        console.print(render_messages(messages, findings=findings, meta=meta))
        return _plain(console.export_text())
    view = ConversationView(chat(), messages, pair(messages))
    by_index: dict[Any, list] = {}
    for f in findings:
        by_index.setdefault(getattr(f, "index", None), []).append(f)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for i in sorted(set(indices)):
        if not 0 <= i < len(messages):
            continue
        grid.add_row(Text(f"[{i}]"), view.label(messages[i]),
                     Group(*view.entry(i, meta=(meta or {}).get(i), findings=by_index.get(i, ()))))
    console.print(grid)
    return _plain(console.export_text())


def _plain(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines()) + "\n"


def render_text(renderable: Any, width: int = 100) -> str:
    """Any rich renderable as plain text (no colour)."""
    from rich.console import Console

    console = Console(width=width, no_color=True, color_system=None, record=True,
                      force_terminal=False, highlight=False, file=io.StringIO())
    console.print(renderable)
    return _plain(console.export_text())
