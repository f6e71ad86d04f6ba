"""``run``, ``replay`` and ``runs``: drive the loop, replay it, list what was recorded."""


from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from agentdbg import i18n
from agentdbg.cli.app import command, make_console, warn
from agentdbg.cli.options import (
    ApiKeyOpt,
    Approve,
    ApproveOpt,
    BaseUrlOpt,
    DebugOpt,
    ExplainOpt,
    FullOpt,
    JsonOpt,
    Lang,
    LangOpt,
    ModelOpt,
    OwnLangOpt,
    PresentOpt,
    Profile,
    ProfileOpt,
    SaveOpt,
    StepOpt,
    ToolsOpt,
    exit_codes,
)
from agentdbg.errors import AgentdbgError
from agentdbg.i18n import N_, Msg

if TYPE_CHECKING:
    from rich.console import Console

McpOpt = Annotated[list[str] | None, typer.Option(
    "--mcp", help="An MCP server whose tools join the run: a URL (Streamable HTTP) or a command "
    "in quotes (stdio), e.g. --mcp \"python -m mcp_server_time\" (repeatable). Without --tools, "
    "only ./tools.yaml joins it (not the bundled sample).")]

ReplayMcpOpt = Annotated[list[str] | None, typer.Option(
    "--mcp", help="An MCP server whose tools run live (--live-tools, --from, 'live'), beside "
    "those of --tools: a URL (Streamable HTTP) or a command in quotes (stdio), e.g. --mcp "
    "\"python -m mcp_server_time\" (repeatable); started only when going live. Without --tools, "
    "only its tools: ./tools.yaml is never loaded, nor a server the recording names.")]


class Api(str, Enum):
    chat = "chat"
    responses = "responses"
    anthropic = "anthropic"
    gemini = "gemini"


def _step_only(step: bool, explain: bool) -> None:
    if not step and explain:
        warn(Msg(N_("--explain narrates step mode; without --step it does nothing")))


@command(epilog=exit_codes())
def run(
    ctx: typer.Context,
    question: Annotated[str | None, typer.Argument(
        metavar="QUESTION", help="The user's question (a lesson file may give it).",
        show_default=False)] = None,
    tools: ToolsOpt = None,
    mcp: McpOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    script: Annotated[Path | None, typer.Option(
        "--script", help="Play a YAML script of assistant turns instead of a model.")] = None,
    system: Annotated[str | None, typer.Option("--system", help="A system message.")] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="Model requests at most.")] = 8,
    max_tool_calls: Annotated[int, typer.Option(
        "--max-tool-calls", min=1, help="Tool executions at most.")] = 32,
    repeat_limit: Annotated[int, typer.Option(
        "--repeat-limit", min=2,
        help="Stop after the same call with the same result this many times in a row.")] = 3,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.01, help="Whole-run wall-clock limit in seconds.")] = None,
    approve: ApproveOpt = None,
    tool_choice: Annotated[str | None, typer.Option(
        "--tool-choice", help="auto | none | required | a tool name.")] = None,
    parallel_tool_calls: Annotated[bool | None, typer.Option(
        "--parallel-tool-calls/--no-parallel-tool-calls",
        help="Send parallel_tool_calls (default: not sent).")] = None,
    temperature: Annotated[float | None, typer.Option(
        "--temperature", help="Sampling temperature sent to the model (default: not sent).")] = None,
    retries: Annotated[int, typer.Option(
        "--retries", min=0, help="Retries of a failed model request (429/5xx/connection).")] = 0,
    api: Annotated[Api, typer.Option(
        "--api", help="Wire format of the endpoint: chat (Chat Completions), responses (the "
        "Responses API, openai client), anthropic (Messages API, anthropic client) or gemini "
        "(generateContent, google-genai client).")] = Api.chat,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    send_anyway: Annotated[bool, typer.Option(
        "--send-anyway", help="Send a request even when the checker finds errors in it.")] = False,
    save: SaveOpt = None,
    redact: Annotated[list[str] | None, typer.Option(
        "--redact", help="A regex whose matches are replaced in the transcript (repeatable).")] = None,
    keep_runs: Annotated[int, typer.Option(
        "--keep-runs", envvar="AGENTDBG_KEEP_RUNS", min=1,
        help="How many transcripts the runs folder keeps.")] = 50,
    otlp: Annotated[str | None, typer.Option(
        "--otlp", help="Also export the run to this OTLP/HTTP receiver as it goes "
                       "(OpenTelemetry GenAI spans, no message contents), e.g. http://127.0.0.1:4318.",
        show_default=False)] = None,
    json_out: JsonOpt = False,
    full: FullOpt = False,
    step: StepOpt = False,
    explain: ExplainOpt = False,
    lang: LangOpt = Lang.en,  # type: ignore[attr-defined]
    present: PresentOpt = False,
    lesson: Annotated[Path | None, typer.Option(
        "--lesson", show_default=False,
        help="A lesson file (YAML): the question, options, breakpoints, faults and steps with "
        "notes and pauses; opens step mode.")] = None,
    commands: Annotated[list[str] | None, typer.Option(
        "-c", "--command", show_default=False,
        help="A step-mode command to run at the start, as pdb's -c (repeatable); opens step "
        "mode.")] = None,
    debug: DebugOpt = False,
) -> int:
    """Run the tool loop on QUESTION and show every turn's full messages array."""
    from agentdbg.cli.trust import ask, interactive
    from agentdbg.drivers.launch import drive, handler_warnings, load_run_tools
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.options import RunOptions
    from agentdbg.providers.factory import make_provider, precheck_for
    from agentdbg.trust import untrusted_line

    plan = _lesson_plan(ctx, lesson, locals())
    question, step = plan.pop("question"), step or bool(lesson or commands)
    system, profile, approve = plan["system"], plan["profile"], plan["approve"]
    lang, explain, present, max_turns, full = (plan["lang"], plan["explain"], plan["present"],
                                               plan["max_turns"], plan["full"])
    if step and json_out:
        raise AgentdbgError(Msg(N_("--step and --json cannot be combined")))
    _step_only(step, explain)
    _never_over_inputs(save, script=script, tools=tools)
    _offline_has_no_url(ctx, model, script)
    toolset = load_run_tools(tools, mcp or [], ask=ask if interactive(json_out) else None)
    if plan["lesson"] is not None and not mcp:   # an MCP server's tools are known once it starts
        plan["lesson"].check_tools({spec.name for spec in toolset.tools})
    if toolset.trust == "untrusted":           # MCP servers start in drive(), if trusted
        warn(untrusted_line(toolset))
    for line in handler_warnings(toolset):
        warn(line)
    info = make_provider(model, base_url, api_key, script, retries, api=api.value,
                         profile=profile.value)
    if api is not Api.chat and (script is not None or info.offline):
        what = Msg(N_("a script")) if script is not None else Msg(N_("the offline model"))
        warn(Msg(N_("--api {api} picks the wire format of a real endpoint (--model); {what} has "
                    "none, so nothing is sent in it: requests are only checked as that API would"),
                 {"api": api.value, "what": what}))
    config = RunConfig(
        model=info.model, max_turns=max_turns, max_tool_calls=max_tool_calls,
        repeat_limit=repeat_limit, timeout=timeout,
        approve=approve.value if approve else ("ask" if step else "none"), stop_on_invalid=not step,
        tool_choice=_tool_choice(tool_choice), parallel_tool_calls=parallel_tool_calls,
        temperature=temperature, send_anyway=send_anyway)
    session = Session.for_question(
        info.provider, toolset, question, config, system=system,
        precheck=precheck_for(api.value, profile.value))
    options = RunOptions(
        model_desc=info.description, model=info.model, provider_name=info.name,
        base_url=info.base_url, offline=info.offline, question=question, step=step,
        json_out=json_out, full=full, debug=debug, save=save, keep_runs=keep_runs,
        redact=list(redact or []), secrets=_secrets(api_key, info.base_url), profile=profile.value,
        explain=explain, lang=lang.value, present=present, lesson=plan["lesson"],
        commands=list(commands or []))
    return drive(session, make_console(present=present), options, export=_otlp_export(otlp))


def _lesson_plan(ctx: typer.Context, path: Path | None, given: dict) -> dict:
    """The run's question and options: a lesson file's, where the command line leaves them
    at their defaults. A lesson names no code: its tools are passed with --tools."""
    from agentdbg.cli.options import Approve, Lang, Profile

    plan = {k: given[k] for k in ("question", "system", "profile", "approve", "lang", "explain",
                                  "present", "max_turns", "full")}
    plan["lesson"] = None
    if path is not None:
        from agentdbg.repl.lesson import load_lesson

        typed = {k for k in plan if getattr(ctx.get_parameter_source(k), "name", "") in
                 ("COMMANDLINE", "ENVIRONMENT")}
        lesson = plan["lesson"] = load_lesson(path, None if "lang" in typed else _speak)
        if lesson.tools and given["tools"] is None:
            raise AgentdbgError(Msg(N_("{path}: the lesson was prepared with the tools of {tools}; "
                                       "pass them with --tools (a lesson never loads code by "
                                       "itself)"), {"path": path, "tools": lesson.tools}))
        if "question" not in typed or plan["question"] is None:
            plan["question"] = lesson.question
        kinds: dict[str, Any] = {"lang": Lang, "profile": Profile, "approve": Approve}
        for key, value in lesson.options.items():
            if key not in typed:
                try:
                    plan[key] = kinds[key](value) if key in kinds else value
                except ValueError:
                    choices = ", ".join(str(m.value) for m in kinds[key])
                    raise AgentdbgError(Msg(N_("{path}: options: {key}: {value} is not one of "
                                               "{choices}"),
                                            {"path": path, "key": key, "value": repr(value),
                                             "choices": choices})) from None
    if not plan["question"]:
        raise AgentdbgError(Msg(N_("a QUESTION is needed (or a --lesson file that has one)")))
    return plan


def _speak(lang: str) -> None:
    """A lesson's ``options: {lang: …}``, when there is a catalog for it: from now on, its own
    errors included (a language with none is said wrong once the options are checked)."""
    if lang in i18n.languages():
        i18n.use(lang)


def _offline_has_no_url(ctx: typer.Context, model: str | None, script: Path | None) -> None:
    """``--base-url`` typed with the offline model would be ignored: say so and stop (a URL
    from ``OPENAI_BASE_URL`` in the environment is not the user's choice for this run)."""
    source = ctx.get_parameter_source("base_url")
    typed = getattr(source, "name", None) == "COMMANDLINE"
    if typed and script is None and (not model or model == "offline"):
        raise AgentdbgError(Msg(N_("--base-url is for a real endpoint, with --model NAME (e.g. "
                                   "--model gpt-4o-mini --base-url URL); the offline model sends "
                                   "nothing over the network and answers a broken request with "
                                   "the API's own error itself")))


def _never_over_inputs(save: Path | None, **inputs: Path | None) -> None:
    """``--save`` must not name a file the run reads (the transcript would replace it)."""
    from agentdbg.paths import same_file

    for option, path in inputs.items():
        if save is not None and path is not None and same_file(path, save):
            raise AgentdbgError(Msg(N_("--save {save}: that is the --{option} file; writing the "
                                       "transcript there would destroy it: choose another path"),
                                    {"save": save, "option": option}))


def _secrets(api_key: str | None, base_url: str | None) -> list[str]:
    """What must never be shown, recorded or handed to a command tool: the key, and the
    credentials in the endpoint's URL (also when it came from OPENAI_BASE_URL)."""
    from agentdbg.transcript.redact import url_secrets

    return [*([api_key] if api_key else []), *url_secrets(base_url)]


def _otlp_export(otlp: str | None) -> Callable[[dict, Any], Any] | None:
    """``--otlp URL``: checked now (an http(s) URL, the SDK installed), exported as it goes."""
    if otlp is None:
        return None
    from agentdbg.report.commands import check_otlp, run_export_factory

    check_otlp(otlp)
    return run_export_factory(otlp)


def _tool_choice(value: str | None) -> str | dict | None:
    if value is None or value in ("auto", "none", "required"):
        return value
    return {"type": "function", "function": {"name": value}}


@command(epilog=exit_codes("1 with --strict when a live tool result differs, or the replay diverged"))
def replay(
    file: Annotated[str, typer.Argument(
        help="A transcript (.jsonl), or a run 'agentdbg runs' lists: its #, its name, or last; "
             "with --step also a plain messages array as a start.")],
    step: StepOpt = False,
    json_out: JsonOpt = False,
    live_tools: Annotated[bool, typer.Option(
        "--live-tools", help="Re-run every recorded call with the tools of --tools and compare.")] = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Compare requests byte for byte (default: as the API reads them: "
        "arguments as JSON, fields clients add ignored); with --live-tools, exit 1 when a "
        "result differs.")] = False,
    from_index: Annotated[int | None, typer.Option(
        "--from", min=0, help="Keep messages 0..N of the recording and continue live (a fork).")] = None,
    tools: Annotated[Path | None, typer.Option(
        "--tools", "-t", show_default=False,
        help="The tools to run live (--live-tools, --from, 'live'); a transcript's own tools "
             "file is never loaded.")] = None,
    mcp: ReplayMcpOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    approve: Annotated[Approve | None, typer.Option(
        "--approve", help="'all' lets side-effecting tools run (live tools, forks).")] = None,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    save: Annotated[Path | None, typer.Option(
        "--save", help="Where to write the transcript of this replay (JSON Lines).")] = None,
    full: FullOpt = False,
    explain: ExplainOpt = False,
    lang: LangOpt = Lang.en,  # type: ignore[attr-defined]
    present: PresentOpt = False,
    commands: Annotated[list[str] | None, typer.Option(
        "-c", "--command", show_default=False,
        help="A step-mode command to run at the start, as pdb's -c (repeatable); opens step "
        "mode.")] = None,
    debug: DebugOpt = False,
) -> int:
    """Replay a recorded run with no network, step through it, compare tools, or fork it."""
    from agentdbg.drivers.replay import ReplayArgs, run_replay

    step = step or bool(commands)
    if step and json_out:
        raise AgentdbgError(Msg(N_("--step and --json cannot be combined")))
    _step_only(step, explain)
    return run_replay(ReplayArgs(
        file=file, step=step, json_out=json_out, live_tools=live_tools, strict=strict,
        from_index=from_index, tools=tools, mcp=list(mcp or []), model=model, base_url=base_url,
        api_key=api_key,
        approve=approve.value if approve else None, profile=profile.value, save=save, full=full,
        explain=explain, lang=lang.value, debug=debug, present=present,
        commands=list(commands or [])), _console(json_out, present))


def _console(json_out: bool, present: bool) -> "Console":
    """The console; with ``--json`` one made only if something prints through it (the
    document is written to stdout as it is, and Rich need not be imported)."""
    if not json_out:
        return make_console(present=present)
    from agentdbg.render.deferred import DeferredConsole

    return cast("Console", DeferredConsole(lambda: make_console(present=present)))


@command()
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many to list.")] = 20,
    json_out: JsonOpt = False,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """List the saved runs (transcripts in the runs folder), newest first."""
    from agentdbg.drivers.runs import list_runs

    list_runs(make_console(), limit, json_out=json_out)
    return 0
