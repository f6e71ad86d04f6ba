"""The typer app, its one error boundary, and the console every command prints through.

Heavy modules (openai, jsonschema, prompt_toolkit, rich …) are imported inside the
commands that need them, so ``agentdbg --help`` stays fast.
"""

import functools
import importlib
import os
import sys
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from agentdbg import i18n

#: English, and one choice per message catalog (agentdbg/locale/<lang>.po)
Lang = Enum("Lang", {lang: lang for lang in i18n.languages()}, type=str)  # type: ignore[misc]

#: the modules that register commands, in --help order
COMMAND_MODULES = ("run", "share", "inspect", "servers", "traces", "trust")


def chosen_language(args: list[str]) -> str:
    """The language a command line asks for: its ``--lang`` wherever it stands (not after
    ``--``, where another program's arguments begin), else ``AGENTDBG_LANG``, else English.
    Read before anything is parsed, so errors, warnings and ``--help`` already speak it; a
    ``--lang`` agentdbg has no catalog for is said wrong in the variable's language."""
    known = i18n.languages()
    lang = os.environ.get("AGENTDBG_LANG") or i18n.DEFAULT
    lang = lang if lang in known else i18n.DEFAULT
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(args):
            lang = args[i + 1] if args[i + 1] in known else lang   # a wrong one: click says so
        elif arg.startswith("--lang="):
            value = arg.split("=", 1)[1]
            lang = value if value in known else lang
    return lang


