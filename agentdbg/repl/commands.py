"""The step-mode commands: a table of small functions, help from their docstrings.

Each command is ``fn(dbg, arg: str)``; it raises ``CommandError`` for a
one-line error and the debugger stays at the prompt. The docstring is the help,
as pdb's: the usage line, a one-line summary (what ``help`` lists, sized for 80
columns), then the details ``help CMD`` adds.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from agentdbg.engine.actions import message_problem
from agentdbg.engine.phases import Phase


class CommandError(Exception):
    pass


@dataclass
class Command:
    name: str
    aliases: tuple[str, ...]
    fn: Callable
    usage: str
    summary: str                 # one line, whole: what 'help' lists
    help: str                    # the details 'help CMD' adds
    args: tuple[str, ...] = ()   # completion kinds for each argument position
    group: str = ""

    @property
    def names(self) -> str:
        """``next (n, Enter)``: the name and every alias."""
        extra = list(self.aliases) + (["Enter"] if self.name == "next" else [])
        return f"{self.name} ({', '.join(extra)})" if extra else self.name


COMMANDS: dict[str, Command] = {}
ALIASES: dict[str, str] = {}
_group = ""


def section(title: str) -> None:
    """The commands registered after this are listed under ``title`` by 'help'."""
    global _group
    _group = title


def command(name: str, *aliases: str, args: tuple[str, ...] = ()):
    def register(fn: Callable) -> Callable:
        doc = inspect.getdoc(fn) or name
        usage, summary, rest = (doc.split("\n", 2) + ["", ""])[:3]
        COMMANDS[name] = Command(name, aliases, fn, usage.strip(), summary.strip(),
                                 " ".join(rest.split()), args, _group)
        for alias in aliases:
            ALIASES[alias] = name
        return fn
    return register


def lookup(word: str) -> Command:
    name = ALIASES.get(word, word)
    if name not in COMMANDS:
        raise CommandError(f"unknown command {word!r}; 'help' lists the commands")
    return COMMANDS[name]


def _index(dbg, text: str) -> int:
    try:
        index = int(text)
    except ValueError:
        raise CommandError(f"expected a message index, got {text!r}") from None
    if not 0 <= index < len(dbg.session.messages):
        raise CommandError(f"no message {index}; messages are 0..{len(dbg.session.messages) - 1}")
    return index


def _one_arg(arg: str, usage: str) -> str:
    if not arg.strip():
        raise CommandError(f"usage: {usage}")
    return arg.strip()


# -- moving ---------------------------------------------------------------------------
section("moving")


@command("next", "n")
def cmd_next(dbg, arg):
    """next (or Enter)
    perform the pending phase: ask the model or run the calls
    Performs exactly one phase: the model request, or the execution of the pending tool
    calls (each answered with a role "tool" message carrying its tool_call_id)."""
    dbg.advance()


@command("continue", "c")
def cmd_continue(dbg, arg):
    """continue
    run to a breakpoint, an error finding or the end
    Performs phases until a breakpoint is hit, the checker has an error-level finding, a
    call needs approval, or the run stops."""
    dbg.run_to_break()


@command("send")
def cmd_send(dbg, arg):
    """send
    send a request the checker blocked, as it is
    Sends the pending model request although the checker found errors in it, to see
    what the real API answers."""
    if dbg.session.phase is not Phase.MODEL:
        raise CommandError("nothing to send: the pending phase is not a model request")
    dbg.session.send_once()
    dbg.advance()


@command("live")
def cmd_live(dbg, arg):
    """live
    replay: go on with a live model and your tools
    Stops playing the recording: the model of --model/--base-url (else the offline
    model) answers from here, and the tools of --tools run."""
    dbg.go_live()


@command("play")
def cmd_play(dbg, arg):
    """play
    replay: keep playing a recording your change made stale
    The recorded responses answered a different history; they are played anyway."""
    if dbg.replay is None:
        raise CommandError("not replaying a recording")
    dbg.replay.model.knowingly = True
    dbg.say("playing the recording knowingly: responses may not fit the changed history")


@command("quit", "q")
def cmd_quit(dbg, arg):
    """quit
    leave the debugger
    The transcript keeps the run up to here (and --save writes it)."""
    dbg.quitting = True


# -- looking --------------------------------------------------------------------------
section("looking")


@command("messages", "m")
def cmd_messages(dbg, arg):
    """messages [--full]
    show the whole messages array with pairing and findings
    --full shows long contents unfolded."""
    dbg.show_all(full=arg.strip() == "--full" or dbg.full)


@command("show", "s", args=("index",))
def cmd_show(dbg, arg):
    """show N
    show message N as JSON
    Message N exactly as it will be sent, pretty-printed. For a tool result whose handler
    raised, also the exception the model did not see (type, message, file:line)."""
    index = _index(dbg, _one_arg(arg, "show N"))
    dbg.print_json(dbg.session.messages[index], title=f"message {index}")
    outcome = dbg.session.outcome_at.get(index)
    if outcome is not None and not outcome.ok and outcome.cause:
        dbg.say(f"the handler raised {outcome.cause} — the model saw only the {outcome.error_type} "
                "error above" + ("" if outcome.detail and _debug(dbg) else "; --debug prints the traceback"))
        if outcome.detail and _debug(dbg):
            dbg.say(outcome.detail)


def _debug(dbg) -> bool:
    return bool(getattr(dbg.options, "debug", False))


@command("tools", "t")
def cmd_tools(dbg, arg):
    """tools
    list the tools with their parameters and policies
    Required parameters are marked with *."""
    dbg.show_tools()


@command("usage", "u")
def cmd_usage(dbg, arg):
    """usage
    tokens, latency and the next request's context budget
    Estimated counts are marked (estimated); the budget shows how the prompt's tokens divide
    between the system prompt, the tool definitions, each tool result and the conversation."""
    dbg.show_usage()


@command("rpc", args=("call",))
def cmd_rpc(dbg, arg):
    """rpc CALL
    show the JSON-RPC messages of an MCP tool call
    For a finished call of an MCP tool, the messages exchanged with its server. CALL: a
    tool_call_id (or unique prefix) or the index of its tool message."""
    from agentdbg.render.tools import render_exchange

    target = _one_arg(arg, "rpc CALL")
    s = dbg.session
    found = [s.outcome_at[int(target)]] if target.isdigit() and int(target) in s.outcome_at else \
        [o for o in s.outcomes if o.call_id == target] or \
        [o for o in s.outcomes if o.call_id.startswith(target)]
    if not found:
        raise CommandError(f"no finished call {target!r}; 'messages' shows the calls and their ids")
    if len({o.call_id for o in found}) > 1:
        raise CommandError(f"{target!r} matches several calls: {', '.join(o.call_id for o in found)}")
    outcome = found[-1]
    if outcome.mcp is None:
        spec = s.toolset.get(outcome.name)
        why = ("an injected fault answered it" if outcome.injected else
               "a recorded result answered it (replay never calls a server)"
               if spec is not None and spec.handler_kind == "recorded" else
               "its tool is not an MCP tool" if spec is None or spec.handler_kind != "mcp" else
               f"it failed before reaching the server ({outcome.error_type})")
        raise CommandError(f"{outcome.call_id} {outcome.name}: no JSON-RPC exchange: {why}")
    dbg.console.print(render_exchange(outcome.call_id, outcome.name, outcome.mcp, pretty=True))


# -- changing the history ---------------------------------------------------------------
section("changing the history")


@command("edit", "e", args=("index",))
def cmd_edit(dbg, arg):
    """edit N
    edit message N as JSON in $EDITOR
    A tool result, or an assistant message's content, tool calls and arguments; the
    inline editor is used when $EDITOR is unset. The JSON is validated before it is
    accepted; the message is marked as edited."""
    index = _index(dbg, _one_arg(arg, "edit N"))
    original = dbg.session.messages[index]
    try:
        message = dbg.edit_json(original, "message")
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    problem = message_problem(message)
    if problem is not None:
        raise CommandError(f"{problem}; message unchanged")
    if message == original:
        dbg.say("no change")
        return
    dbg.session.edit(index, message)
    dbg.say(f"message {index} edited")
    dbg.show_all()


@command("inject", "i", args=("call", "fault"))
def cmd_inject(dbg, arg):
    """inject CALL KIND
    answer a call, or replace a result, with a fault
    CALL: a tool_call_id (or a unique prefix), the index of a tool message, or the name
    of a pending tool. KIND: timeout, invalid_json, invalid_arguments, internal_error,
    not_found, empty, oversized, rate_limited, denied, or inline JSON used as the
    content."""
    from agentdbg.engine.faults import parse_fault

    target, _, kind = arg.strip().partition(" ")
    if not target or not kind.strip():
        raise CommandError("usage: inject CALL KIND")
    try:
        fault = parse_fault(kind)
        dbg.say(dbg.session.inject(target, fault))
    except (ValueError, IndexError) as exc:
        raise CommandError(str(exc)) from None
    if dbg.session.phase is not Phase.TOOLS:
        dbg.show_all()


@command("fail", "f", args=("tool", "fault", "flag"))
def cmd_fail(dbg, arg):
    """fail TOOL KIND [--sticky]
    make the next call of TOOL (--sticky: every call) fail
    The call returns the fault KIND (as for inject) without running the tool."""
    from agentdbg.engine.faults import parse_fault

    words = arg.split()
    sticky = "--sticky" in words
    words = [w for w in words if w != "--sticky"]
    if len(words) < 2:
        raise CommandError("usage: fail TOOL KIND [--sticky]")
    try:
        fault = parse_fault(" ".join(words[1:]))
        dbg.session.fail(words[0], fault, sticky)
    except (ValueError, KeyError) as exc:
        raise CommandError(str(exc).strip('"')) from None
    when = "every call" if sticky else "the next call"
    dbg.say(f"{when} of {words[0]} will return the {fault.describe()} fault")


@command("drop", "d", args=("index",))
def cmd_drop(dbg, arg):
    """drop N
    remove message N
    E.g. the assistant message, to see the orphan tool result it leaves (the checker
    flags it at once)."""
    index = _index(dbg, _one_arg(arg, "drop N"))
    removed = dbg.session.drop(index)
    dbg.say(f"dropped message {index} ({removed.get('role')})")
    dbg.show_all()


@command("rewind", "r", args=("index",))
def cmd_rewind(dbg, arg):
    """rewind N
    keep messages 0..N and go on live from there
    The messages after N are cut; the next phase follows from message N."""
    index = _index(dbg, _one_arg(arg, "rewind N"))
    cut = dbg.session.rewind(index)
    dbg.say(f"rewound to message {index}; {cut} message(s) cut")
    dbg.show_all()


@command("retry", "rt")
def cmd_retry(dbg, arg):
    """retry
    ask the model again for the last turn
    Drops the last assistant message and its results first."""
    try:
        cut = dbg.session.retry()
    except IndexError as exc:
        raise CommandError(str(exc)) from None
    dbg.say(f"{cut} message(s) removed; the next step asks the model again")
    dbg.show_all()


# -- approvals ------------------------------------------------------------------------
section("approvals")


def _decide(dbg, arg: str, approved: bool) -> None:
    waiting = dbg.session.needs_approval()
    if not waiting:
        raise CommandError("no call is waiting for approval")
    target = arg.strip() or "all"
    chosen = [c for c in waiting if target == "all" or str(c.get("id")) == target]
    if not chosen:
        ids = ", ".join(str(c.get("id")) for c in waiting)
        raise CommandError(f"no waiting call has the id {target!r} (ids must match exactly; "
                           f"waiting: {ids})")
    if len(chosen) > 1 and target != "all":
        raise CommandError(f"{len(chosen)} waiting calls share the id {target!r}; use 'all'")
    for call in chosen:
        dbg.session.decide(call, approved)
    dbg.say(f"{'approved' if approved else 'denied'}: {', '.join(str(c.get('id')) for c in chosen)}")


@command("approve", "a", args=("approval",))
def cmd_approve(dbg, arg):
    """approve [CALL|all]
    approve pending side-effecting calls
    All of them by default; CALL is a tool_call_id, exactly."""
    _decide(dbg, arg, True)


@command("deny", "dn", args=("approval",))
def cmd_deny(dbg, arg):
    """deny [CALL|all]
    deny pending side-effecting calls
    The model gets a 'denied' error result. All of them by default; CALL is a
    tool_call_id, exactly."""
    _decide(dbg, arg, False)


# -- breakpoints ----------------------------------------------------------------------
section("breakpoints")


@command("break", "b", args=("break", "tool"))
def cmd_break(dbg, arg):
    """break tool NAME | break turn N | break error | break finding
    pause 'continue' at a tool, a turn, an error or a finding
    Before a call of NAME, before model turn N, after a tool result that is an error,
    or whenever the checker has a finding."""
    words = arg.split()
    if not words or words[0] not in ("tool", "turn", "error", "finding"):
        raise CommandError("usage: break tool NAME | break turn N | break error | break finding")
    kind, value = words[0], (words[1] if len(words) > 1 else None)
    if kind in ("tool", "turn") and value is None:
        raise CommandError(f"usage: break {kind} {'NAME' if kind == 'tool' else 'N'}")
    if kind == "tool" and dbg.session.toolset.get(value) is None:
        raise CommandError(f"no tool {value!r}; tools: {', '.join(dbg.session.toolset.names())}")
    if kind == "turn" and not (value or "").isdigit():
        raise CommandError(f"turn must be a number, got {value!r}")
    bp = dbg.breakpoints.add(kind, value)
    dbg.say(f"breakpoint {bp.id}: {bp.describe()}")


@command("breaks", "bl")
def cmd_breaks(dbg, arg):
    """breaks
    list the breakpoints
    Each with its id (for 'clear ID') and how often it was hit."""
    if not dbg.breakpoints.items:
        dbg.say("no breakpoints")
    for bp in dbg.breakpoints.items:
        dbg.say(f"{bp.id}: {bp.describe()}  (hit {bp.hits} time(s))")


@command("clear", "cl", args=("breakpoint",))
def cmd_clear(dbg, arg):
    """clear [ID]
    remove breakpoint ID, or all of them (asks first)
    Without an ID every breakpoint is removed, after you answer y."""
    ident = arg.strip() or None
    count = len(dbg.breakpoints.items)
    if ident is None:
        if not count:
            dbg.say("no breakpoints to remove")
            return
        if not _confirm(dbg, f"Remove all {count} breakpoint(s)? [y/N] "):
            dbg.say("kept the breakpoints ('clear ID' removes one)")
            return
    try:
        removed = dbg.breakpoints.clear(ident)
    except KeyError as exc:
        raise CommandError(str(exc).strip('"')) from None
    dbg.say(f"removed {removed} breakpoint(s)")


def _confirm(dbg, question: str) -> bool:
    """Ask at the prompt; anything but y/yes (Ctrl-C, Ctrl-D included) is no."""
    try:
        answer = dbg.prompt.prompt(question)
    except (KeyboardInterrupt, EOFError):
        return False
    return answer.strip().lower() in ("y", "yes")


# -- saving and help ------------------------------------------------------------------
section("saving and help")


@command("save", "w")
def cmd_save(dbg, arg):
    """save PATH
    write the run so far as a transcript (JSON Lines)
    Messages, per-request metadata and your edits, one JSON event per line whatever
    the file's name: 'agentdbg replay' plays it, 'agentdbg check' checks it. When the
    transcript could not be written (a full disk), the run is written from memory as
    one JSON document instead."""
    path = _one_arg(arg, "save PATH")
    writer = dbg.transcript
    dbg.save(path)
    if writer is not None and writer.error is None:
        dbg.say(f"saved to {path} (a transcript in JSON Lines; 'agentdbg replay' plays it)")
    else:
        dbg.say(f"saved to {path} (one JSON document, from memory; 'agentdbg check' reads it)")


@command("explain", "x")
def cmd_explain(dbg, arg):
    """explain [on|off|zh|en]
    narrate each phase in protocol terms
    In English (en) or Chinese (zh)."""
    word = arg.strip() or "on"
    if word in ("zh", "en"):
        dbg.lang, dbg.explain = word, True
    elif word in ("on", "off"):
        dbg.explain = word == "on"
    else:
        raise CommandError("usage: explain [on|off|zh|en]")
    dbg.say(f"explain {'on' if dbg.explain else 'off'} ({dbg.lang})")


@command("help", "h", "?", args=("command",))
def cmd_help(dbg, arg):
    """help [CMD]
    list the commands, or explain one
    'help CMD' shows its usage, aliases and details."""
    dbg.say(help_text(arg.strip() or None))


HELP_WIDTH = 80


def help_text(word: str | None = None) -> str:
    """'help': one line per command (names and aliases, a whole summary), grouped, for 80
    columns; 'help CMD': its usage, aliases, summary and details, wrapped at 80."""
    import textwrap

    if word is not None:
        cmd = lookup(word)
        aliases = f"  (aliases: {', '.join(cmd.aliases)})" if cmd.aliases else ""
        text = f"{cmd.summary[:1].upper()}{cmd.summary[1:]}. {cmd.help}".strip()
        return f"{cmd.usage}{aliases}\n" + textwrap.fill(
            text, HELP_WIDTH, initial_indent="  ", subsequent_indent="  ")
    column = max(len(c.names) for c in COMMANDS.values()) + 2
    lines = ["Commands ('help CMD' shows one in full; Enter repeats 'next'):"]
    group = None
    for c in COMMANDS.values():
        if c.group != group:
            group = c.group
            lines.append(f"{group}:")
        lines.append(f"  {c.names.ljust(column)}{c.summary}")
    return "\n".join(lines)
