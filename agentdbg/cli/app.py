"""The typer app, its one error boundary, and the console every command prints through.

Heavy modules (openai, jsonschema, prompt_toolkit, rich …) are imported inside the
commands that need them, so ``agentdbg --help`` stays fast.
"""

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentdbg.errors import AgentdbgError, ExitStatus

if TYPE_CHECKING:
    from rich.console import Console

app = typer.Typer(
    name="agentdbg",
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
) -> None:
    """An interactive terminal debugger for LLM tool-calling loops."""


def fail(exc: BaseException, debug: bool) -> typer.Exit:
    """Print one ``agentdbg: error: ...`` line (a traceback only with --debug)."""
    from agentdbg.render.safe import one_line

    if debug:
        import traceback

        traceback.print_exception(exc)
    if isinstance(exc, AgentdbgError):
        print(f"agentdbg: error: {one_line(exc.message)}", file=sys.stderr)
        return typer.Exit(int(exc.exit_status))
    print(f"agentdbg: internal error: {type(exc).__name__}: {one_line(str(exc))} "
          "(run with --debug for the traceback)", file=sys.stderr)
    return typer.Exit(int(ExitStatus.INTERNAL))


def command(*args: Any, quiet_interrupt: bool = False, **kwargs: Any) -> Callable:
    """``app.command`` with the one error boundary: an ``AgentdbgError`` is one line and its
    exit status, anything else one line and 70 (a traceback with ``--debug``); the command's
    return value is the exit status. ``quiet_interrupt``: Ctrl-C ends a server quietly."""
    def register(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def boundary(*a: Any, **kw: Any) -> None:
            try:
                status = fn(*a, **kw)
            except KeyboardInterrupt as exc:
                if not quiet_interrupt:   # e.g. while MCP servers start: say so, exit 130
                    from agentdbg.errors import Terminated

                    why = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"
                    print(f"agentdbg: {why}", file=sys.stderr)
                    raise typer.Exit(int(ExitStatus.CANCELLED)) from None
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


def warn(text: str) -> None:
    from agentdbg.render.safe import one_line

    print(f"agentdbg: warning: {one_line(text)}", file=sys.stderr)
