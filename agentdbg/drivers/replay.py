"""``agentdbg replay``: play a recording, step through it, compare its tools live, or fork it.

A transcript is untrusted input: nothing it names is loaded or run. Tools come only
from ``--tools``, and are loaded only when the user goes live (``--live-tools``, a
fork, or ``live`` in step mode).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from agentdbg.drivers.launch import drive
from agentdbg.errors import AgentdbgError, ExitStatus, InputError
from agentdbg.options import GoLive, RunOptions
from agentdbg.textsafe import one_line


@dataclass
class ReplayArgs:
    file: str
    step: bool = False
    json_out: bool = False
    live_tools: bool = False
    strict: bool = False
    from_index: int | None = None
    tools: Path | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    approve: str | None = None
    profile: str = "openai"
    save: Path | None = None
    full: bool = False
    explain: bool = False
    lang: str = "en"
    debug: bool = False


def run_replay(args: ReplayArgs, console) -> ExitStatus:
    from agentdbg.checker.profiles import get_profile
    from agentdbg.transcript import is_transcript

    get_profile(args.profile)
    if args.file != "-" and not Path(args.file).exists():
        raise InputError(f"{args.file}: no such file")
    if not is_transcript(args.file):
        if not args.step:
            raise InputError(f"{args.file}: not an agentdbg transcript; a plain messages array "
                             "can be opened with 'replay FILE --step' as a starting state")
        return _start_from_messages(args, console)
    if args.from_index is not None:
        return _fork(args, console)
    return _play(args, console)


def _precheck(profile: str):
    from agentdbg.checker import check_model_request

    return lambda request: check_model_request(request, profile)


def _options(args: ReplayArgs, info, **kw) -> RunOptions:
    return RunOptions(model_desc=kw.pop("model_desc"), model=info.model,
                      provider_name=info.name, base_url=info.base_url, offline=info.offline,
                      step=args.step, json_out=args.json_out, full=args.full, debug=args.debug,
                      save=args.save, secrets=[args.api_key] if args.api_key else [],
                      profile=args.profile, explain=args.explain, lang=args.lang, **kw)


def _tools(args: ReplayArgs, why: str):
    """The tools the user named with ``--tools``: never a file the transcript or its folder names."""
    from agentdbg.toolspec import load_tools

    if args.tools is None:
        raise AgentdbgError(f"{why} runs tools: name them with --tools PATH (a transcript's own "
                            "tools file is never loaded)")
    return load_tools(args.tools)


def _live_session(args: ReplayArgs, messages: list, header: dict | None = None):
    from agentdbg.engine.replaying import config_from_header
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.factory import make_provider

    toolset = _tools(args, "--from" if header else "a starting state")
    info = make_provider(args.model, args.base_url, args.api_key)
    approve = args.approve or ("ask" if args.step else "none")
    config = (config_from_header(header, model=info.model, approve=approve,
                                 stop_on_invalid=not args.step) if header else
              RunConfig(model=info.model, approve=approve, stop_on_invalid=not args.step))
    session = Session(info.provider, toolset, config, messages, precheck=_precheck(args.profile))
    session.resume()  # the last message decides the pending phase
    return session, info


def initial_state(path: str) -> list[dict]:
    """A plain messages array (or request body) as a starting state for replay --step."""
    from agentdbg.checker.inputs import load_check_input

    items = load_check_input(path)
    if len(items) != 1:
        raise InputError(f"{path}: {len(items)} documents; a starting state is one messages array")
    return [dict(m) for m in items[0].request.messages]


def _start_from_messages(args: ReplayArgs, console) -> ExitStatus:
    messages = initial_state(args.file)
    session, info = _live_session(args, messages)
    question = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    return drive(session, console, _options(
        args, info, model_desc=f"{info.description}; started from {args.file}",
        question=str(question)))


def _fork(args: ReplayArgs, console) -> ExitStatus:
    from agentdbg.transcript import load_transcript

    recording = load_transcript(args.file, validate=True)
    final = recording.final_messages()
    if args.from_index is None or args.from_index >= len(final):
        raise AgentdbgError(f"--from {args.from_index}: the recording has messages "
                            f"0..{len(final) - 1}")
    messages = [dict(m) for m in final[:args.from_index + 1]]
    session, info = _live_session(args, messages, recording.header)
    return drive(session, console, _options(
        args, info, model_desc=f"{info.description}; fork of {args.file} at message "
                               f"{args.from_index}",
        question=recording.header.get("question"),
        parent={"path": str(Path(args.file)), "from_index": args.from_index}))


def _play(args: ReplayArgs, console) -> ExitStatus:
    from agentdbg.engine.replaying import LiveTools, Replay, replay_session, with_live_tools
    from agentdbg.providers.base import ProviderInfo

    # batch: blocked requests come from the recording's own events; step mode keeps the
    # pre-send check for when the user continues live
    session, model = replay_session(args.file,
                                    precheck=_precheck(args.profile) if args.step else None)
    live = None
    if args.live_tools:
        live = LiveTools(_tools(args, "--live-tools"), approve_side_effects=args.approve == "all")
        with_live_tools(session, model, live)
    header = model.header
    info = ProviderInfo(model, f"replay of {args.file} (recorded with {header.get('model')}); "
                               "no network", model="replay")
    options = _options(args, info, model_desc=info.description, question=header.get("question"),
                       title="agentdbg replay")
    go_live = _go_live(args) if args.step else None
    status = drive(session, console, options, replay=Replay(session, model), go_live=go_live)
    err = sys.stderr
    for warning in model.warnings:
        print(f"agentdbg: warning: {one_line(warning)}", file=err)
    if model.diverged:
        print(f"agentdbg: error: replay diverged: {one_line(model.diverged)}", file=err)
        status = ExitStatus.FINDINGS
    if live is not None:
        from agentdbg.render.replay import render_live_tools

        out = console if not args.json_out else _stderr_console()
        out.print(render_live_tools(live.results))
        if args.strict and any(r.differs for r in live.results):
            status = ExitStatus.FINDINGS
    return status


def _go_live(args: ReplayArgs) -> GoLive:
    """For 'live': the model of --model (else the offline one) and the tools of --tools only."""
    from agentdbg.providers.factory import make_provider

    def provider():
        return make_provider(args.model, args.base_url, args.api_key).provider

    if args.tools is None:
        return GoLive(provider)
    from agentdbg.toolspec import load_tools

    return GoLive(provider, tools=lambda: load_tools(args.tools), tools_path=args.tools)


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)
