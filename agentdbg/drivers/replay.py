"""``agentdbg replay`` and ``agentdbg runs``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from agentdbg.errors import AgentdbgError, ExitStatus, InputError


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


def run_replay(args: ReplayArgs, console, make_provider) -> ExitStatus:
    from agentdbg.checker.findings import get_profile
    from agentdbg.transcript import is_transcript

    get_profile(args.profile)
    if args.approve not in (None, "all", "none"):
        raise AgentdbgError(f"--approve must be 'all' or 'none', not {args.approve!r}")
    if args.step and args.json_out:
        raise AgentdbgError("--step and --json cannot be combined")
    if args.file != "-" and not Path(args.file).exists():
        raise InputError(f"{args.file}: no such file")
    if not is_transcript(args.file):
        if not args.step:
            raise InputError(f"{args.file}: not an agentdbg transcript; a plain messages array "
                             "can be opened with 'replay FILE --step' as a starting state")
        return _start_from_messages(args, console, make_provider)
    if args.from_index is not None:
        return _fork(args, console, make_provider)
    return _play(args, console, make_provider)


def _precheck(profile: str):
    from agentdbg.checker import check_model_request

    return lambda request: check_model_request(request, profile)


def _options(args: ReplayArgs, **kw):
    from agentdbg.drivers.launch import DriveOptions

    return DriveOptions(step=args.step, json_out=args.json_out, full=args.full, debug=args.debug,
                        save=args.save, secrets=[args.api_key] if args.api_key else [],
                        profile=args.profile, explain=args.explain, lang=args.lang, **kw)


def _live_session(args, make_provider, messages, header=None):
    from agentdbg.engine.replaying import config_from_header
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.toolspec import load_tools

    toolset = load_tools(args.tools)
    provider, desc = make_provider(args.model, args.base_url, args.api_key, None)
    approve = args.approve or ("ask" if args.step else "none")
    config = (config_from_header(header, model=args.model or "offline", approve=approve,
                                 stop_on_invalid=not args.step) if header else
              RunConfig(model=args.model or "offline", approve=approve,
                        stop_on_invalid=not args.step))
    session = Session(provider, toolset, config, messages, precheck=_precheck(args.profile))
    return session, provider, desc


def _start_from_messages(args, console, make_provider) -> ExitStatus:
    from agentdbg.engine.replaying import initial_state
    from agentdbg.drivers.launch import drive

    messages = initial_state(args.file)
    session, provider, desc = _live_session(args, make_provider, messages)
    session._resume()  # the last message decides the pending phase
    question = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    return drive(session, console, _options(
        args, model_desc=f"{desc}; started from {args.file}", model=args.model or "offline",
        provider_name=provider.name, base_url=getattr(provider, "base_url", None),
        question=str(question)))


def _fork(args, console, make_provider) -> ExitStatus:
    from agentdbg.engine.replaying import parent_info
    from agentdbg.drivers.launch import drive
    from agentdbg.transcript import load_transcript

    recording = load_transcript(args.file)
    final = recording.final_messages()
    if args.from_index >= len(final):
        raise AgentdbgError(f"--from {args.from_index}: the recording has messages "
                            f"0..{len(final) - 1}")
    messages = [dict(m) for m in final[:args.from_index + 1]]
    session, provider, desc = _live_session(args, make_provider, messages, recording.header)
    session._resume()
    return drive(session, console, _options(
        args, model_desc=f"{desc}; fork of {args.file} at message {args.from_index}",
        model=args.model or "offline", provider_name=provider.name,
        base_url=getattr(provider, "base_url", None), question=recording.header.get("question"),
        parent=parent_info(Path(args.file), args.from_index)))


def _play(args, console, make_provider) -> ExitStatus:
    from agentdbg.engine.replaying import LiveTools, replay_session, with_live_tools
    from agentdbg.drivers.launch import drive

    # batch: blocked requests come from the recording's own events; step mode keeps the
    # pre-send check for when the user continues live
    session, model = replay_session(args.file,
                                    precheck=_precheck(args.profile) if args.step else None)
    live = None
    if args.live_tools:
        from agentdbg.toolspec import load_tools

        live = LiveTools(load_tools(args.tools), approve_side_effects=args.approve == "all")
        with_live_tools(session, model, live)
    header = model.header
    options = _options(args, model_desc=f"replay of {args.file} (recorded with "
                                        f"{header.get('model')}); no network",
                       model="replay", provider_name="replay", question=header.get("question"))
    extra = {"live_provider": _maybe_live(args, make_provider),
             "live_tools": _live_tools(args, header)} if args.step else {}
    status = drive(session, console, options, replay=model, **extra)
    err = sys.stderr
    for warning in model.warnings:
        print(f"agentdbg: warning: {warning}", file=err)
    if model.diverged:
        print(f"agentdbg: error: replay diverged: {model.diverged}", file=err)
        status = ExitStatus.FINDINGS
    if live is not None:
        from agentdbg.render.replay import render_live_tools

        out = console if not args.json_out else _stderr_console()
        out.print(render_live_tools(live.results))
        if args.strict and any(r.differs for r in live.results):
            status = ExitStatus.FINDINGS
    return status


def _live_tools(args, header: dict):
    """Tools for 'live': --tools, else the file the recording was made with, else ./tools.yaml."""
    from agentdbg.toolspec import load_tools

    if args.tools is not None:
        return load_tools(args.tools)
    recorded = header.get("tools_file")
    if recorded and Path(recorded).is_file():
        return load_tools(recorded)
    return load_tools(Path("tools.yaml")) if Path("tools.yaml").is_file() else None


def _maybe_live(args, make_provider):
    if not args.model:
        return None
    return make_provider(args.model, args.base_url, args.api_key, None)[0]


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def list_runs(console, limit: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from agentdbg.render.safe import safe
    from agentdbg.transcript import iter_transcript, runs_dir

    folder = runs_dir()
    files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    if not files:
        console.print(f"no saved runs in {folder}", markup=False, highlight=False)
        return
    table = Table(title=Text(f"{safe(folder)} (newest first)"), title_justify="left")
    for col in ("created", "stop", "turns", "question", "file"):
        table.add_column(col, overflow="fold")
    for path in files[:limit]:
        try:
            header, stop, turns = None, "(running or cut)", 0
            for _, event in iter_transcript(path):
                if header is None:
                    header = event
                elif event["type"] == "request":
                    turns += 1
                elif event["type"] == "stop":
                    stop = event.get("reason")
            table.add_row(Text(safe(header.get("created", ""))), Text(safe(stop)), str(turns),
                          Text(safe(str(header.get("question") or ""))[:60]), Text(safe(path.name)))
        except InputError as exc:
            table.add_row("?", "unreadable", "", Text(safe(exc.message)[:60]), Text(safe(path.name)))
    console.print(table)
