"""The ``agentdbg`` command line: thin commands that parse, build a session and hand it to a driver."""

from __future__ import annotations

import importlib
from types import FrameType
from typing import TYPE_CHECKING

from agentdbg.cli.app import app

if TYPE_CHECKING:
    import typer
    from typer.models import CommandInfo

# each registers its commands, in --help order
for _module in ("run", "share", "inspect", "servers", "traces", "trust"):
    importlib.import_module(f"agentdbg.cli.{_module}")


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    from agentdbg.errors import Terminated

    raise Terminated()


#: the variable a shell's completion script sets when it asks for completions
COMPLETE_VAR = "_AGENTDBG_COMPLETE"


#: the arguments that only show the list of commands (or the version)
LIST_ONLY = {"--help", "--version"}


def main() -> None:
    import os
    import signal
    import sys

    signal.signal(signal.SIGTERM, _on_sigterm)
    if COMPLETE_VAR in os.environ:  # a shell asking (see 'agentdbg completion'): typer answers
        from typer.completion import completion_init

        completion_init()
        app(prog_name="agentdbg")
        return
    # also under `python -m agentdbg`: one name, one completion variable
    built_for(sys.argv[1:])(prog_name="agentdbg")


def built_for(args: list[str]) -> typer.Typer:
    """The app with only what ``args`` use: the one command they name, or (``--help``, no
    arguments) every command's name and help without its options. Typer turns each registered
    command into a click command, its options read from its signature, before it looks at the
    arguments: for 17 commands, a third of ``agentdbg --help``. Anything else: the whole app."""
    import copy

    from typer.main import get_command_name

    def name(info: CommandInfo) -> str:
        return info.name or get_command_name(getattr(info.callback, "__name__", ""))

    trimmed = copy.copy(app)
    if all(arg in LIST_ONLY for arg in args):
        trimmed.registered_commands = [_listed(info, name(info)) for info in app.registered_commands]
        return trimmed
    named = [info for info in app.registered_commands if name(info) == args[0]]
    if len(named) != 1:
        return app
    trimmed.registered_commands = named
    return trimmed


def _listed(info: CommandInfo, name: str) -> CommandInfo:
    """``info`` as the list of commands shows it: its name, help and flags, no options (the
    list never runs it)."""
    import inspect

    from typer.models import CommandInfo

    def listed() -> None:
        raise AssertionError("only listed")

    return CommandInfo(name=name, cls=info.cls, context_settings=info.context_settings,
                       callback=listed,
                       help=info.help if info.help is not None else inspect.getdoc(info.callback),
                       epilog=info.epilog, short_help=info.short_help,
                       options_metavar=info.options_metavar, add_help_option=info.add_help_option,
                       no_args_is_help=info.no_args_is_help, hidden=info.hidden,
                       deprecated=info.deprecated, rich_help_panel=info.rich_help_panel)


__all__ = ["app", "main"]