class Group(TyperGroup):
    """The command group: it chooses the language before the command line is parsed."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            lang = chosen_language(_own_args(self, args))
            i18n.use(lang)
            if lang != i18n.DEFAULT:
                from agentdbg.cli.helptext import Formatter, translate

                translate(self)
                ctx.formatter_class = Formatter
            return super().parse_args(ctx, args)
        except Exception as exc:
            _localise(exc)
            raise
        except KeyboardInterrupt as exc:  # typer would exit 130 without a word
            raise interrupted(exc) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:   # a command's usage error: click shows it, after this
            _localise(exc)
            raise
        except KeyboardInterrupt as exc:  # before the command began (typer: a silent 130)
            raise interrupted(exc) from None


def _own_args(group: Any, args: list[str]) -> list[str]:
    """The words of ``args`` that are agentdbg's: for a command that runs another program
    (``proxy CMD ARGS…``, whose options end at CMD's name), not CMD's own arguments, so
    ``agentdbg proxy python app.py --lang zh`` passes ``--lang zh`` to the app alone."""
    i = 0
    while i < len(args) and args[i].startswith("-"):     # the group's own options
        i += 2 if args[i] == "--lang" else 1
    command = group.commands.get(args[i]) if i < len(args) else None
    if command is None or command.context_settings.get("allow_interspersed_args", True):
        return args
    valued = {name for p in command.params if p.param_type_name == "option"
              and not p.is_flag and not p.count for name in p.opts}
    i += 1
    while i < len(args) and args[i] != "--":
        if not args[i].startswith("-"):
            return args[:i]                 # CMD's name: the rest is CMD's
        i += 2 if args[i] in valued else 1
    return args


def _localise(exc: Exception) -> None:
    """A click usage error shown as agentdbg's errors are (``agentdbg: error: …``), in the
    chosen language. Only for click's errors: a command's normal end (click's ``Exit``, a
    ``RuntimeError``) loads nothing more while a server stops."""
    if not any(kind.__name__ == "ClickException" for kind in type(exc).__mro__):
        return
    from agentdbg.cli.usage import localise  # only when something went wrong

    localise(exc)


if TYPE_CHECKING:
    from rich.console import Console
    from typer.models import CommandInfo


class App(typer.Typer):
    """The typer app whose command modules are imported when its commands are first looked at:
    ``agentdbg --help`` lists the commands from ``cli/listing.py`` and ``agentdbg CMD`` loads
    only CMD's module (``load``); anything that reads ``registered_commands`` gets them all,
    in ``--help`` order."""

    _commands: list["CommandInfo"]
    _complete = False   # every command module imported
    _loading = False    # a command module is registering its commands

    @property
    def registered_commands(self) -> list["CommandInfo"]:
        if not self._complete and not self._loading:
            self.load(*COMMAND_MODULES)
        return self._commands

    @registered_commands.setter
    def registered_commands(self, value: list["CommandInfo"]) -> None:
        self._commands = value

    def load(self, *modules: str) -> list["CommandInfo"]:
        """Import the command modules ``modules`` (names in ``COMMAND_MODULES``); every command
        registered so far, in --help order."""
        self._loading = True
        try:
            for module in modules:
                importlib.import_module(f"agentdbg.cli.{module}")
        finally:
            self._loading = False
        order = {f"agentdbg.cli.{module}": i for i, module in enumerate(COMMAND_MODULES)}
        self._commands.sort(key=lambda info: order.get(getattr(info.callback, "__module__", ""),
                                                       len(order)))
        if set(modules) >= set(COMMAND_MODULES):
            self._complete = True
        return self._commands

    def only(self, commands: list["CommandInfo"], cls: type[TyperGroup] | None = None) -> "App":
        """A copy of the app with only ``commands`` (and its group made by ``cls``)."""
        import copy

        trimmed = copy.copy(self)
        trimmed.info = copy.copy(self.info)
        if cls is not None:
            trimmed.info.cls = cls
        trimmed._complete = True
        trimmed.registered_commands = commands
        return trimmed


app = App(
    name="agentdbg",
    cls=Group,
    help="An interactive terminal debugger for LLM tool-calling loops.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from agentdbg import __version__

        print(f"agentdbg {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
          lang: Annotated[Lang, typer.Option(
        "--lang", envvar="AGENTDBG_LANG", show_default=False,
        help="The language of what agentdbg prints, --help included (as every command's "
             "--lang).")] = Lang.en,  # type: ignore[attr-defined]
) -> None:
    """An interactive terminal debugger for LLM tool-calling loops."""


def fail(exc: BaseException, debug: bool) -> typer.Exit:
    """Print one ``agentdbg: error: ...`` line (a traceback only with --debug)."""
    from agentdbg.render.safe import one_line

    if debug:
        import traceback

        traceback.print_exception(exc)
    from agentdbg.errors import AgentdbgError, ExitStatus

    if isinstance(exc, AgentdbgError):   # the prefix stays English: scripts grep for it
        print(f"agentdbg: error: {one_line(shown(exc.shown))}", file=sys.stderr)
        return typer.Exit(int(exc.exit_status))
    print(f"agentdbg: internal error: {type(exc).__name__}: {one_line(str(exc))} "
          "(run with --debug for the traceback)", file=sys.stderr)
    return typer.Exit(int(ExitStatus.INTERNAL))


def interrupted(exc: KeyboardInterrupt) -> typer.Exit:
    """Ctrl-C (or SIGTERM) outside a server's quiet stop: one line, and the exit (130)."""
    from agentdbg.errors import ExitStatus, Terminated

    why = (i18n._("terminated (SIGTERM)") if isinstance(exc, Terminated)
           else i18n._("interrupted (Ctrl-C)"))
    print(f"agentdbg: {why}", file=sys.stderr)
    return typer.Exit(int(ExitStatus.CANCELLED))


def command(*args: Any, quiet_interrupt: bool = False, **kwargs: Any) -> Callable:
    """``app.command`` with the one error boundary: an ``AgentdbgError`` is one line and its
    exit status, anything else one line and 70 (a traceback with ``--debug``); the command's
    return value is the exit status. ``quiet_interrupt``: Ctrl-C ends a server quietly."""
    def register(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def boundary(*a: Any, **kw: Any) -> None:
            from agentdbg.errors import ExitStatus

            try:
                status = fn(*a, **kw)
            except KeyboardInterrupt as exc:
                if not quiet_interrupt:   # e.g. while MCP servers start: say so, exit 130
                    raise interrupted(exc) from None
                status = ExitStatus.OK
            except BrokenPipeError:   # `agentdbg … | head`: the reader has all it wanted
                _quiet_stdout()
                raise typer.Exit(int(ExitStatus.BROKEN_PIPE)) from None
            except Exception as exc:  # noqa: BLE001 - the one place that turns errors into lines
                raise fail(exc, bool(kw.get("debug"))) from None
            raise typer.Exit(int(status or 0))
        return app.command(*args, **kwargs)(boundary)
    return register


def _quiet_stdout() -> None:
    """After the reader closed the pipe: nothing more to write (not even at exit's flush)."""
    import contextlib
    import os

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def make_console(stderr: bool = False, present: bool = False) -> "Console":
    """The console every command prints through: Rich's layout on a terminal; when piped,
    no padding with trailing spaces and no wrapping of single values (``present``: the
    presenter view's high contrast)."""
    from agentdbg.render.console import make_console as console_for

    return console_for(stderr, present)


def shown(text: object) -> str:
    """A message in the chosen language: an ``i18n.Msg`` translated, an English text made from
    a template of the catalog translated, anything else as it is."""
    return i18n.tr(text) if isinstance(text, (i18n.Msg, i18n.Join)) else i18n.recorded(str(text))


def warn(text: object) -> None:
    """One ``agentdbg: warning: ...`` line (an ``i18n.Msg`` in the chosen language)."""
    from agentdbg.render.safe import one_line

    print(f"agentdbg: warning: {one_line(shown(text))}", file=sys.stderr)
