"""Step-mode commands: changing the history, approvals, breakpoints."""

from __future__ import annotations

from agentdbg.engine.actions import message_problem
from agentdbg.engine.phases import Phase
from agentdbg.i18n import N_, Msg, _, tr
from agentdbg.repl.table import CommandError, Stepper, call_arg, command, index_arg, one_arg, section

section(N_("changing the history"))


@command("edit", "e", args=("index",))
def cmd_edit(dbg: Stepper, arg: str) -> None:
    """edit N
    edit message N as JSON in $EDITOR
    A tool result, or an assistant message's content, tool calls and arguments; the
    inline editor is used when $EDITOR is unset. The JSON is validated before it is
    accepted; the message is marked as edited."""
    index = index_arg(dbg, one_arg(arg, N_("edit N")))
    original = dbg.session.messages[index]
    try:
        message = dbg.edit_json(original, _("message"))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    problem = message_problem(message)
    if problem is not None:
        raise CommandError(Msg("{problem}; message unchanged", {"problem": problem}))
    if message == original:
        dbg.say(_("no change"))
        return
    dbg.session.edit(index, message)
    dbg.say(_("message {index} edited").format(index=index))
    dbg.changed()


@command("inject", "i", args=("call", "fault"))
def cmd_inject(dbg: Stepper, arg: str) -> None:
    """inject CALL KIND
    answer a call, or replace a result, with a fault
    CALL: a call's label (A, B …), a tool_call_id (or a unique prefix), the index of a
    tool message, or the name of a pending tool. KIND: timeout, invalid_json,
    invalid_arguments, internal_error, not_found, empty, oversized, rate_limited, denied,
    or inline JSON used as the content. invalid_json and oversized spoil the tool's own
    result (a read-only tool still runs for it); the others replace the result."""
    from agentdbg.engine.faults import parse_fault

    target, _sep, kind = arg.strip().partition(" ")
    if not target or not kind.strip():
        raise CommandError(Msg("usage: {usage}", {"usage": Msg(N_("inject CALL KIND"))}))
    try:
        fault = parse_fault(kind)
        dbg.say(tr(dbg.session.inject(call_arg(dbg, target), fault)))
    except (ValueError, IndexError) as exc:
        raise CommandError(exc.args[0] if exc.args else str(exc)) from None
    if dbg.session.phase is not Phase.TOOLS:
        dbg.changed()


@command("fail", "f", args=("tool", "fault", "flag"))
def cmd_fail(dbg: Stepper, arg: str) -> None:
    """fail TOOL KIND [--sticky]
    make the next call of TOOL (--sticky: every call) fail
    The call gets the fault KIND, as for inject: invalid_json and oversized run a read-only
    tool and spoil its real result; the other kinds answer without running the tool."""
    from agentdbg.engine.faults import parse_fault

    words = arg.split()
    sticky = "--sticky" in words
    words = [w for w in words if w != "--sticky"]
    if len(words) < 2:
        raise CommandError(Msg("usage: {usage}", {"usage": Msg(N_("fail TOOL KIND [--sticky]"))}))
    try:
        fault = parse_fault(" ".join(words[1:]))
        said = dbg.session.fail(words[0], fault, sticky)
    except (ValueError, KeyError) as exc:
        raise CommandError(exc.args[0] if exc.args else str(exc)) from None
    dbg.say(tr(said))


@command("drop", "d", args=("index",))
def cmd_drop(dbg: Stepper, arg: str) -> None:
    """drop N
    remove message N
    E.g. the assistant message, to see the orphan tool result it leaves (the checker
    flags it at once)."""
    index = index_arg(dbg, one_arg(arg, N_("drop N")))
    removed = dbg.session.drop(index)
    dbg.say(_("dropped message {index} ({role})").format(index=index, role=removed.get("role")))
    dbg.changed()


@command("rewind", "r", args=("index",))
def cmd_rewind(dbg: Stepper, arg: str) -> None:
    """rewind N
    keep messages 0..N and go on live from there
    The messages after N are cut; the next phase follows from message N."""
    index = index_arg(dbg, one_arg(arg, N_("rewind N")))
    cut = dbg.session.rewind(index)
    dbg.say(_("rewound to message {index}; {cut} message(s) cut").format(index=index, cut=cut))
    dbg.changed()


@command("retry", "rt")
def cmd_retry(dbg: Stepper, arg: str) -> None:
    """retry
    ask the model again for the last turn
    Drops the last assistant message and its results first. After a model error (an HTTP
    400, 429, 5xx or no connection) nothing is dropped: the next step sends the request that
    got no reply again, as it was."""
    try:
        cut = dbg.session.retry()
    except IndexError as exc:
        raise CommandError(exc.args[0] if exc.args else str(exc)) from None
    dbg.say(_("{cut} message(s) removed; the next step asks the model again").format(cut=cut)
            if cut else _("nothing removed; the next step sends the same request again"))
    dbg.changed()


section(N_("approvals"))


def _decide(dbg: Stepper, arg: str, approved: bool) -> None:
    waiting = dbg.session.needs_approval()
    if not waiting:
        raise CommandError(Msg("no call is waiting for approval"))
    target = call_arg(dbg, arg.strip() or "all")
    chosen = [c for c in waiting if target == "all" or str(c.get("id")) == target]
    if not chosen:
        ids = ", ".join(str(c.get("id")) for c in waiting)
        raise CommandError(Msg("no waiting call has the id {target} (ids must match exactly; "
                               "waiting: {ids})", {"target": repr(target), "ids": ids}))
    if len(chosen) > 1 and target != "all":
        raise CommandError(Msg("{n} waiting calls share the id {target}; use 'all'",
                               {"n": len(chosen), "target": repr(target)}))
    for call in chosen:
        dbg.session.decide(call, approved)
    ids = ", ".join(str(c.get("id")) for c in chosen)
    dbg.say((_("approved: {ids}") if approved else _("denied: {ids}")).format(ids=ids))


@command("approve", "a", args=("approval",))
def cmd_approve(dbg: Stepper, arg: str) -> None:
    """approve [CALL|all]
    approve pending side-effecting calls
    All of them by default; CALL is its label (A, B …) or its tool_call_id, exactly."""
    _decide(dbg, arg, True)


@command("deny", "dn", args=("approval",))
def cmd_deny(dbg: Stepper, arg: str) -> None:
    """deny [CALL|all]
    deny pending side-effecting calls
    The model gets a 'denied' error result. All of them by default; CALL is its label
    (A, B …) or its tool_call_id, exactly."""
    _decide(dbg, arg, False)


section(N_("breakpoints"))

BREAK_USAGE = N_("break tool NAME | break turn N | break error | break finding")


@command("break", "b", args=("break", "tool"))
def cmd_break(dbg: Stepper, arg: str) -> None:
    """break tool NAME | break turn N | break error | break finding
    pause 'continue' at a tool, a turn, an error or a finding
    Before a call of NAME, before model turn N, after a tool result that is an error,
    or whenever the checker has a finding."""
    words = arg.split()
    if not words or words[0] not in ("tool", "turn", "error", "finding"):
        raise CommandError(Msg("usage: {usage}", {"usage": Msg(BREAK_USAGE)}))
    kind, value = words[0], (words[1] if len(words) > 1 else None)
    try:
        bp = dbg.breakpoints.add_checked(kind, value, dbg.session.toolset)
    except ValueError as exc:
        raise CommandError(exc.args[0]) from None
    dbg.say(_("breakpoint {id}: {what}").format(id=bp.id, what=bp.describe()))


@command("breaks", "bl")
def cmd_breaks(dbg: Stepper, arg: str) -> None:
    """breaks
    list the breakpoints
    Each with its id (for 'clear ID') and how often it was hit."""
    if not dbg.breakpoints.items:
        dbg.say(_("no breakpoints"))
    for bp in dbg.breakpoints.items:
        dbg.say(_("{id}: {what}  (hit {hits} time(s))").format(id=bp.id, what=bp.describe(),
                                                              hits=bp.hits))


@command("clear", "cl", args=("clear",))
def cmd_clear(dbg: Stepper, arg: str) -> None:
    """clear [breaks|screen|ID]
    clear the screen or the breakpoints (asks which)
    'clear screen' (or 'cls', Ctrl-L) clears the screen; 'clear breaks' removes every
    breakpoint, 'clear ID' one of them; 'clear' alone asks which."""
    word = arg.strip()
    if not word:
        answer = dbg.ask(_("Clear what: the screen (s), the breakpoints (b), or nothing "
                           "(Enter)? ")).strip().lower()
        word = {"s": "screen", "b": "breaks"}.get(answer[:1], "")
        if not word:
            dbg.say(_("nothing cleared"))
            return
    if word in ("screen", "cls"):
        dbg.clear_screen()
        return
    if word in ("breaks", "breakpoints", "all"):
        n = dbg.breakpoints.clear(None)
        dbg.say(_("removed {n} breakpoint(s)").format(n=n))
        return
    try:
        removed = dbg.breakpoints.clear(word)
    except KeyError as exc:
        raise CommandError(exc.args[0]) from None
    dbg.say(_("removed {n} breakpoint(s)").format(n=removed))
