"""The step-mode commands: a table of small functions, help from their docstrings.

Each command is ``fn(dbg, arg: str)``; it raises ``CommandError`` for a
one-line error and the debugger stays at the prompt. The first docstring line
is the usage; the rest is the help.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from agentdbg.engine.phases import Phase


class CommandError(Exception):
    pass


@dataclass
class Command:
    name: str
    aliases: tuple[str, ...]
    fn: Callable
    usage: str
    help: str
    args: tuple[str, ...] = ()   # completion kinds for each argument position


COMMANDS: dict[str, Command] = {}
ALIASES: dict[str, str] = {}


def command(name: str, *aliases: str, args: tuple[str, ...] = ()):
    def register(fn: Callable) -> Callable:
        doc = inspect.getdoc(fn) or name
        usage, _, rest = doc.partition("\n")
        COMMANDS[name] = Command(name, aliases, fn, usage.strip(), rest.strip(), args)
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

@command("next", "n")
def cmd_next(dbg, arg):
    """next (or Enter)
    Perform the pending phase: ask the model, or execute the pending tool calls."""
    dbg.advance()


@command("continue", "c")
def cmd_continue(dbg, arg):
    """continue
    Run until a breakpoint, an error-level finding or the end of the run."""
    dbg.run_to_break()


@command("send")
def cmd_send(dbg, arg):
    """send
    Send the pending model request even though the checker found errors in it
    (to see what the real API answers)."""
    if dbg.session.phase is not Phase.MODEL:
        raise CommandError("nothing to send: the pending phase is not a model request")
    dbg.session.send_once()
    dbg.advance()


@command("live")
def cmd_live(dbg, arg):
    """live
    Replay only: stop playing the recording and continue with a live model and the
    current tools (--model/--base-url, else the offline model)."""
    dbg.go_live()


@command("play")
def cmd_play(dbg, arg):
    """play
    Replay only: keep playing the recorded responses although your changes made them stale."""
    if dbg.replay is None:
        raise CommandError("not replaying a recording")
    dbg.replay.model.knowingly = True
    dbg.say("playing the recording knowingly: responses may not fit the changed history")


@command("quit", "q")
def cmd_quit(dbg, arg):
    """quit
    Leave the debugger (the run is saved when --save was given)."""
    dbg.quitting = True


# -- looking --------------------------------------------------------------------------

@command("messages", "m")
def cmd_messages(dbg, arg):
    """messages [--full]
    Show the whole messages array with pairing and findings."""
    dbg.show_all(full=arg.strip() == "--full" or dbg.full)


@command("show", "s", args=("index",))
def cmd_show(dbg, arg):
    """show N
    Show message N as pretty JSON."""
    index = _index(dbg, _one_arg(arg, "show N"))
    dbg.print_json(dbg.session.messages[index], title=f"message {index}")


@command("tools", "t")
def cmd_tools(dbg, arg):
    """tools
    List the tools with their parameters and policies."""
    dbg.show_tools()


@command("usage", "u")
def cmd_usage(dbg, arg):
    """usage
    Token usage and latency per request, the totals, and the context budget of the next request."""
    dbg.show_usage()


# -- changing the history ---------------------------------------------------------------

@command("edit", "e", args=("index",))
def cmd_edit(dbg, arg):
    """edit N
    Edit message N as JSON in $EDITOR (inline editor when $EDITOR is unset). A tool
    result, or an assistant message's content, tool calls and arguments. The JSON is
    validated before it is accepted; the message is marked as edited."""
    index = _index(dbg, _one_arg(arg, "edit N"))
    original = dbg.session.messages[index]
    try:
        message = dbg.edit_json(original, "message")
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise CommandError("a message must be a JSON object with a role; message unchanged")
    if message == original:
        dbg.say("no change")
        return
    dbg.session.edit(index, message)
    dbg.say(f"message {index} edited")
    dbg.show_all()


@command("inject", "i", args=("call", "fault"))
def cmd_inject(dbg, arg):
    """inject CALL KIND
    Replace a pending or finished tool result with a fault. CALL: a tool_call_id (or
    unique prefix), the index of a tool message, or the name of a pending tool. KIND:
    timeout, invalid_json, invalid_arguments, internal_error, not_found, empty,
    oversized, rate_limited, denied, or inline JSON used as the content."""
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
    The next call of TOOL (every call, with --sticky) returns that fault without running."""
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
    Remove message N, e.g. the assistant message, to see the orphan tool result it
    leaves (the checker flags it at once)."""
    index = _index(dbg, _one_arg(arg, "drop N"))
    removed = dbg.session.drop(index)
    dbg.say(f"dropped message {index} ({removed.get('role')})")
    dbg.show_all()


@command("rewind", "r", args=("index",))
def cmd_rewind(dbg, arg):
    """rewind N
    Cut the history back to message N (kept) and continue live from there."""
    index = _index(dbg, _one_arg(arg, "rewind N"))
    cut = dbg.session.rewind(index)
    dbg.say(f"rewound to message {index}; {cut} message(s) cut")
    dbg.show_all()


@command("retry", "rt")
def cmd_retry(dbg, arg):
    """retry
    Ask the model again for the last turn (drops the last assistant message and its results)."""
    try:
        cut = dbg.session.retry()
    except IndexError as exc:
        raise CommandError(str(exc)) from None
    dbg.say(f"{cut} message(s) removed; the next step asks the model again")
    dbg.show_all()


@command("rpc", args=("call",))
def cmd_rpc(dbg, arg):
    """rpc CALL
    Show the JSON-RPC messages exchanged with its MCP server for a finished call of an
    MCP tool. CALL: a tool_call_id (or unique prefix) or the index of its tool message."""
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


# -- approvals ------------------------------------------------------------------------

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
    Approve pending side-effecting calls (all of them by default)."""
    _decide(dbg, arg, True)


