"""The ``agentdbg`` command line. Thin commands: parse, build, hand to a driver.

Heavy modules (openai, jsonschema, prompt_toolkit, rich) are imported inside
the commands that need them, so ``agentdbg --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agentdbg.errors import AgentdbgError, ExitStatus

app = typer.Typer(
    name="agentdbg",
    help="An interactive terminal debugger for LLM tool-calling loops.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

RUN_EXIT_CODES = """Exit status: 0 completed; 2 bad usage or input file; 3 max_turns;
4 max_tool_calls; 5 repeated_call; 6 timeout; 7 model_error; 8 invalid_request;
130 cancelled."""

ToolsOpt = Annotated[Path | None, typer.Option(
    "--tools", "-t", help="tools.yaml to load (default ./tools.yaml, else the bundled sample).",
    envvar="AGENTDBG_TOOLS", show_default=False)]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks and full tool errors.")]


def fail(exc: BaseException, debug: bool) -> typer.Exit:
    """Print one ``agentdbg: error: ...`` line (a traceback only with --debug)."""
    if debug:
        import traceback

        traceback.print_exception(exc)
    if isinstance(exc, AgentdbgError):
        from agentdbg.render.safe import safe

        one_line = " ".join(safe(exc.message).split("\n"))
        print(f"agentdbg: error: {one_line}", file=sys.stderr)
        return typer.Exit(int(exc.exit_status))
    from agentdbg.render.safe import safe

    text = " ".join(safe(str(exc)).split("\n"))
    print(f"agentdbg: internal error: {type(exc).__name__}: {text} "
          "(run with --debug for the traceback)", file=sys.stderr)
    return typer.Exit(int(ExitStatus.INTERNAL))


def make_console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def make_provider(model: str | None, base_url: str | None, api_key: str | None,
                  script: Path | None, retries: int = 0):
    """The model: a script, the offline planner, or an OpenAI-compatible endpoint."""
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ScriptedModel.from_file(script), f"scripted ({script})"
    if not model or model == "offline":
        from agentdbg.providers.offline import OfflineModel

        return OfflineModel(), "offline (built-in deterministic planner, no network)"
    from agentdbg.providers.openai_compat import OpenAICompatible

    provider = OpenAICompatible(model, base_url, api_key, retries=retries)
    return provider, f"{model} at {provider.base_url}"


@app.command(epilog=RUN_EXIT_CODES)
def run(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    tools: ToolsOpt = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", envvar="AGENTDBG_MODEL",
        help="Model name at the endpoint; 'offline' (the default) needs no key.")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint URL.")] = None,
    api_key: Annotated[str | None, typer.Option(
        "--api-key", envvar="OPENAI_API_KEY", show_envvar=True, show_default=False,
        help="API key (never printed or saved).")] = None,
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
    approve: Annotated[str | None, typer.Option(
        "--approve", help="Decision for tools with approval: always: 'all' or 'none' "
        "(default: none; in --step mode you are asked).")] = None,
    tool_choice: Annotated[str | None, typer.Option(
        "--tool-choice", help="auto | none | required | a tool name.")] = None,
    parallel_tool_calls: Annotated[bool | None, typer.Option(
        "--parallel-tool-calls/--no-parallel-tool-calls",
        help="Send parallel_tool_calls (default: not sent).")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature")] = None,
    retries: Annotated[int, typer.Option(
        "--retries", min=0, help="Retries of a failed model request (429/5xx/connection).")] = 0,
    profile: Annotated[str, typer.Option(
        "--profile", "-p", envvar="AGENTDBG_PROFILE",
        help="Provider profile for the protocol checker (see 'agentdbg check --help').")] = "openai",
    send_anyway: Annotated[bool, typer.Option(
        "--send-anyway", help="Send a request even when the checker finds errors in it.")] = False,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Write the transcript (JSON Lines) here; default: the runs folder.")] = None,
    redact: Annotated[list[str] | None, typer.Option(
        "--redact", help="A regex whose matches are replaced in the transcript (repeatable).")] = None,
    keep_runs: Annotated[int, typer.Option(
        "--keep-runs", envvar="AGENTDBG_KEEP_RUNS", min=1,
        help="How many transcripts the runs folder keeps.")] = 50,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print exactly one JSON document instead of the view.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Do not fold long contents.")] = False,
    step: Annotated[bool, typer.Option(
        "--step", help="Open the step debugger: pause before every phase.")] = False,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Step mode: narrate each phase in protocol terms.")] = False,
    lang: Annotated[str, typer.Option("--lang", help="Narration language: en or zh.")] = "en",
    debug: DebugOpt = False,
) -> None:
    """Run the tool loop on QUESTION and show every turn's full messages array."""
    try:
        from agentdbg.checker import check_model_request
        from agentdbg.checker.findings import get_profile
        from agentdbg.engine.session import RunConfig, Session
        from agentdbg.toolspec import load_tools

        get_profile(profile)

        if approve not in (None, "all", "none"):
            raise AgentdbgError(f"--approve must be 'all' or 'none', not {approve!r}")
        if lang not in ("en", "zh"):
            raise AgentdbgError(f"--lang must be 'en' or 'zh', not {lang!r}")
        if step and json_out:
            raise AgentdbgError("--step and --json cannot be combined")
        toolset = load_tools(tools)
        provider, desc = make_provider(model, base_url, api_key, script, retries)
        config = RunConfig(
            model=model or "offline", max_turns=max_turns, max_tool_calls=max_tool_calls,
            repeat_limit=repeat_limit, timeout=timeout,
            approve=approve or ("ask" if step else "none"), stop_on_invalid=not step,
            tool_choice=_tool_choice(tool_choice), parallel_tool_calls=parallel_tool_calls,
            temperature=temperature, send_anyway=send_anyway)
        session = Session.for_question(
            provider, toolset, question, config, system=system,
            precheck=lambda request: check_model_request(request, profile))
        from agentdbg.drivers.launch import DriveOptions, drive

        options = DriveOptions(
            model_desc=desc, model=model or "offline", provider_name=provider.name,
            base_url=getattr(provider, "base_url", None), question=question, step=step,
            json_out=json_out, full=full, debug=debug, save=save, keep_runs=keep_runs,
            redact=list(redact or []), secrets=[api_key] if api_key else [], profile=profile,
            explain=explain, lang=lang, offline=desc.startswith("offline"))
        status = drive(session, make_console(), options)
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None
    raise typer.Exit(int(status))


