"""The step-mode commands: a table of small functions, help from their docstrings.

The machinery (``command``, ``lookup``, ``help_text``) is in ``repl.table``; the commands
live one module a group, imported here in the order ``help`` lists them. Each command is
``fn(dbg, arg: str)`` and raises ``CommandError`` for a one-line error.
"""

from __future__ import annotations

import importlib

from agentdbg.i18n import N_, Msg, _
from agentdbg.repl.table import (
    ALIASES,
    COMMANDS,
    HELP_WIDTH,
    Command,
    CommandError,
    Stepper,
    cannot_write,
    command,
    help_text,
    lookup,
    one_arg,
    section,
)

__all__ = ["ALIASES", "COMMANDS", "HELP_WIDTH", "Command", "CommandError", "help_text", "lookup"]

for _module in ("cmd_moving", "cmd_history", "cmd_teaching"):   # registers them, in help's order
    importlib.import_module(f"agentdbg.repl.{_module}")

section(N_("saving and help"))


@command("save", "w")
def cmd_save(dbg: Stepper, arg: str) -> None:
    """save PATH
    write the run so far as a transcript (JSON Lines)
    Messages, per-request metadata and your edits, one JSON event per line whatever
    the file's name: 'agentdbg replay' plays it, 'agentdbg check' checks it. When the
    transcript could not be written (a full disk), the run is written from memory as
    one JSON document instead."""
    path = one_arg(arg, N_("save PATH"))
    writer = dbg.transcript
    try:
        dbg.save(path)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    if writer is not None and writer.error is None:
        dbg.say(_("saved to {path} (a transcript in JSON Lines; 'agentdbg replay' plays it)").format(
            path=path))
    else:
        dbg.say(_("saved to {path} (one JSON document, from memory; 'agentdbg check' reads "
                  "it)").format(path=path))


@command("help", "h", "?", args=("command",))
def cmd_help(dbg: Stepper, arg: str) -> None:
    """help [CMD]
    list the commands, or explain one
    'help CMD' shows its usage, aliases and details."""
    word = arg.strip() or None
    if word is not None and word not in COMMANDS and word not in ALIASES:
        raise CommandError(Msg("unknown command {word}; 'help' lists the commands",
                               {"word": repr(word)}))
    dbg.say(help_text(word))
