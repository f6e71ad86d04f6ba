"""The ``agentdbg`` command line: thin commands that parse, build a session and hand it to a driver."""

from __future__ import annotations

from types import FrameType
from typing import TYPE_CHECKING, Any

from agentdbg.cli.app import Group, app

if TYPE_CHECKING:
    import typer
    from typer.models import CommandInfo

# the command modules register their commands when the app's commands are first looked at
# (``App.registered_commands``): ``agentdbg --help`` imports none of them


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    from agentdbg.errors import Terminated

    raise Terminated()


#: the variable a shell's completion script sets when it asks for completions
COMPLETE_VAR = "_AGENTDBG_COMPLETE"


#: the arguments that only show the list of commands (or the version)
LIST_ONLY = {"--help", "--version"}


def main() -> None:
    import sys

    try:
        _main()
    except KeyboardInterrupt as exc:   # before the command's own handling began (its import)
        from agentdbg.cli.app import interrupted

        sys.exit(interrupted(exc).exit_code)


def _main() -> None:
    import os
    import signal
    import sys

    signal.signal(signal.SIGTERM, _on_sigterm)
    from agentdbg.errors import redeliver_interrupts

    redeliver_interrupts()   # already there when started as the `agentdbg` program
    if COMPLETE_VAR in os.environ:  # a shell asking (see 'agentdbg completion'): typer answers
        from typer.completion import completion_init

        completion_init()
        app(prog_name="agentdbg")
        return
    # also under `python -m agentdbg`: one name, one completion variable
    args = sys.argv[1:]
    try:
        if not (all(arg in LIST_ONLY for arg in args) or _command_help(args)):
            built_for(args)(prog_name="agentdbg")
            return
        try:
            built_for(args)(prog_name="agentdbg")
        except SystemExit as exc:
            _printed_only(exc)
    except OSError as exc:   # click could not print the help or a usage error (a full disk)
        import errno

        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF):
            raise
        from agentdbg.i18n import _

        print("agentdbg: error: " + _("{path}: cannot write it ({error})").format(
            path="stdout", error=exc.strerror), file=sys.stderr)
        sys.exit(1)


def _command_help(args: list[str]) -> bool:
    """``agentdbg CMD --help``: click prints CMD's help before it could run it."""
    from agentdbg.cli.listing import MODULES

    return len(args) == 2 and args[0] in MODULES and args[1] == "--help"


def _printed_only(exc: SystemExit) -> None:
    """The end of a run that only printed (the list of commands, a command's help, the
    version): its output flushed, the process ends without the interpreter's teardown of
    every module, a tenth of ``agentdbg --help`` (it holds no file, thread or child to clean
    up). Anything unusual (an exit status that is not a number, a reader that went away): the
    usual exit."""
    import os
    import sys

    if not (exc.code is None or isinstance(exc.code, int)):
        raise exc
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:   # None: started with the descriptor closed
                stream.flush()
    except (OSError, ValueError):
        raise exc from None
    os._exit(exc.code or 0)


def built_for(args: list[str]) -> typer.Typer:
    """The app with only what ``args`` use: the one command they name (only its module
    imported), or (``--help``, ``--version``, no arguments) the list of commands made from
    ``cli/listing.py``, no command module imported. Typer turns each registered command into a
    click command, its options read from its signature, before it looks at the arguments; and
    importing the six command modules costs as much again. Anything else: the whole app."""
    from agentdbg.cli import listing

    if all(arg in LIST_ONLY for arg in args):
        return app.only([], cls=Listed)
    module = listing.MODULES.get(args[0])
    if module is None:
        return app
    named = [info for info in app.load(module) if _name(info) == args[0]]
    return app.only(named) if len(named) == 1 else app


def _name(info: CommandInfo) -> str:
    from typer.main import get_command_name

    return info.name or get_command_name(getattr(info.callback, "__name__", ""))


class Listed(Group):
    """The command group as the list of commands shows it: each command's name and help from
    ``cli/listing.py``, no options (the list never runs one)."""

    def __init__(self, *args: Any, commands: dict[str, Any] | None = None, **kwargs: Any) -> None:
        from typer.core import TyperCommand

        from agentdbg.cli.listing import COMMANDS

        listed = {name: TyperCommand(name=name, help=help, short_help=short_help, hidden=hidden,
                                     deprecated=deprecated, callback=None, rich_markup_mode=None)
                  for name, _module, help, short_help, hidden, deprecated in COMMANDS}
        super().__init__(*args, commands={**listed, **(commands or {})}, **kwargs)


def listing_source(commands: list[CommandInfo]) -> str:
    """``cli/listing.py`` for ``commands`` (the whole app's): ``scripts/cli_listing.py`` writes
    it, a test checks it is current."""
    import inspect

    rows = []
    for info in commands:
        help = info.help if info.help is not None else inspect.getdoc(info.callback)
        if help is not None:
            help = inspect.cleandoc(help)   # what typer gives the command
        module = getattr(info.callback, "__module__", "").rpartition(".")[2]
        text = ("\n".join(f"     {line!r}" for line in help.splitlines(keepends=True))
                if help else f"     {help!r}")
        rows.append(f"    ({_name(info)!r}, {module!r},\n{text},\n"
                    f"     {info.short_help!r}, {info.hidden!r}, {info.deprecated!r}),\n")
    return ('"""The list of commands ``agentdbg --help`` shows, without importing the modules that '
            'define them.\n\nMade by ``python scripts/cli_listing.py`` from the commands\' '
            'docstrings; ``tests/test_cli_startup.py``\nfails when it is not current."""\n\n'
            "#: (name, module in agentdbg.cli, help, short_help, hidden, deprecated), in --help order\n"
            "COMMANDS = (\n" + "".join(rows) + ")\n\n"
            "#: the module that defines each command\n"
            "MODULES = {name: module for name, module, *_ in COMMANDS}\n")


__all__ = ["app", "main"]
