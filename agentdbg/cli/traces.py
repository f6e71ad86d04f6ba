"""``import`` and ``collect``: runs that happened elsewhere, read as agentdbg runs."""


from pathlib import Path
from typing import Annotated

import typer

from agentdbg.cli.app import command
from agentdbg.cli.options import DebugOpt, FullOpt, Lang, OwnLangOpt, Profile, ProfileOpt


@command(name="import")
def import_cmd(
    path: Annotated[Path, typer.Argument(
        metavar="FILE|DIR", help="A Claude Code session (~/.claude/projects/…/SESSION.jsonl), a "
        "Codex CLI rollout ($CODEX_HOME/sessions/…/rollout-*.jsonl), OpenTelemetry traces (OTLP "
        "JSON or protobuf), or a folder holding them.", show_default=False)],
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="The folder for the transcripts (default: the runs folder).",
        show_default=False)] = None,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Write other tools' records of runs as agentdbg transcripts, one per conversation.

    Every command that takes a transcript also reads these files directly (their first
    conversation); import writes each conversation, a subagent's linked to its parent's call."""
    from agentdbg.drivers.importing import import_all, summary

    for line in summary(import_all(path, output)):
        print(line)
    return 0


@command(quiet_interrupt=True)
def collect(
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port).")] = 4318,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    forward: Annotated[str | None, typer.Option(
        "--forward", help="Also pass every export on, unchanged, to this OTLP/HTTP receiver "
        "(your real collector), e.g. http://127.0.0.1:4319.", show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Folder for one transcript per conversation (default: the runs folder).",
        show_default=False)] = None,
    live: Annotated[bool, typer.Option(
        "--live", help="Serve the conversations' report on loopback, updated as spans arrive; "
        "its URL (with a random token) is printed once.")] = False,
    drain: Annotated[float, typer.Option(
        "--drain-timeout", help="At stop, seconds to let collect finish the exports it received "
        "(a second Ctrl-C stops waiting); the rest are counted as not read.")] = 60.0,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    full: FullOpt = False,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Receive OpenTelemetry traces (OTLP/HTTP, JSON or protobuf) on loopback: each model call
    becomes a conversation's request as it arrives, checked, shown and saved.

    Point an instrumented app at it: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"""
    from agentdbg.server.collect.command import CollectOptions, run_collect

    run_collect(CollectOptions(host=host, port=port, forward=forward, save=save, live=live,
                               profile=profile.value, full=full, drain=drain))
    return 0