@command("deny", "dn", args=("approval",))
def cmd_deny(dbg, arg):
    """deny [CALL|all]
    Deny pending side-effecting calls; the model gets a 'denied' error result."""
    _decide(dbg, arg, False)


# -- breakpoints ----------------------------------------------------------------------

@command("break", "b", args=("break", "tool"))
def cmd_break(dbg, arg):
    """break tool NAME | break turn N | break error | break finding
    Pause 'continue' before a call of NAME, before model turn N, after a tool result
    that is an error, or whenever the checker has a finding."""
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
    List the breakpoints."""
    if not dbg.breakpoints.items:
        dbg.say("no breakpoints")
    for bp in dbg.breakpoints.items:
        dbg.say(f"{bp.id}: {bp.describe()}  (hit {bp.hits} time(s))")


@command("clear", "cl", args=("breakpoint",))
def cmd_clear(dbg, arg):
    """clear [ID]
    Remove breakpoint ID, or all of them."""
    try:
        removed = dbg.breakpoints.clear(arg.strip() or None)
    except KeyError as exc:
        raise CommandError(str(exc).strip('"')) from None
    dbg.say(f"removed {removed} breakpoint(s)")


# -- saving and help ------------------------------------------------------------------

@command("save", "w")
def cmd_save(dbg, arg):
    """save PATH
    Write the run so far (messages, per-request metadata, your edits) as JSON."""
    path = _one_arg(arg, "save PATH")
    dbg.save(path)
    dbg.say(f"saved to {path}")


@command("explain", "x")
def cmd_explain(dbg, arg):
    """explain [on|off|zh|en]
    Narrate each phase in protocol terms (English or Chinese)."""
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
    List the commands, or explain one."""
    if arg.strip():
        cmd = lookup(arg.strip())
        aliases = f" (aliases: {', '.join(cmd.aliases)})" if cmd.aliases else ""
        dbg.say(f"{cmd.usage}{aliases}\n{cmd.help}")
        return
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = [f"{c.usage.ljust(width)}  {c.help.splitlines()[0] if c.help else ''}"
             for c in COMMANDS.values()]
    dbg.say("\n".join(lines) + "\nEnter repeats 'next'. 'help CMD' explains one command.")
