"""``agentdbg run``: step the session to the end, printing each turn's messages.

Each turn shows the whole messages array: messages shown before as one line each
(role, label, pairing status, a preview; their findings in full), new ones in full;
``--full`` prints every message in full every turn.

The transcript is written by an observer as events happen; whatever ends the run
(a model error, Ctrl-C, SIGTERM, a crash), the session is stopped here so the
transcript gets its stop event.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.engine.phases import Phase
from agentdbg.engine.replaying import ActionReplayed
from agentdbg.engine.session import Event, ModelReplied, RequestBlocked, Session, StopReason, ToolsExecuted
from agentdbg.errors import ExitStatus
from agentdbg.i18n import N_, Msg, _
from agentdbg.messages import call_name, utf8_json
from agentdbg.options import RunOptions
from agentdbg.render.safe import safe
from agentdbg.transcript.document import run_document
from agentdbg.transcript.redact import safe_url

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.engine.replaying import Replay

#: seconds a phase runs before a terminal shows what it is waiting for
PROGRESS_AFTER = 1.0
#: recorded actions a replay shows one by one; the rest are counted where they were re-applied.
#: A recording may hold a million (a script that edits in a loop): a line each was 72% of the
#: replay's time, and no one reads a million lines; the first ones show what was done, and
#: ``report`` lists up to 1,000 with their context
ACTIONS_SHOWN = 100


def _live_steps(session: Session, console: Console | None = None) -> Iterator[Event]:
    while not session.done:
        with _progress(console, _waiting_for(session)):
            event = session.step()
        yield event


def _waiting_for(session: Session) -> str:
    if session.phase is Phase.TOOLS:
        names = ", ".join(dict.fromkeys(str(call_name(c)) for c in session.pending))
        return _("running {names} ({n} call(s)) … Ctrl-C cancels").format(
            names=names, n=len(session.pending))
    return _("waiting for the model (turn {turn}) … Ctrl-C cancels").format(turn=len(session.turns) + 1)


@contextmanager
def _progress(console: Console | None, text: str) -> Iterator[None]:
    """A spinner with ``text`` once the phase has taken PROGRESS_AFTER seconds; only on a
    terminal (piped output and --json get nothing)."""
    if console is None or not console.is_terminal:
        yield
        return
    from rich.text import Text

    status = console.status(Text(safe(text)))
    lock, state = threading.Lock(), {"done": False}

    def show() -> None:
        with lock:
            if not state["done"]:
                status.start()

    timer = threading.Timer(PROGRESS_AFTER, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            status.stop()


def run_batch(session: Session, console: Console, options: RunOptions, replay: Replay | None = None,
              transcript: Path | None = None) -> ExitStatus:
    """Step ``session`` to its end, printing each turn (or, with --json, one document at the end
    that names the ``transcript`` being written). The text view (Rich and the renderers) is
    imported only to be shown: ``--json`` does without it."""
    show = not options.json_out
    if show:
        from agentdbg.render import run as view_run
        from agentdbg.render.view import render_finding

        console.print(view_run.render_header(options.model_desc, session.toolset,
                                             options.offline, options.title, compact=options.present))
    shown = 0
    actions = _Actions(console)
    try:
        live = _live_steps(session, console if show else None)
        for event in (live if replay is None else replay.steps()):
            if not show:
                continue
            if isinstance(event, ActionReplayed):  # your step-mode action, where it happened
                actions.replayed(event)
                shown = min(shown, len(session.messages))
                continue
            actions.flush()
            if isinstance(event, ModelReplied):
                console.print(view_run.render_turn_title(event.turn))
                if event.stats.note:
                    console.print(view_run.render_note(event.stats.note))
            if isinstance(event, RequestBlocked):
                for finding in event.findings:
                    console.print(render_finding(finding))
            if isinstance(event, ToolsExecuted) and replay is None:
                for o in event.outcomes:
                    spec = session.toolset.get(o.name)
                    # a tool of an untrusted tools file: the run's first line said why
                    if o.error_type == "denied" and not o.injected and \
                            not (spec is not None and spec.blocked):
                        console.print(view_run.render_denied(o), soft_wrap=True)
            if isinstance(event, ToolsExecuted) and options.debug:
                for detail in view_run.outcome_details(event.outcomes):
                    console.print(detail)
            # a proxy recording has no tool phase of ours: the app's next request shows it
            after_reply = isinstance(event, ModelReplied) and getattr(replay, "app_driven", False)
            if isinstance(event, ToolsExecuted) or session.done or after_reply:
                _show(console, session, shown, options)
                shown = len(session.messages)
    except KeyboardInterrupt as exc:
        from agentdbg.errors import Terminated

        session.cancel(Msg(N_("terminated (SIGTERM)")) if isinstance(exc, Terminated)
                       else Msg(N_("cancelled by the user (Ctrl-C)")))
    finally:
        if not session.done:  # an unexpected error: the transcript still gets its stop event
            session.cancel(Msg(N_("the run ended abnormally; everything before this was recorded")))
    if options.json_out:
        doc = run_document(session, model=session.config.model, base_url=safe_url(options.base_url))
        from agentdbg.render.budget import last_request_budget

        doc["budget"] = last_request_budget(session)
        if transcript is not None:
            doc["transcript"] = str(transcript)
        sys.stdout.write(document_text(doc) + "\n")
    else:
        actions.flush()
        if session.stop_reason is not StopReason.COMPLETED and shown < len(session.messages):
            # stopped by a signal: shown as it stands, not judged again (a stop is due now)
            _show(console, session, shown, options,
                  judge=session.stop_reason is not StopReason.CANCELLED)
        head, *lines = view_run.render_footer(session, replayed=replay is not None)
        console.print(head)
        for line in lines:
            console.print(line, soft_wrap=True)
    return session.stop_reason.exit_status if session.stop_reason else ExitStatus.INTERNAL


class _Actions:
    """Re-applied actions on the terminal: the first ``ACTIONS_SHOWN`` one line each, then
    one line saying how many more were re-applied there."""

    def __init__(self, console: Console) -> None:
        self.console, self.seen, self.hidden = console, 0, 0

    def replayed(self, event: ActionReplayed) -> None:
        from agentdbg.render import run as view_run

        self.seen += 1
        if self.seen <= ACTIONS_SHOWN:
            self.console.print(view_run.render_action(event.action))
        else:
            self.hidden += 1

    def flush(self) -> None:
        if self.hidden:
            from rich.text import Text

            self.console.print(Text(_("✎ {n} more recorded action(s) re-applied here, not shown "
                                      "one by one (a replay shows its first {shown})").format(
                                          n=f"{self.hidden:,}", shown=ACTIONS_SHOWN), style="magenta"))
            self.hidden = 0


def document_text(doc: dict) -> str:
    """The ``--json`` document, indented by two. ``orjson`` writes it: the ``json`` module
    encodes an indented document in pure Python (0.17 s for a 1,000-turn run, orjson 2 ms);
    the text is the same but for numbers, which keep their value: a float below 1e-4 is
    written as ``0.00001`` (``json``: ``1e-05``), and a non-finite one (a recording's NaN) as
    ``null``, so the document is strict JSON. What orjson refuses (a key that is not a string,
    an integer past 64 bits, a lone surrogate, nesting past 255) is written by ``json``."""
    import orjson

    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:     # orjson.JSONEncodeError is one
        return utf8_json(doc, indent=2)


def _show(console: Console, session: Session, shown: int, options: RunOptions, judge: bool = True) -> None:
    """The whole messages array: new messages marked and in full, the others one line each
    (all in full with --full), with the checker's findings on them (``judge``)."""
    from agentdbg.checker import check
    from agentdbg.render import run as view_run
    from agentdbg.render.view import render_messages

    findings = check(session.request().body(), options.profile,
                     in_progress=bool(session.pending)) if judge else []
    findings += view_run.answer_findings(session)
    console.print(render_messages(session.messages, new_from=shown, full=options.full,
                                  seen=0 if options.full else shown, brief_seen=True,
                                  meta=view_run.message_meta(session), findings=findings,
                                  in_progress=bool(session.pending)))
