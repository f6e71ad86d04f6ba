"""``report``, ``diff`` and ``export``: share a run as a page, compare two, send one to OpenTelemetry.

Each takes what ``agentdbg runs`` shows (a #, a name, ``last``) or a transcript's path.
"""


from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from agentdbg.cli.app import command, make_console
from agentdbg.cli.options import DebugOpt, Lang, LangOpt, OwnLangOpt, Profile, ProfileOpt

RUN_HELP = "A transcript, or a run 'agentdbg runs' lists: its #, its name, or last."


class ExportFormat(str, Enum):
    otlp_json = "otlp-json"


def _resolve(text: str) -> Path:
    from agentdbg.transcript.runs import resolve_run

    return resolve_run(text)


@command(epilog="Exit status: 0 written; 2 unreadable transcript or unwritable output.")
def report(
    transcript: Annotated[str, typer.Argument(help=RUN_HELP, show_default=False)],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="The HTML file to write (default: ./NAME.html).",
        show_default=False)] = None,
    diff_with: Annotated[str | None, typer.Option(
        "--diff", help="Also show how this run differs from another (a path, #, name or last).",
        show_default=False)] = None,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    lang: LangOpt = Lang.en,  # type: ignore[attr-defined]
    handout: Annotated[bool, typer.Option(
        "--handout", help="Write a handout for students instead: a page per phase (narration, "
                          "the messages, what changed), printable one phase per page.")] = False,
    lesson: Annotated[Path | None, typer.Option(
        "--lesson", help="With --handout: the lesson file whose title and exercises it carries.",
        show_default=False)] = None,
    debug: DebugOpt = False,
) -> int:
    """Write one self-contained HTML page of a run to attach to a bug report: the timeline
    with each call tied to its result, findings, tokens, your edits, the stop (no network,
    no scripts, secrets redacted)."""
    from agentdbg.report.commands import run_handout, run_report

    if handout:
        return run_handout(_resolve(transcript), output, make_console(), lesson=lesson,
                           lang=lang.value)
    if lesson is not None:
        from agentdbg.errors import ConfigError
        from agentdbg.i18n import N_, Msg

        raise ConfigError(Msg(N_("--lesson goes with --handout (the lesson's exercises are the "
                                 "handout's)")))
    other = _resolve(diff_with) if diff_with is not None else None
    return run_report(_resolve(transcript), output, make_console(), diff_with=other,
                      profile=profile.value, lang=lang.value)


@command(epilog="Exit status: 0 the runs match; 1 they differ; 2 an unreadable transcript.")
def diff(
    a: Annotated[str, typer.Argument(help="The first run: " + RUN_HELP, show_default=False)],
    b: Annotated[str, typer.Argument(help="The second run (a path, #, name or last).",
                                     show_default=False)],
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the comparison as one JSON document.")] = False,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    lang: LangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Compare two runs turn by turn and call by call: calls added, dropped or changed
    (arguments compared as JSON), results that differ, where they first diverge, and the
    difference in tokens, turns and stop reason."""
    from agentdbg.report.commands import run_diff

    return run_diff(_resolve(a), _resolve(b), json_out, make_console(), profile=profile.value)


@command(epilog="Exit status: 0 exported; 2 unreadable transcript, bad option, or the "
                "receiver or file did not take the spans.")
def export(
    transcript: Annotated[str, typer.Argument(help=RUN_HELP, show_default=False)],
    otlp: Annotated[str | None, typer.Option(
        "--otlp", help="An OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (a Collector, Jaeger, "
                       "Phoenix …); /v1/traces is added to a bare host.", show_default=False)] = None,
    fmt: Annotated[ExportFormat | None, typer.Option(
        "--format", help="Write a file instead (or as well): otlp-json, with -o FILE.",
        show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="The file for --format: OTLP/JSON Lines, one export per line, "
        "appended (as OpenTelemetry's file exporter writes it).", show_default=False)] = None,
    content: Annotated[bool, typer.Option(
        "--content", help="Include what was said: prompts, replies, tool arguments and "
                          "results, tool definitions (off by default).")] = False,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, help="Seconds to wait for the receiver.")] = 10.0,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Export a run to OpenTelemetry with the GenAI semantic conventions: one invoke_agent
    span, a chat span per model request, an execute_tool span per call, findings as events."""
    from agentdbg.report.commands import run_export

    return run_export(_resolve(transcript), otlp, fmt.value if fmt is not None else None, output,
                      content, make_console(), profile=profile.value, timeout=timeout)
