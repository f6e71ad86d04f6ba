"""``check`` and ``tools``: judge a history or a tools file without running anything."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from agentdbg.cli.app import command, make_console
from agentdbg.cli.options import DebugOpt, FullOpt, JsonOpt, Profile, ProfileOpt


class WireFormat(str, Enum):
    chat = "chat"
    responses = "responses"
    anthropic = "anthropic"


@command(epilog="Exit status: 0 no error-level finding; 1 errors found; 2 unreadable input.")
def check(
    file: Annotated[str, typer.Argument(
        help="Messages array, request body (Chat Completions, Responses or Anthropic Messages), "
             "bare Responses 'input' array, saved run, transcript, or JSONL of these; '-' for stdin.")],
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
    debug: DebugOpt = False,
) -> int:
    """Check a request or a history against the protocol rules real APIs enforce (Chat
    Completions, the Responses API, the Anthropic Messages API)."""
    from agentdbg.drivers.check import run_check

    return run_check(file, tools, profile.value, json_out=json_out, full=full,
                     console_factory=make_console,
                     fmt=wire_format.value if wire_format is not None else None)


@command(name="tools", epilog="Exit status: 0 clean or warnings only; 1 lint errors; "
         "2 unreadable file.")
def tools_cmd(
    path: Annotated[Path | None, typer.Argument(
        help="tools.yaml (default ./tools.yaml, else the bundled sample).")] = None,
    connect: Annotated[bool, typer.Option(
        "--connect", help="Also start the MCP servers the file names, to list and lint their "
        "tools (a found ./tools.yaml only when trusted: agentdbg trust).")] = False,
    json_out: JsonOpt = False,
    debug: DebugOpt = False,
) -> int:
    """List the tools of a tools.yaml and lint their definitions. Reads the file only: no
    handler is imported, no command run, no MCP server started (--connect starts them)."""
    from agentdbg.cli.trust import ask, interactive
    from agentdbg.drivers.tools import run_tools

    return run_tools(path, json_out=json_out, console=make_console(), debug=debug,
                     connect=connect, ask=ask if interactive(json_out) else None)
