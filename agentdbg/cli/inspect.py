"""``check`` and ``tools``: judge a history or a tools file without running anything."""


from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from agentdbg.cli.app import command, make_console
from agentdbg.cli.options import DebugOpt, FullOpt, JsonOpt, Lang, LangOpt, OwnLangOpt, Profile, ProfileOpt


class WireFormat(str, Enum):
    chat = "chat"
    responses = "responses"
    anthropic = "anthropic"
    gemini = "gemini"


def _list_profiles(value: bool) -> None:
    """``check --profiles``: each provider profile and what it adds, then exit."""
    if not value:
        return
    from rich.table import Table

    from agentdbg.checker.profiles import PROFILES
    from agentdbg.i18n import _, language
    from agentdbg.render.wrap import cjk

    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for p in PROFILES.values():   # Chinese folds between characters
        table.add_row(p.name, _(p.description) if language() == "en" else cjk(_(p.description)))
    console = make_console()
    console.print(_("provider profiles (--profile NAME; default openai):"))
    console.print(table)
    raise typer.Exit()


def _list_rules(value: bool) -> None:
    """``check --rules``: every rule with its mark in each wire format, from the registry."""
    if not value:
        return
    from rich.text import Text

    from agentdbg.checker.formats.table import FORMATS, LEGEND, rule_rows
    from agentdbg.i18n import _, language
    from agentdbg.render.wrap import Paragraph

    def folded(text: Text) -> object:   # Chinese breaks between characters
        return text if language() == "en" else Paragraph(text)

    console = make_console()
    for rule, summary, marks in rule_rows():
        line = Text(rule, style="bold")
        line.append("  " + " · ".join(f"{name} {_mark(mark)}"
                                      for (name, _label), mark in zip(FORMATS, marks)))
        console.print(line)
        console.print(folded(Text("    " + _(summary), style="dim")))
    console.print(folded(Text(_(LEGEND))))
    raise typer.Exit()


def _mark(mark: str) -> str:
    """A rule's mark in a format (``E``, ``W (E under vllm)`` …) in the chosen language: the
    letters stay, the words after them are translated."""
    import re

    from agentdbg.i18n import _

    whole = _(mark)
    if whole != mark:
        return whole
    m = re.fullmatch(r"([EWP]) \((.+)\)", mark)
    if not m:
        return mark
    under = re.fullmatch(r"E under (.+)", m.group(2))
    inner = (_("E under {profiles}").format(profiles=under.group(1)) if under
             else _(m.group(2)))
    return f"{m.group(1)} ({inner})"


@command(epilog="Exit status: 0 no error-level finding; 1 errors found; 2 unreadable input.")
def check(
    file: Annotated[str, typer.Argument(
        help="Messages array, request body (Chat Completions, Responses, Anthropic Messages or "
             "Gemini generateContent), bare Responses 'input' or Gemini 'contents' array, saved "
             "run, transcript, or JSONL of these; '-' for stdin.")],
    tools: Annotated[Path | None, typer.Option(
        "--tools", "-t", envvar="AGENTDBG_TOOLS", show_default=False,
        help="tools.yaml whose definitions are checked against when the input sends no tools "
             "(default: none; tool checks are skipped and the output says so).")] = None,
    wire_format: Annotated[WireFormat | None, typer.Option(
        "--format", "-f", show_default=False,
        help="The wire format of the input (default: recognised per document).")] = None,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    json_out: JsonOpt = False,
    full: FullOpt = False,
    profiles: Annotated[bool, typer.Option(
        "--profiles", callback=_list_profiles, is_eager=True,
        help="List the provider profiles and what each adds, then exit.")] = False,
    lang: LangOpt = Lang.en,  # type: ignore[attr-defined]
    rules: Annotated[bool, typer.Option(
        "--rules", callback=_list_rules, is_eager=True,
        help="List every rule, its severity in each wire format and what it means, then "
             "exit.")] = False,
    debug: DebugOpt = False,
) -> int:
    """Check a request or a history against the protocol rules real APIs enforce (Chat
    Completions, the Responses API, the Anthropic Messages API)."""
    from agentdbg.drivers.check import run_check

    return run_check(file, tools, profile.value, json_out=json_out, full=full,
                     console_factory=make_console,
                     fmt=wire_format.value if wire_format is not None else None, lang=lang.value)


@command(name="tools", epilog="Exit status: 0 clean or warnings only; 1 lint errors; "
         "2 unreadable file.")
def tools_cmd(
    path: Annotated[Path | None, typer.Argument(
        help="tools.yaml (default ./tools.yaml, else the bundled sample).")] = None,
    connect: Annotated[bool, typer.Option(
        "--connect", help="Also start the MCP servers the file names, to list and lint their "
        "tools (a found ./tools.yaml only when trusted: agentdbg trust).")] = False,
    json_out: JsonOpt = False,
    lang: LangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """List the tools of a tools.yaml and lint their definitions. Reads the file only: no
    handler is imported, no command run, no MCP server started (--connect starts them)."""
    from agentdbg.cli.trust import ask, interactive
    from agentdbg.drivers.tools import run_tools

    return run_tools(path, json_out=json_out, console=make_console(), debug=debug,
                     connect=connect, ask=ask if interactive(json_out) else None)


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@command(epilog="e.g.  agentdbg completion bash >> ~/.bashrc   (zsh: ~/.zshrc; fish: "
                "~/.config/fish/completions/agentdbg.fish); then open a new shell.")
def completion(
    shell: Annotated[Shell, typer.Argument(help="The shell to complete in.")],
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Print the shell completion script: commands, options and their values complete with Tab."""
    from typer.completion import completion_init, get_completion_script

    completion_init()
    print(get_completion_script(prog_name="agentdbg", complete_var="_AGENTDBG_COMPLETE",
                                shell=shell.value))
    return 0


@command(epilog="Exit status: 0 written; 2 a file already exists, or the tools JSON is unreadable.")
def init(
    folder: Annotated[Path, typer.Argument(help="Where to write them (default: here).")] = Path("."),
    source: Annotated[Path | None, typer.Option(
        "--from", help="A tools JSON your app already has (an OpenAI 'tools' array, or "
                       "{\"tools\": [...]}): its tools, each with a handler to fill in.",
        show_default=False)] = None,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Start a project: a commented tools.yaml and its handler module (handlers.py); never
    overwrites a file."""
    from agentdbg.drivers.init import init_project
    from agentdbg.i18n import _
    from agentdbg.render.safe import one_line

    written = init_project(folder, source)
    from agentdbg.trust import record_trust

    record_trust(written.tools)   # it wrote the file: ./tools.yaml runs without asking
    names = ", ".join(written.names)
    print(_("wrote {tools} ({n} tool(s): {names}) and {module}").format(
        tools=one_line(written.tools), n=len(written.names), names=one_line(names),
        module=one_line(written.module)))
    where = "" if folder == Path(".") else f"cd {one_line(folder)} && "
    print(_("next: {where}agentdbg tools     (lint them)\n"
            "      {where}agentdbg run \"QUESTION\"     (the loop, offline; --step: one phase at "
            "a time)").format(where=where))
    return 0
