"""Options shared by several commands, declared once (with their help and variables)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from agentdbg.checker.profiles import PROFILES
from agentdbg.cli.app import Lang
from agentdbg.engine.phases import StopReason
from agentdbg.i18n import language


class Approve(str, Enum):
    all = "all"
    none = "none"


Profile = Enum("Profile", {name: name for name in PROFILES}, type=str)  # type: ignore[misc]

PROFILE_HELP = ("The provider whose own rules the checker adds; "
                "'agentdbg check --profiles' lists them and what each adds.")


def exit_codes(*extra: str) -> str:
    """The exit statuses of a run, from the stop reasons that define them."""
    codes = sorted([(int(r.exit_status), r.value) for r in StopReason] + [(2, "bad usage or input file")])
    return "Exit status: " + "; ".join([f"{n} {text}" for n, text in codes] + list(extra)) + "."


ToolsOpt = Annotated[Path | None, typer.Option(
    "--tools", "-t", envvar="AGENTDBG_TOOLS", show_default=False,
    help="tools.yaml to load (default ./tools.yaml, else the bundled sample).")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", "-m", envvar="AGENTDBG_MODEL",
    help="Model name at the endpoint; 'offline' (the default) needs no key.")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint URL.")]
ApiKeyOpt = Annotated[str | None, typer.Option(
    "--api-key", envvar="OPENAI_API_KEY", show_envvar=True, show_default=False,
    help="API key (never printed or saved).")]
ProfileOpt = Annotated[Profile, typer.Option(
    "--profile", "-p", envvar="AGENTDBG_PROFILE", metavar="NAME", help=PROFILE_HELP)]
ApproveOpt = Annotated[Approve | None, typer.Option(
    "--approve", help="Decision for tools with approval: always (default none; in --step mode "
    "you are asked).")]
SaveOpt = Annotated[Path | None, typer.Option(
    "--save", help="Write the transcript (JSON Lines) here; default: the runs folder.")]
JsonOpt = Annotated[bool, typer.Option(
    "--json", help="Print exactly one JSON document instead of the view.")]
FullOpt = Annotated[bool, typer.Option(
    "--full", help="Show every message in full, unfolded, every turn.")]
StepOpt = Annotated[bool, typer.Option(
    "--step", help="Open the step debugger: pause before every phase.")]
ExplainOpt = Annotated[bool, typer.Option(
    "--explain", help="Step mode: narrate each phase in protocol terms.")]
def _chosen_language(ctx: typer.Context, param: typer.CallbackParam, value: Lang) -> str:
    """The language chosen before parsing (``--lang`` wherever it stands, then AGENTDBG_LANG):
    ``agentdbg --lang zh run …`` speaks Chinese though run's own ``--lang`` is not typed."""
    source = ctx.get_parameter_source(param.name or "lang")
    return value.value if getattr(source, "name", "") == "COMMANDLINE" else language()


LangOpt = Annotated[Lang, typer.Option(
    "--lang", envvar="AGENTDBG_LANG", callback=_chosen_language,
    help="The language of what agentdbg prints: step mode, the run view, narration, the "
         "checker's findings (the API's own error texts stay verbatim).")]
#: ``--lang`` of a command with nothing to narrate: its own lines, errors and --help
OwnLangOpt = Annotated[Lang, typer.Option(
    "--lang", envvar="AGENTDBG_LANG", callback=_chosen_language,
    help="The language of what agentdbg prints: its own lines, errors and --help (--json and "
         "transcripts stay English).")]
PresentOpt = Annotated[bool, typer.Option(
    "--present", help="The presenter view for a room: high contrast, no dim or italic text, the "
    "header on one line, only what is new (one line for the rest).")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks and full tool errors.")]