def _tool_choice(value: str | None):
    if value is None or value in ("auto", "none", "required"):
        return value
    return {"type": "function", "function": {"name": value}}


PROFILE_HELP = ("Provider profile: openai (default), deepseek-thinking, deepseek-reasoner-legacy, "
                "kimi-thinking, ollama, llamacpp, anthropic-proxy, mistral, positional; "
                "qwen, glm, vllm, deepseek add no rules.")


@app.command(epilog="Exit status: 0 no error-level finding; 1 errors found; 2 unreadable input.")
def check(
    file: Annotated[str, typer.Argument(
        help="Messages array, request body, saved run, or JSONL of these; '-' for stdin.")],
    tools: ToolsOpt = None,
    profile: Annotated[str, typer.Option("--profile", "-p", envvar="AGENTDBG_PROFILE",
                                         help=PROFILE_HELP)] = "openai",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Do not fold long contents.")] = False,
    debug: DebugOpt = False,
) -> None:
    """Check messages against the protocol rules real Chat Completions APIs enforce."""
    try:
        from agentdbg.drivers.check import run_check

        status = run_check(file, tools, profile, json_out=json_out, full=full,
                           console_factory=make_console)
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None
    raise typer.Exit(int(status))


@app.command(name="tools", epilog="Exit status: 0 clean or warnings only; 1 lint errors; "
             "2 unreadable file.")
