"""The command table of step mode: registration, lookup and ``help``.

Each command is ``fn(dbg: Stepper, arg: str)``; it raises ``CommandError`` for a one-line error and
the debugger stays at the prompt. The docstring is the help, as pdb's: the usage line, a
one-line summary (what ``help`` lists, sized for 80 columns), then the details ``help CMD``
adds. Help is shown in the chosen language: the docstrings' lines are catalog entries.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentdbg.i18n import N_, Msg, _, tr

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.engine.replaying import ActionReplayed, Replay
    from agentdbg.engine.session import Event, Session
    from agentdbg.options import RunOptions
    from agentdbg.repl.breakpoints import Breakpoints
    from agentdbg.transcript.writer import TranscriptWriter


class Stepper(Protocol):
    """What a command may use of the step debugger (``repl.debugger.Debugger`` is one; a
    protocol, so the commands' modules need not import the module that imports them)."""

    session: Session
    console: Console
    options: RunOptions
    breakpoints: Breakpoints
    replay: Replay | None
    transcript: TranscriptWriter | None
    explain: bool
    quitting: bool
    lang: str
    full: bool

    def say(self, text: str, style: str = "") -> None: ...
    def ask(self, question: str) -> str: ...
    def changed(self) -> None: ...
    def advance(self) -> Event | ActionReplayed | None: ...
    def back(self) -> None: ...
    def run_to_break(self) -> None: ...
    def go_live(self) -> None: ...
    def show_all(self, full: bool = False) -> None: ...
    def show_tools(self) -> None: ...
    def show_usage(self) -> None: ...
    def show_glossary(self, glossary: list[tuple[str, str]]) -> None: ...
    def focus(self, target: str) -> None: ...
    def print_json(self, obj: Any, title: str = "") -> None: ...
    def clear_screen(self) -> None: ...
    def edit_json(self, value: Any, what: str) -> Any: ...
    def save(self, path: str | Path) -> None: ...
    def set_language(self, lang: str) -> None: ...
    def run_commands(self, lines: list[str]) -> None: ...
    def write_lesson(self, path: Path) -> None: ...


#: a command: the debugger and the rest of the line
CommandFn = Callable[[Stepper, str], None]


class CommandError(Exception):
    """A one-line error for the prompt (a ``Msg`` is shown in the chosen language)."""

    def __init__(self, message: str | Msg):
        super().__init__(message)
        self.text = message

    def __str__(self) -> str:
        return tr(self.text)


@dataclass
class Command:
    name: str
    aliases: tuple[str, ...]
    fn: CommandFn
    usage: str
    summary: str                 # one line, whole: what 'help' lists
    help: str                    # the details 'help CMD' adds
    args: tuple[str, ...] = ()   # completion kinds for each argument position
    group: str = ""

    @property
    def names(self) -> str:
        """``next (n, Enter)``: the name and every alias."""
        extra = list(self.aliases) + ([_("Enter")] if self.name == "next" else [])
        return f"{self.name} ({', '.join(extra)})" if extra else self.name


COMMANDS: dict[str, Command] = {}
ALIASES: dict[str, str] = {}
_group = ""


def section(title: str) -> None:
    """The commands registered after this are listed under ``title`` (marked with ``N_``)."""
    global _group
    _group = title


def command(name: str, *aliases: str, args: tuple[str, ...] = ()) -> Callable[[CommandFn], CommandFn]:
    def register(fn: CommandFn) -> CommandFn:
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
        raise CommandError(Msg("unknown command {word}; 'help' lists the commands",
                               {"word": repr(word)}))
    return COMMANDS[name]


def one_arg(arg: str, usage: str) -> str:
    """``arg`` stripped; a usage error when it is empty (``usage`` marked with ``N_``: it is
    said in the chosen language, as 'help' says it)."""
    if not arg.strip():
        raise CommandError(Msg("usage: {usage}", {"usage": Msg(usage)}))
    return arg.strip()


def index_arg(dbg: Stepper, text: str) -> int:
    try:
        index = int(text)
    except ValueError:
        raise CommandError(Msg("expected a message index, got {text}", {"text": repr(text)})) from None
    last = len(dbg.session.messages) - 1
    if not 0 <= index <= last:
        raise CommandError(Msg("no message {index}; messages are 0..{last}",
                               {"index": index, "last": last}))
    return index


def call_arg(dbg: Stepper, target: str) -> str:
    """``target`` as the engine names a call: a label on screen (A, B …) becomes its call's id;
    an id, a prefix, an index or a tool name is left as it is (an id or name wins over a label)."""
    from agentdbg.checker.pairing import analyze
    from agentdbg.messages import call_name

    if not target.isalpha() or not target.isupper():
        return target
    calls = [c for m in dbg.session.messages if isinstance(m, dict)
             for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
    if any(c.get("id") == target or call_name(c) == target for c in calls):
        return target
    by_label = {label: cid for cid, label in analyze(dbg.session.messages).labels.items()}
    return by_label.get(target, target)


#: why a file could not be written, by errno, in words a student reads in their language
WRITE_PROBLEMS = {2: N_("the folder {folder} does not exist"), 13: N_("permission denied"),
                  1: N_("permission denied"), 21: N_("it is a folder"),
                  20: N_("{folder} is not a folder"), 28: N_("the disk is full"),
                  30: N_("the file system is read-only")}


#: why a file could not be read, by errno (the same words as a write's where they apply)
READ_PROBLEMS = {**WRITE_PROBLEMS, 2: N_("no such file")}


def cannot_read(path: str | Path, exc: OSError | UnicodeDecodeError) -> CommandError:
    """One line for a file step mode could not read: the path and the reason."""
    if isinstance(exc, UnicodeDecodeError):
        why: object = Msg(N_("not UTF-8 text (byte {byte})"), {"byte": exc.start})
    else:
        problem = READ_PROBLEMS.get(exc.errno or 0)
        why = Msg(problem, {"folder": str(Path(path).parent)}) if problem else \
            exc.strerror or type(exc).__name__
    return CommandError(Msg("{path}: cannot read it ({error})", {"path": str(path), "error": why}))


def cannot_write(path: str | Path, exc: OSError) -> CommandError:
    """One line for a file step mode could not write: the path and the reason."""
    problem = WRITE_PROBLEMS.get(exc.errno or 0)
    folder = str(Path(path).parent)
    why = Msg(problem, {"folder": folder}) if problem else exc.strerror or type(exc).__name__
    return CommandError(Msg("{path}: cannot write it ({error})", {"path": str(path), "error": why}))


HELP_WIDTH = 80


def help_text(word: str | None = None) -> str:
    """'help': one line per command (names and aliases, a whole summary), grouped, for 80
    columns; 'help CMD': its usage, aliases, summary and details, wrapped at 80."""
    from agentdbg.render.wrap import wrap_plain

    if word is not None:
        cmd = lookup(word)
        aliases = _("  (aliases: {aliases})").format(aliases=", ".join(cmd.aliases)) \
            if cmd.aliases else ""
        summary = _(cmd.summary)
        text = _("{summary}. {details}").format(summary=summary[:1].upper() + summary[1:],
                                               details=_(cmd.help)).strip()
        return f"{_(cmd.usage)}{aliases}\n" + wrap_plain(text, HELP_WIDTH, "  ")
    from rich.cells import cell_len

    column = max(cell_len(c.names) for c in COMMANDS.values()) + 2
    lines = [_("Commands ('help CMD' shows one in full; Enter repeats 'next'):")]
    group = None
    for c in COMMANDS.values():
        if c.group != group:
            group = c.group
            lines.append(_("{group}:").format(group=_(group)))
        lines.append(f"  {c.names}{' ' * (column - cell_len(c.names))}{_(c.summary)}")
    return "\n".join(lines)
