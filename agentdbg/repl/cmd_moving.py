"""Step-mode commands: moving through the loop, and looking at it."""

from __future__ import annotations

from agentdbg.engine.phases import Phase
from agentdbg.i18n import N_, Msg, _
from agentdbg.repl.table import CommandError, Stepper, call_arg, command, index_arg, one_arg, section

section(N_("moving"))


@command("next", "n")
def cmd_next(dbg: Stepper, arg: str) -> None:
    """next (or Enter)
    perform the pending phase: ask the model or run the calls
    Performs exactly one phase: the model request, or the execution of the pending tool
    calls (each answered with a role "tool" message carrying its tool_call_id). In a lesson,
    Enter runs the lesson's next step instead."""
    dbg.advance()


@command("continue", "c")
def cmd_continue(dbg: Stepper, arg: str) -> None:
    """continue
    run to a breakpoint, an error finding or the end
    Performs phases until a breakpoint is hit, the checker has an error-level finding, a
    call needs approval, or the run stops."""
    dbg.run_to_break()


@command("back")
def cmd_back(dbg: Stepper, arg: str) -> None:
    """back
    return to the phase before, re-running nothing
    The history, the pending calls and your pending faults are as they were before the last
    'next'; the transcript records it like a rewind."""
    dbg.back()


@command("send")
def cmd_send(dbg: Stepper, arg: str) -> None:
    """send
    send a request the checker blocked, as it is
    Sends the pending model request although the checker found errors in it, to see
    what the real API answers (the offline model answers as that API would)."""
    if dbg.session.phase is not Phase.MODEL:
        raise CommandError(Msg("nothing to send: the pending phase is not a model request"))
    dbg.session.send_once()
    dbg.advance()


@command("live")
def cmd_live(dbg: Stepper, arg: str) -> None:
    """live
    replay: go on with a live model and your tools
    Stops playing the recording: the model of --model/--base-url (else the offline
    model) answers from here, and the tools of --tools run."""
    dbg.go_live()


@command("play")
def cmd_play(dbg: Stepper, arg: str) -> None:
    """play
    replay: keep playing a recording your change made stale
    The recorded responses answered a different history; they are played anyway."""
    if dbg.replay is None:
        raise CommandError(Msg("not replaying a recording"))
    dbg.replay.model.knowingly = True
    dbg.say(_("playing the recording knowingly: responses may not fit the changed history"))


@command("quit", "q")
def cmd_quit(dbg: Stepper, arg: str) -> None:
    """quit
    leave the debugger
    The transcript keeps the run up to here (and --save writes it)."""
    dbg.quitting = True


section(N_("looking"))


@command("messages", "m")
def cmd_messages(dbg: Stepper, arg: str) -> None:
    """messages [--full]
    show the whole messages array with pairing and findings
    --full shows long contents unfolded."""
    dbg.show_all(full=arg.strip() == "--full" or dbg.full)


@command("show", "s", args=("index",))
def cmd_show(dbg: Stepper, arg: str) -> None:
    """show N
    show message N as JSON
    Message N exactly as it will be sent, pretty-printed. For a tool result whose handler
    raised, also the exception the model did not see (type, message, file:line)."""
    index = index_arg(dbg, one_arg(arg, N_("show N")))
    dbg.print_json(dbg.session.messages[index], title=_("message {index}").format(index=index))
    outcome = dbg.session.outcome_at.get(index)
    if outcome is not None and not outcome.ok and outcome.cause:
        debug = bool(getattr(dbg.options, "debug", False))
        said = _("the handler raised {cause} — the model saw only the {error} error above").format(
            cause=outcome.cause, error=outcome.error_type)
        dbg.say(said if outcome.detail and debug else said + _("; --debug prints the traceback"))
        if outcome.detail and debug:
            dbg.say(outcome.detail)


@command("focus", args=("call",))
def cmd_focus(dbg: Stepper, arg: str) -> None:
    """focus N | focus CALL
    highlight one message, or a call and its result
    N: a message index. CALL: a tool_call_id (or a unique prefix) or a call's label (A, B …):
    the assistant message that made the call and the tool message that answers it stand
    out; every other message is one line."""
    try:
        dbg.focus(one_arg(arg, N_("focus N | focus CALL")))
    except ValueError as exc:
        raise CommandError(exc.args[0]) from None


@command("tools", "t")
def cmd_tools(dbg: Stepper, arg: str) -> None:
    """tools
    list the tools with their parameters and policies
    Required parameters are marked with *."""
    dbg.show_tools()


@command("usage", "u")
def cmd_usage(dbg: Stepper, arg: str) -> None:
    """usage
    tokens, latency and the next request's context budget
    Estimated counts are marked (estimated); the budget shows how the prompt's tokens divide
    between the system prompt, the tool definitions, each tool result and the conversation.
    Turns follow the history: a turn a rewind cut is counted apart."""
    dbg.show_usage()


@command("rpc", args=("call",))
def cmd_rpc(dbg: Stepper, arg: str) -> None:
    """rpc CALL
    show the JSON-RPC messages of an MCP tool call
    For a finished call of an MCP tool, the messages exchanged with its server. CALL: a
    call's label (A, B …), a tool_call_id (or unique prefix) or the index of its tool message."""
    from agentdbg.render.tools import render_exchange

    target = call_arg(dbg, one_arg(arg, N_("rpc CALL")))
    s = dbg.session
    found = [s.outcome_at[int(target)]] if target.isdigit() and int(target) in s.outcome_at else \
        [o for o in s.outcomes if o.call_id == target] or \
        [o for o in s.outcomes if o.call_id.startswith(target)]
    if not found:
        raise CommandError(Msg("no finished call {target}; 'messages' shows the calls and "
                                  "their ids", {"target": repr(target)}))
    if len({o.call_id for o in found}) > 1:
        raise CommandError(Msg("{target} matches several calls: {ids}",
                               {"target": repr(target), "ids": ", ".join(o.call_id for o in found)}))
    outcome = found[-1]
    if outcome.mcp is None:
        spec = s.toolset.get(outcome.name)
        why = (N_("an injected fault answered it") if outcome.injected else
               N_("a recorded result answered it (replay never calls a server)")
               if spec is not None and spec.handler_kind == "recorded" else
               N_("its tool is not an MCP tool") if spec is None or spec.handler_kind != "mcp" else
               Msg("it failed before reaching the server ({error})", {"error": outcome.error_type}))
        raise CommandError(Msg("{id} {name}: no JSON-RPC exchange: {why}",
                               {"id": outcome.call_id, "name": outcome.name,
                                "why": why if isinstance(why, Msg) else Msg(why)}))
    dbg.console.print(render_exchange(outcome.call_id, outcome.name, outcome.mcp, pretty=True))