def tools_cmd(
    path: Annotated[Path | None, typer.Argument(
        help="tools.yaml (default ./tools.yaml, else the bundled sample).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    debug: DebugOpt = False,
) -> None:
    """List the tools of a tools.yaml and lint their definitions."""
    try:
        from agentdbg.drivers.tools import run_tools

        status = run_tools(path, json_out=json_out, console=make_console())
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None
    raise typer.Exit(int(status))


@app.command(epilog="Exit status: that of the recorded stop reason (as for run); 1 with "
             "--strict when a live tool result differs; 2 unreadable input.")
def replay(
    file: Annotated[str, typer.Argument(
        help="A transcript (.jsonl); with --step also a plain messages array as a start.")],
    step: Annotated[bool, typer.Option("--step", help="Step through it in the debugger.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the run document.")] = False,
    live_tools: Annotated[bool, typer.Option(
        "--live-tools", help="Re-run every recorded call with the current tools and compare.")] = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="With --live-tools: exit 1 when any result differs.")] = False,
    from_index: Annotated[int | None, typer.Option(
        "--from", min=0, help="Keep messages 0..N of the recording and continue live (a fork).")] = None,
    tools: ToolsOpt = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", envvar="AGENTDBG_MODEL", help="Live model for --from / 'live'.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", envvar="OPENAI_BASE_URL")] = None,
    api_key: Annotated[str | None, typer.Option(
        "--api-key", envvar="OPENAI_API_KEY", show_default=False)] = None,
    approve: Annotated[str | None, typer.Option(
        "--approve", help="'all' lets side-effecting tools run (live tools, forks).")] = None,
    profile: Annotated[str, typer.Option("--profile", "-p", envvar="AGENTDBG_PROFILE")] = "openai",
    save: Annotated[Path | None, typer.Option("--save", help="Transcript of this replay.")] = None,
    full: Annotated[bool, typer.Option("--full")] = False,
    explain: Annotated[bool, typer.Option("--explain")] = False,
    lang: Annotated[str, typer.Option("--lang")] = "en",
    debug: DebugOpt = False,
) -> None:
    """Replay a recorded run with no network, step through it, compare tools, or fork it."""
    try:
        from agentdbg.drivers.replay import ReplayArgs, run_replay

        status = run_replay(ReplayArgs(
            file=file, step=step, json_out=json_out, live_tools=live_tools, strict=strict,
            from_index=from_index, tools=tools, model=model, base_url=base_url, api_key=api_key,
            approve=approve, profile=profile, save=save, full=full, explain=explain, lang=lang,
            debug=debug), make_console(), make_provider)
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None
    raise typer.Exit(int(status))


@app.command()
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many to list.")] = 20,
    debug: DebugOpt = False,
) -> None:
    """List the saved runs (transcripts in the runs folder), newest first."""
    try:
        from agentdbg.drivers.replay import list_runs

        list_runs(make_console(), limit)
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None


@app.command()
def proxy(
    upstream: Annotated[str, typer.Option(
        "--upstream", help="The real endpoint, e.g. https://api.openai.com/v1 or an agentdbg serve URL.")],
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port).")] = 8765,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Folder for one transcript per conversation (default: the runs folder).")] = None,
    block_invalid: Annotated[bool, typer.Option(
        "--block-invalid", help="Answer a request with protocol errors with an OpenAI-shaped 400.")] = False,
    intercept: Annotated[bool, typer.Option(
        "--intercept", help="Pause each request in a prompt before it is forwarded.")] = False,
    profile: Annotated[str, typer.Option("--profile", "-p", envvar="AGENTDBG_PROFILE")] = "openai",
    full: Annotated[bool, typer.Option("--full")] = False,
    debug: DebugOpt = False,
) -> None:
    """Sit between your app and its endpoint: check and show every request of your own loop."""
    try:
        from agentdbg.server.proxy.command import run_proxy

        run_proxy(upstream=upstream, host=host, port=port, save=save, block_invalid=block_invalid,
                  intercept=intercept, profile=profile, full=full, console=make_console())
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None


@app.command()
def serve(
    offline: Annotated[bool, typer.Option("--offline", help="Answer with the offline model "
                                          "(the default).")] = False,
    replay_file: Annotated[Path | None, typer.Option(
        "--replay", help="Answer with a recorded run's responses, in order (409 on mismatch).")] = None,
    script: Annotated[Path | None, typer.Option(
        "--script", help="Answer with a YAML script of assistant turns.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port).")] = 8766,
    debug: DebugOpt = False,
) -> None:
    """Serve an OpenAI-compatible endpoint (plain and streaming) answered by the offline
    model, a script or a recording, to test your own loop with no API key."""
    try:
        from agentdbg.server.command import run_serve

        run_serve(offline=offline, replay_file=replay_file, script=script, host=host, port=port)
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # noqa: BLE001 - one line for the user; traceback with --debug
        raise fail(exc, debug) from None


@app.command()
def version() -> None:
    """Print the agentdbg version."""
    from agentdbg import __version__

    print(f"agentdbg {__version__}")


def _on_sigterm(signum, frame):
    from agentdbg.errors import Terminated

    raise Terminated()


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    app()


if __name__ == "__main__":
    main()
