"""Step-mode commands for a class: narration, the glossary, command files and lessons."""

from __future__ import annotations

from pathlib import Path

from agentdbg.i18n import N_, Msg, _, languages
from agentdbg.repl.table import CommandError, Stepper, cannot_read, command, one_arg, section

section(N_("teaching"))

#: the protocol words a student meets, with what each means (shown by 'glossary')
GLOSSARY = [
    ("messages", N_("the conversation so far, sent whole with every request: the API keeps no "
                    "memory between requests.")),
    ("role", N_("who wrote a message: system (instructions), user (the person), assistant (the "
                "model) or tool (a tool's result).")),
    ("tools", N_("the tool definitions sent with each request: a name, a description and a JSON "
                 "Schema of the parameters. The model only sees these; the app runs the tools.")),
    ("tool_calls", N_("what an assistant message carries when the model wants tools run: each "
                      "call has an id, a function name and its arguments as a JSON string.")),
    ("tool_call_id", N_("on a role \"tool\" message: the id of the call it answers. Results are "
                        "matched to calls by id, never by position; an id with no call before it "
                        "is rejected by the API (HTTP 400).")),
    ("arguments", N_("the call's parameters, written by the model as a JSON string: the app must "
                     "parse and validate them before running the tool.")),
    ("finish_reason", N_("why the model stopped: tool_calls (it wants tools run) or stop (it "
                         "answered).")),
    ("parallel_tool_calls", N_("several tool_calls in one assistant message (the request's "
                               "parallel_tool_calls allows them): the app may run them at once; each "
                               "result still carries its own tool_call_id.")),
]


@command("glossary", "术语", "gl")
def cmd_glossary(dbg: Stepper, arg: str) -> None:
    """glossary
    explain the protocol words: tool_calls, role …
    The words stay in English on every screen, as they are in the JSON the API reads."""
    dbg.show_glossary(GLOSSARY)


@command("explain", "x")
def cmd_explain(dbg: Stepper, arg: str) -> None:
    """explain [on|off|LANG]
    narrate each phase in protocol terms
    LANG (en, zh …) also switches everything step mode prints to that language."""
    word = arg.strip() or "on"
    if word in languages():
        dbg.set_language(word)
        dbg.explain = True
    elif word in ("on", "off"):
        dbg.explain = word == "on"
    else:
        usage = "explain [on|off|" + "|".join(languages()) + "]"
        raise CommandError(Msg("usage: {usage}", {"usage": usage}))
    dbg.say((_("explain on ({lang})") if dbg.explain else _("explain off ({lang})")).format(
        lang=dbg.lang))


@command("source", args=("file",))
def cmd_source(dbg: Stepper, arg: str) -> None:
    """source FILE
    run the commands in FILE, one a line
    Blank lines and lines starting with # are skipped; each command is shown as if typed."""
    path = Path(one_arg(arg, N_("source FILE")))
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise cannot_read(path, exc) from None
    dbg.run_commands([line for line in lines if line.strip() and not line.lstrip().startswith("#")])


@command("lesson", args=("file",))
def cmd_lesson(dbg: Stepper, arg: str) -> None:
    """lesson PATH
    write this session as a lesson file
    The question, the options, the breakpoints, the faults set with 'fail' and the commands
    you typed (as steps) go into PATH (YAML); add notes, pauses and exercises there, then
    'agentdbg run --lesson PATH'."""
    path = Path(one_arg(arg, N_("lesson PATH")))
    dbg.write_lesson(path)
    dbg.say(_("lesson written to {path} (run it with: agentdbg run --lesson {path})").format(
        path=path))


@command("cls")
def cmd_cls(dbg: Stepper, arg: str) -> None:
    """cls
    clear the screen (also Ctrl-L)
    The session is unchanged; 'messages' shows the history again."""
    dbg.clear_screen()
