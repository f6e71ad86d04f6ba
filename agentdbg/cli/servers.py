"""``proxy`` and ``serve``: agentdbg on the wire, in front of an app or in place of a model."""


from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from agentdbg.cli.app import command, make_console
from agentdbg.cli.options import DebugOpt, FullOpt, Lang, OwnLangOpt, Profile, ProfileOpt
from agentdbg.i18n import _

AllowOriginOpt = Annotated[list[str] | None, typer.Option(
    "--allow-origin", help="A web page origin (e.g. http://localhost:3000) allowed to call this "
    "server; requests from any other page (an Origin header) are refused (repeatable).",
    show_default=False)]
AllowHostOpt = Annotated[list[str] | None, typer.Option(
    "--allow-host", help="A host name (NAME or NAME:PORT) this server answers to besides "
    "localhost and IP addresses, e.g. host.docker.internal (repeatable).", show_default=False)]


class Client(str, Enum):
    app = "app"
    claude = "claude"
    codex = "codex"
    gemini = "gemini"


@command(quiet_interrupt=True, context_settings={"allow_interspersed_args": False})
def proxy(
    cmd: Annotated[list[str] | None, typer.Argument(
        metavar="[-- CMD [ARGS]...]", show_default=False,
        help="Run CMD with its model clients pointed at the proxy (on a free port), stop when it "
             "ends, exit with its status. Its output and terminal stay its own; agentdbg's lines "
             "go to a log file and a summary follows on stderr.")] = None,
    upstream: Annotated[str | None, typer.Option(
        "--upstream", help="The real endpoint, e.g. https://api.openai.com/v1 or an agentdbg serve "
        "URL. With CMD: default, where CMD's own settings send each API (OPENAI_BASE_URL, "
        "ANTHROPIC_BASE_URL, Codex's config.toml, Claude Code's settings.json), else its public "
        "endpoint.", show_default=False)] = None,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Put agentdbg serve (the offline model) behind the proxy: no key, no "
        "network.")] = False,
    script: Annotated[Path | None, typer.Option(
        "--script", help="Put agentdbg serve behind the proxy, answering with this YAML script of "
        "assistant turns.", show_default=False)] = None,
    client: Annotated[Client | None, typer.Option(
        "--client", help="With CMD: the kind of client it is (default: from its name; any other "
        "command is an app built on the SDKs).", show_default=False)] = None,
    live: Annotated[bool, typer.Option(
        "--live", help="Serve the run's report on loopback, updated as requests arrive; its URL "
        "(with a random token) is printed once.")] = False,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int | None, typer.Option(
        "--port", help="Port (0: any free port). Default 8765; with CMD, a free port.",
        show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Folder for one transcript per conversation (default: the runs folder).")] = None,
    block_invalid: Annotated[bool, typer.Option(
        "--block-invalid", help="Answer a request with protocol errors with a 400 in its own format "
             "(Chat Completions, Responses or Anthropic).")] = False,
    intercept: Annotated[bool, typer.Option(
        "--intercept", help="Pause each request in a prompt before it is forwarded.")] = False,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    otlp: Annotated[str | None, typer.Option(
        "--otlp", help="Also export each conversation to this OTLP/HTTP receiver as it goes "
                       "(OpenTelemetry GenAI spans, no message contents).", show_default=False)] = None,
    secret_header: Annotated[list[str] | None, typer.Option(
        "--secret-header", help="A header whose value is a key, like Authorization, api-key, "
        "x-api-key, x-goog-api-key and Ocp-Apim-Subscription-Key: forwarded, never printed or "
        "recorded (repeatable).", show_default=False)] = None,
    allow_origin: AllowOriginOpt = None,
    allow_host: AllowHostOpt = None,
    drain: Annotated[float, typer.Option(
        "--drain-timeout", help="At stop, seconds to let the analysis finish what was relayed "
        "before recording the rest unanalysed.")] = 60.0,
    full: FullOpt = False,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Sit between your app and its endpoint: check and show every request of your own loop.

    agentdbg proxy --offline -- python examples/agent_app.py "..."   runs an app through it."""
    from agentdbg.errors import AgentdbgError
    from agentdbg.i18n import N_, Msg

    behind = [name for name, on in (("--upstream", upstream), ("--offline", offline),
                                    ("--script", script)) if on]
    if len(behind) > 1:
        raise AgentdbgError(Msg(N_("choose one of {options} (got {given})"),
                                {"options": "--upstream, --offline, --script", "given": ", ".join(behind)}))
    if not cmd and not behind:
        raise AgentdbgError(Msg(N_("say what is behind the proxy: --upstream URL, --offline or "
                                   "--script FILE (or run a command: agentdbg proxy [OPTIONS] -- "
                                   "CMD [ARGS]...)")))
    if cmd and intercept:
        raise AgentdbgError(Msg(N_("--intercept needs the terminal, which CMD has: use it without "
                                   "CMD")))
    if client is not None and not cmd:
        raise AgentdbgError(Msg(N_("--client names the kind of CMD: give a command after --")))
    export = None
    if otlp is not None:   # checked before binding; the spans go as each conversation goes
        from agentdbg.report.commands import ConversationExport, check_otlp

        check_otlp(otlp)
        export = ConversationExport(otlp)
    if cmd:
        from agentdbg.server.launch.command import LaunchOptions, run_command

        return run_command(LaunchOptions(
            list(cmd), upstream=upstream, offline=offline, script=script,
            client=client.value if client else None, live=live, save=save, profile=profile.value,
            block_invalid=block_invalid, full=full, export=export, host=host, port=port or 0,
            secret_headers=tuple(secret_header or ()), allow_origins=tuple(allow_origin or ()),
            allow_hosts=tuple(allow_host or ()), drain=drain))
    from agentdbg.server.proxy.command import run_proxy

    run_proxy(upstream=upstream, offline=offline, script=script, host=host,
              port=8765 if port is None else port, save=save, block_invalid=block_invalid,
              intercept=intercept, profile=profile.value, full=full, console=make_console(),
              export=export, secret_headers=tuple(secret_header or ()),
              allow_origins=tuple(allow_origin or ()), allow_hosts=tuple(allow_host or ()),
              drain=drain, live=live)
    return 0


@command(quiet_interrupt=True)
def serve(
    offline: Annotated[bool, typer.Option("--offline", help="Answer with the offline model "
                                          "(the default).")] = False,
    replay_file: Annotated[Path | None, typer.Option(
        "--replay", help="Answer with a recorded run's responses, in order; a request that "
        "differs from the recording gets a 400 naming the first difference.")] = None,
    script: Annotated[Path | None, typer.Option(
        "--script", help="Answer with a YAML script of assistant turns.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port).")] = 8766,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    lenient: Annotated[bool, typer.Option(
        "--lenient", help="Answer requests that break protocol rules instead of rejecting them "
        "with the real API's status and error body.")] = False,
    allow_origin: AllowOriginOpt = None,
    allow_host: AllowHostOpt = None,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Serve a strict local model API (Chat Completions, Responses, Anthropic Messages; plain
    and streaming) answered by the offline model, a script or a recording, to test your own
    loop with no API key."""
    from agentdbg.server.serve import run_serve

    run_serve(offline=offline, replay_file=replay_file, script=script, host=host, port=port,
              profile=profile.value, lenient=lenient, allow_origins=tuple(allow_origin or ()),
              allow_hosts=tuple(allow_host or ()))
    return 0


@command(quiet_interrupt=True)
def ui(
    folder: Annotated[Path | None, typer.Option(
        "--folder", help="The folder of transcripts to browse (default: the runs folder).",
        show_default=False)] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port).")] = 0,
    profile: ProfileOpt = Profile.openai,  # type: ignore[attr-defined]
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Browse saved runs in the browser: open one (it updates while it is being written), or
    diff two. Served on loopback at a URL with a random token, printed once; Ctrl-C stops."""
    from agentdbg.server.live.serving import LiveOptions, serve_here
    from agentdbg.transcript.runs import runs_dir

    where = folder or runs_dir()

    def ready(url: str) -> None:
        print("agentdbg ui: " + _("{url}  (the runs in {where}; Ctrl-C stops)").format(
            url=url, where=where), flush=True)
    serve_here(LiveOptions(where, None, profile.value), host, port, ready)
    return 0


@command()
def version(lang: OwnLangOpt = Lang.en) -> int:  # type: ignore[attr-defined]
    """Print the agentdbg version (also: agentdbg --version)."""
    from agentdbg import __version__

    print(f"agentdbg {__version__}")
    return 0
