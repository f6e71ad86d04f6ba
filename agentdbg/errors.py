"""One error hierarchy, one exit-code table.

Every error a user can cause (bad file, bad option, unreachable model) is an
``AgentdbgError``; the CLI prints it as a single ``agentdbg: error: ...`` line
and exits with its code. Tracebacks are shown only with ``--debug``. An error made
from an ``i18n.Msg`` keeps it in ``shown``: the line is printed in the chosen language
(``--lang``), while ``message`` stays English.
"""

from __future__ import annotations

import sys
from enum import IntEnum
from typing import Any


class ExitStatus(IntEnum):
    """Exit status of ``agentdbg run`` (and the other commands)."""

    OK = 0                # run completed with an answer; check found no error
    FINDINGS = 1          # check/tools: error-level findings
    USAGE = 2             # bad usage or an unreadable input file
    MAX_TURNS = 3
    MAX_TOOL_CALLS = 4
    REPEATED_CALL = 5
    TIMEOUT = 6
    MODEL_ERROR = 7
    INVALID_REQUEST = 8
    INTERNAL = 70         # a bug in agentdbg (traceback with --debug)
    COMMAND_NOT_FOUND = 127  # proxy -- CMD: no such command (what a shell answers)
    CANCELLED = 130
    BROKEN_PIPE = 141     # the output's reader went away (`| head`), as a shell reports SIGPIPE


class AgentdbgError(Exception):
    """Base class: a message for the user and the exit status that goes with it."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: object):
        super().__init__(str(message))
        self.message = str(message)
        self.shown: object = message   # the text to show: an i18n.Msg, or the English text


class ConfigError(AgentdbgError):
    """A tools file, script file or option is wrong. Names file:line:col when it can."""


class InputError(AgentdbgError):
    """An input file (messages, transcript) cannot be read."""


class ProviderError(AgentdbgError):
    """The model endpoint failed. ``retryable`` says whether trying again may help; ``status``
    is the HTTP status when the API answered (a 400: it rejected the request)."""

    exit_status = ExitStatus.MODEL_ERROR

    def __init__(self, message: object, *, retryable: bool = False, status: int | None = None,
                 body: dict | None = None, shown: object = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.body = body          # the API's error body, when it answered with one
        if shown is not None:     # the message to show in the chosen language (an i18n.Msg)
            self.shown = shown


def where(path: object, line: int | None, col: int | None) -> str:
    """``path:line:col`` (line/col 1-based, omitted when unknown)."""
    at = str(path)
    if line is not None:
        at += f":{line}"
        if col is not None:
            at += f":{col}"
    return at


def located(path: object, line: int | None, col: int | None, message: str) -> str:
    """Format ``path:line:col: message`` (line/col 1-based, omitted when unknown)."""
    return f"{where(path, line, col)}: {message}"


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt so the run is stopped and recorded like Ctrl-C."""


def redeliver_interrupts() -> None:
    """Install (once) the ``sys.unraisablehook`` that gives back a dropped Ctrl-C or SIGTERM:
    the same signal is sent to the main thread again from a short-lived thread (sent from the
    hook, it would interrupt the hook and be dropped again), and stops the run as any other
    does; every other unraisable exception goes to the hook that was there before."""
    previous = sys.unraisablehook
    if getattr(previous, "redelivers_interrupts", False):
        return

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is None or not issubclass(unraisable.exc_type, KeyboardInterrupt):
            previous(unraisable)
            return
        import _thread
        import signal
        import threading

        sig = signal.SIGTERM if issubclass(unraisable.exc_type, Terminated) else signal.SIGINT
        # the thread needs the interpreter's lock, which this one holds until it is past
        # the finalizer; should it land before, in another finalizer, it comes back here
        main = threading.main_thread().ident
        if main is not None:
            _thread.start_new_thread(signal.pthread_kill, (main, sig))

    hook.redelivers_interrupts = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook
