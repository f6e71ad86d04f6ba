"""``agentdbg replay``: play a recording, step through it, compare its tools live, or fork it.

A transcript is untrusted input: nothing it names is loaded or run. Tools come only
from ``--tools`` and ``--mcp``, and are loaded only when the user goes live
(``--live-tools``, a fork, or ``live`` in step mode): an MCP server the recording used
is never started from the recording; replay names it and how to pass it.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdbg.drivers.launch import close_servers, drive, open_servers
from agentdbg.errors import AgentdbgError, ExitStatus, InputError
from agentdbg.i18n import N_, Msg, tr
from agentdbg.options import GoLive, RunOptions
from agentdbg.textsafe import one_line
from agentdbg.transcript.events import Header

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.engine.replaying import LiveTools
    from agentdbg.engine.session import Session
    from agentdbg.providers.base import ModelRequest, Provider, ProviderInfo
    from agentdbg.providers.replay import ReplayModel
    from agentdbg.toolspec import ToolSet


@dataclass
class ReplayArgs:
    file: str
    step: bool = False
    json_out: bool = False
    live_tools: bool = False
    strict: bool = False
    from_index: int | None = None
    tools: Path | None = None
    mcp: list[str] = field(default_factory=list)
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
    present: bool = False
    commands: list[str] = field(default_factory=list)


def run_replay(args: ReplayArgs, console: Console) -> ExitStatus:
    from agentdbg.checker.profiles import get_profile
    from agentdbg.transcript import is_run
    from agentdbg.transcript.runs import resolve_run

    get_profile(args.profile)
    args = replace(args, file=str(resolve_run(args.file)))  # a path, or a run `runs` lists
    refuse_saving_over(args.file, args.save)
    if not is_run(args.file):   # a transcript, or another tool's record of a run
        if not args.step:
            raise InputError(Msg(N_("{path}: not an agentdbg transcript; a plain messages array "
                                    "can be opened with 'replay FILE --step' as a starting state"),
                                 {"path": args.file}))
        return _start_from_messages(args, console)
    if args.from_index is not None:
        return _fork(args, console)
    run = _run_of(args)
    with fewer_collections(not args.step):
        if len(run) > 1:
            return _play_run(args, run, console)
        return _play(args, console)


@contextmanager
def fewer_collections(batch: bool = True) -> Iterator[None]:
    """A batch replay allocates a few objects per message and frees them by reference
    counting, while every message of the run stays alive: the cyclic collector's passes
    over all of it were 8% of a 1,000-turn replay's instructions. Meanwhile what is alive
    now (modules, classes) is left out of its passes and it runs every 10,000 allocations
    instead of 700; both are undone after (a test's CliRunner runs it inside pytest)."""
    if not batch:
        yield
        return
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 10_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _run_of(args: ReplayArgs) -> list[Path]:
    """The conversations of the multi-agent run ``args.file`` belongs to, parents first (just
    the file in step mode, with --save or --json, or outside a run)."""
    if args.step or args.save is not None or args.json_out:
        return [Path(args.file)]
    from agentdbg.transcript.tree import siblings

    return siblings(Path(args.file))


def _play_run(args: ReplayArgs, paths: list[Path], console: Console) -> ExitStatus:
    """Replay every conversation of a run, each under a line saying which agent it is and
    what started it; the exit status is the first conversation's that did not replay."""
    from agentdbg.transcript import read_transcript
    from agentdbg.transcript.tree import build, how_started, named, walk

    headers = []
    for p in paths:
        header, events = read_transcript(p)
        headers.append((p, named(header, (e for _, e in events))))
    status = ExitStatus.OK
    nodes = list(walk(build(headers)))
    for node in nodes:
        how = f" ← {how_started(node.started_by)}" if node.started_by is not None else ""
        console.print(f"{'  ' * node.depth}── {node.label}{how}", markup=False, highlight=False,
                      soft_wrap=True)
        played = _play(replace(args, file=str(node.path)), console)
        if status == ExitStatus.OK:
            status = played
    console.print(f"replayed a run of {len(nodes)} conversations: "
                  f"{'all replayed' if status == ExitStatus.OK else 'not all replayed'}",
                  markup=False, highlight=False, soft_wrap=True)
    return status


def refuse_saving_over(played: str, save: Path | None) -> None:
    """``--save`` must not name the file being replayed (by any path, a link included): the
    new transcript would be written over the recording it plays."""
    from agentdbg.paths import same_file

    if save is not None and same_file(played, save):
        raise InputError(Msg(N_("--save {save}: that is the file being replayed ({played}); writing "
                                "the replay's transcript there would destroy the recording: choose "
                                "another path"), {"save": save, "played": played}))


def _precheck(profile: str, header: Header | None = None) -> Callable[[ModelRequest], list]:
    """The pre-send check in the recording's wire format (chat when it says none)."""
    from agentdbg.providers.factory import precheck_for

    return precheck_for(header.wire if header is not None else "chat", profile)


def _options(args: ReplayArgs, info: ProviderInfo, **kw: Any) -> RunOptions:
    return RunOptions(model_desc=kw.pop("model_desc"), model=info.model,
                      provider_name=info.name, base_url=info.base_url, offline=info.offline,
                      step=args.step, json_out=args.json_out, full=args.full, debug=args.debug,
                      save=args.save, secrets=[args.api_key] if args.api_key else [],
                      profile=args.profile, explain=args.explain, lang=args.lang,
                      present=args.present, commands=list(args.commands), **kw)


def _tools(args: ReplayArgs, why: str | Msg, header: Header | None = None) -> ToolSet:
    """The tools the user named with ``--tools`` and ``--mcp`` (servers not started yet): never
    a file or a server the transcript or its folder names."""
    from agentdbg.mcp.config import parse_mcp_option
    from agentdbg.toolspec import ToolSet, load_tools

    if args.tools is None and not args.mcp:
        raise AgentdbgError(Msg(N_("{why} runs tools: name them with --tools PATH or --mcp (a "
                                   "transcript's own tools file is never loaded){servers}"),
                                {"why": why, "servers": servers_needed(header)}))
    toolset = load_tools(args.tools) if args.tools is not None else ToolSet(path=Path("--mcp"), tools=[])
    for text in args.mcp:
        toolset.servers.append(parse_mcp_option(text, taken=[s.name for s in toolset.servers]))
    return toolset


def recorded_servers(header: Header | None) -> list[dict]:
    servers = header.mcp_servers if header is not None else None
    return [s for s in servers if isinstance(s, dict)] if servers is not None else []


def started_as(record: dict) -> str:
    """How a recorded server was started, as ``--mcp`` takes it (no secrets were recorded)."""
    import shlex

    if record.get("transport") == "http":
        return str(record.get("url"))
    return shlex.join(str(a) for a in [record.get("command"), *(record.get("args") or [])])


def quoted(value: object) -> str:
    """``value`` quoted for a line on the terminal: as ``!r`` quotes it, but escaped by the
    one rule (``one_line``), which also makes visible the blank fillers and variation
    selectors ``repr`` leaves as they are."""
    text = one_line(value)
    mark = '"' if "'" in text and '"' not in text else "'"
    return f"{mark}{text}{mark}"


def servers_needed(header: Header | None) -> str | Msg:
    """``; the recording used MCP server 'time' (--mcp 'python -m mcp_server_time')``."""
    servers = recorded_servers(header)
    if not servers:
        return ""
    named = ", ".join(f"{quoted(s.get('name'))} (--mcp {quoted(started_as(s))})" for s in servers)
    return Msg(N_("; the recording used MCP server(s) {named}"), {"named": named})


def _server_warnings(header: Header, toolset: ToolSet) -> list[str | Msg]:
    """What a live replay should know about the servers: missing ones, changed tool lists."""
    from agentdbg.mcp.servers import tool_list_changes

    now = {r["name"]: r for r in (toolset.mcp.records() if toolset.mcp is not None else [])}
    out: list[str | Msg] = []
    for rec in recorded_servers(header):
        name = rec.get("name")
        live = now.get(name) if isinstance(name, str) else None
        if live is None:
            out.append(Msg(N_("the recording used MCP server {name} (--mcp {command}), which is "
                              "not started now: its calls run live only where a tool of the same "
                              "name is there"),
                           {"name": quoted(rec.get("name")), "command": quoted(started_as(rec))}))
        else:
            change = tool_list_changes(rec, live)
            if change:
                out.append(change)
    return out


def _live_session(args: ReplayArgs, messages: list,
                  header: Header | None = None) -> tuple[Session, ProviderInfo]:
    from agentdbg.engine.replaying import config_from_header
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.factory import make_provider, precheck_for

    toolset = _tools(args, "--from" if header else Msg(N_("a starting state")), header)
    api = header.wire if header is not None else "chat"  # a fork talks the recording's format
    info = make_provider(args.model, args.base_url, args.api_key, api=api, profile=args.profile)
    approve = args.approve or ("ask" if args.step else "none")
    config = (config_from_header(header, model=info.model, approve=approve,
                                 stop_on_invalid=not args.step) if header else
              RunConfig(model=info.model, approve=approve, stop_on_invalid=not args.step))
    session = Session(info.provider, toolset, config, messages,
                      precheck=precheck_for(api, args.profile))
    session.resume()  # the last message decides the pending phase
    return session, info


def initial_state(path: str) -> list[dict]:
    """A plain messages array (or request body) as a starting state for replay --step."""
    from agentdbg.checker.inputs import load_check_input

    items = load_check_input(path)
    if len(items) != 1:
        raise InputError(Msg(N_("{path}: {n} documents; a starting state is one messages array"),
                             {"path": path, "n": len(items)}))
    return [dict(m) for m in items[0].request.messages]


def _start_from_messages(args: ReplayArgs, console: Console) -> ExitStatus:
    messages = initial_state(args.file)
    session, info = _live_session(args, messages)
    question = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    return drive(session, console, _options(
        args, info, model_desc=Msg(N_("{model}; started from {path}"),
                                   {"model": info.description, "path": args.file}),
        question=str(question)))


def _fork(args: ReplayArgs, console: Console) -> ExitStatus:
    from agentdbg.transcript import load_transcript

    recording = load_transcript(args.file)
    final = recording.final_messages()
    if args.from_index is None or args.from_index >= len(final):
        raise AgentdbgError(Msg(N_("--from {index}: the recording has messages 0..{last}"),
                                {"index": args.from_index, "last": len(final) - 1}))
    messages = [dict(m) for m in final[:args.from_index + 1]]
    session, info = _live_session(args, messages, recording.header)
    return drive(session, console, _options(
        args, info, model_desc=Msg(N_("{model}; fork of {path} at message {index}"),
                                   {"model": info.description, "path": args.file,
                                    "index": args.from_index}),
        question=_question(recording.final_messages()[:args.from_index + 1], recording.header),
        parent={"path": str(Path(args.file)), "from_index": args.from_index}))


def _play(args: ReplayArgs, console: Console) -> ExitStatus:
    from agentdbg.engine.replaying import LiveTools, check_replayable, replay_problems, replay_session

    if args.step:  # a recording that cannot be replayed is one line now, not an error halfway
        check_replayable(args.file, strict=args.strict)
    # batch: blocked requests come from the recording's own events; step mode keeps the
    # pre-send check for when the user continues live
    session, model = replay_session(args.file, strict=args.strict, judged=not args.step)
    header = model.header
    if args.step:
        session.precheck = _precheck(args.profile, header)
    live = None
    if args.live_tools:
        live = LiveTools(_tools(args, "--live-tools", header),
                         approve_side_effects=args.approve == "all")
    try:
        status = _play_with(args, console, session, model, live)
    finally:
        close_servers(live.toolset if live is not None else None)
    err = sys.stderr
    for warning in model.warnings:
        print(f"agentdbg: warning: {one_line(warning)}", file=err)
    if not args.step:  # the same verdict as assert_replays and the pytest plugin
        problems = replay_problems(args.file, session, model, profile=args.profile,
                                   live=live if args.strict else None, strict=args.strict)
        for problem in problems:
            if not problem.startswith("live tool"):
                print(f"agentdbg: error: {one_line(_problem(problem))}", file=err)
        if problems:
            status = ExitStatus.FINDINGS
    elif model.diverged:
        print(f"agentdbg: error: {one_line(_problem('diverged: ' + model.diverged))}", file=err)
        status = ExitStatus.FINDINGS
    if live is not None:
        from agentdbg.render.replay import render_live_tools

        out = console if not args.json_out else _stderr_console()
        out.print(render_live_tools(live.results))
        if args.strict and any(r.differs for r in live.results):
            status = ExitStatus.FINDINGS
    return status


#: what makes a replay fail (``replay_problems``: English, as ``assert_replays`` returns it)
_PROBLEMS = (N_("diverged: {what}"), N_("stop reason: recorded {recorded}, replayed {now}"),
             N_("final messages: {difference}"), N_("request {turn}: {rule} at {where}: {message}"))


def _problem(problem: str) -> str:
    """One replay problem as the CLI prints it, in the chosen language: each shape its own
    template; a finding's text, a first difference and a divergence read back from theirs
    (recorded values, JSON and the API's words, verbatim)."""
    from agentdbg.i18n import _, recorded

    for template in _PROBLEMS:
        found = Msg.parse(template, problem)
        if found is not None:
            said = Msg(template, {k: v if k in ("turn", "rule", "where", "recorded", "now")
                                  else recorded(v, nested=True) for k, v in found.values.items()})
            return _("replay {problem}").format(problem=said.tr())
    return _("replay {problem}").format(problem=recorded(problem, nested=True))


def _play_with(args: ReplayArgs, console: Console, session: Session, model: ReplayModel,
               live: LiveTools | None) -> ExitStatus:
    from agentdbg.engine.replaying import Replay, with_live_tools
    from agentdbg.i18n import Join, Msg
    from agentdbg.providers.base import ProviderInfo

    header = model.header
    desc: Msg | Join = Msg("replay of {file} (recorded with {model}); no network",
                           {"file": args.file, "model": header.model})
    if live is not None:
        options = _options(args, ProviderInfo(model, desc, model="replay"), model_desc=desc)
        open_servers(live.toolset, _stderr_console() if args.json_out else console, options)
        for warning in _server_warnings(header, live.toolset):  # names from the recording
            print(f"agentdbg: warning: {one_line(tr(warning))}", file=sys.stderr)
        with_live_tools(session, model, live)
    elif recorded_servers(header):
        desc = Join((desc, Msg("MCP server(s) not started: {servers}", {"servers": ", ".join(
            f"{s.get('name')} ({started_as(s)})" for s in recorded_servers(header))})), "; ")
    info = ProviderInfo(model, desc, model="replay")
    options = _options(args, info, model_desc=info.description,
                       question=_question(header.initial_messages or [], header),
                       title="agentdbg replay")
    go_live = _go_live(args, console, options) if args.step else None
    return drive(session, console, options, replay=Replay(session, model), go_live=go_live)


def _question(messages: list, header: Header) -> str | None:
    """The run's question, whole: the first user message's text (the header keeps a preview)."""
    first = next((m.get("content") for m in messages
                  if isinstance(m, dict) and m.get("role") == "user"), None)
    return first if isinstance(first, str) else header.question


def _go_live(args: ReplayArgs, console: Console, options: RunOptions | None = None) -> GoLive:
    """For 'live': the model of --model (else the offline one) and the tools of --tools only."""
    from agentdbg.providers.factory import make_provider

    def provider() -> Provider:
        return make_provider(args.model, args.base_url, args.api_key, profile=args.profile).provider

    if args.tools is None and not args.mcp:
        return GoLive(provider)

    def tools() -> ToolSet:
        toolset = _tools(args, "live")
        open_servers(toolset, console, options)   # stopped by drive() with the session's tools
        return toolset

    return GoLive(provider, tools=tools, tools_path=args.tools or Path("--mcp"))


def _stderr_console() -> Console:
    from agentdbg.render.console import make_console

    return make_console(stderr=True)
