"""Shared by ``run`` and ``replay``: start the MCP servers, attach the transcript, pick step
mode or batch, and stop the servers however the run ends."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdbg.errors import ExitStatus
from agentdbg.i18n import _
from agentdbg.options import GoLive, RunOptions
from agentdbg.textsafe import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.engine.replaying import Replay
    from agentdbg.engine.session import Session
    from agentdbg.i18n import Msg
    from agentdbg.mcp.servers import McpServers
    from agentdbg.toolspec import ToolSet
    from agentdbg.transcript.writer import TranscriptWriter


def drive(session: Session, console: Console, options: RunOptions, *, replay: Replay | None = None,
          go_live: GoLive | None = None,
          export: Callable[[dict, Any], Any] | None = None) -> ExitStatus:
    """Run ``session`` in step mode or batch, writing its transcript as it goes.

    The MCP servers the session's tools name are started first (once for the run) and
    stopped at the end, also on Ctrl-C, SIGTERM or an error. ``export`` (``run --otlp``):
    called with the transcript's header and its writer, it returns an exporter fed the same
    events (``feed(kind, data, redact)``) whose ``close()`` returns warnings (spans it could
    not deliver)."""
    try:
        open_servers(session.toolset, console, options)
        warn_unchecked(session.toolset)
        return _drive(session, console, options, replay=replay, go_live=go_live, export=export)
    finally:
        close_servers(session.toolset)


def _drive(session: Session, console: Console, options: RunOptions, *, replay: Replay | None = None,
           go_live: GoLive | None = None,
           export: Callable[[dict, Any], Any] | None = None) -> ExitStatus:
    from agentdbg import i18n
    from agentdbg.transcript import prune_runs, start_transcript
    from agentdbg.transcript.redact import url_secrets

    i18n.use(options.lang)

    secrets = [*options.secrets, *server_secrets(session.toolset)]
    hide = getattr(console, "hide", None)
    if hide is not None:   # a tool or a server may echo a secret: never on the screen either
        hide([*secrets, *url_secrets(options.base_url)])
    session.executor.secrets = (*session.executor.secrets, *secrets)   # nor in a command's env
    writer = start_transcript(session, options.save, model=options.model, provider=options.provider_name,
                              base_url=options.base_url, question=options.question,
                              redact=options.redact, secrets=secrets,
                              parent=options.parent)
    if options.debug and not options.json_out:
        session.observers.append(exchange_printer(console))
    exporter = None
    try:
        if export is not None:
            exporter = _beside(session, options, export, writer)
        if options.step:
            from agentdbg.repl.debugger import Debugger

            status = Debugger(session, console, options=options, transcript=writer,
                              replay=replay, go_live=go_live, lesson=options.lesson,
                              commands=options.commands).loop()
        else:
            from agentdbg.drivers.batch import run_batch

            status = run_batch(session, console, options, replay=replay, transcript=writer.path)
    finally:
        writer.close()
        warnings = exporter.close() if exporter is not None else []
        removed = prune_runs(options.keep_runs) if options.save is None else 0
    for warning in warnings:
        print(f"agentdbg: warning: {one_line(warning)}", file=sys.stderr)
    path = writer.path
    if writer.error is not None:
        print(f"agentdbg: error: could not write the transcript {one_line(path)} "
              f"({one_line(writer.error)}); {one_line(rescue(session, options, writer))}",
              file=sys.stderr)
    elif not options.json_out:
        console.print(_("transcript: {path}").format(path=one_line(path)), soft_wrap=True,
                      highlight=False, markup=False)
    if removed and options.debug:   # every run past the limit removes one: not news each time
        print(f"agentdbg: kept the newest {options.keep_runs} finished transcripts in the runs "
              f"folder (--keep-runs): removed {removed} older one(s)", file=sys.stderr)
    return status


# -- MCP servers ------------------------------------------------------------------------------

def handler_warnings(toolset: ToolSet) -> list[Msg]:
    """What ``run`` says before it starts about python handlers whose signature cannot take
    their schema's parameters (the lint's ``handler-signature-mismatch``): every such call would
    fail with ``internal_error``."""
    from agentdbg.checker.handlers import lint_handler
    from agentdbg.i18n import N_, Msg

    lines = []
    for spec in toolset.tools:
        if spec.handler_kind != "python":
            continue
        for f in lint_handler(spec):
            if f.rule == "handler-signature-mismatch":
                where = f"{toolset.path}:{f.line}" if f.line else str(toolset.path)
                lines.append(Msg(N_("{where}: tool {tool}: {message} ({rule}; 'agentdbg tools' "
                                    "lints the whole file)"),
                                 {"where": where, "tool": repr(f.tool), "message": f.shown,
                                  "rule": f.rule}))
    return lines


def load_run_tools(path: Path | None, mcp: Iterable[str] = (), ask: Callable | None = None) -> ToolSet:
    """The tools of a run: the tools file plus the ``--mcp`` servers (started by ``drive``).

    A file named with ``--tools`` loads as it is. Without one, ``./tools.yaml`` is a file
    agentdbg *found*: it runs code only when trusted (agentdbg's own sample, ``agentdbg
    trust``, or ``ask(path, runs)`` saying yes), else its definitions are data only (see
    ``agentdbg.trust``). Without it, the bundled sample; with ``--mcp`` and no ``--tools``, only
    ``./tools.yaml`` joins (never the bundled sample)."""
    from agentdbg.mcp.config import parse_mcp_option
    from agentdbg.toolspec import ToolSet, bundled_tools_path, load_tools
    from agentdbg.trust import load_found

    texts = list(mcp)
    found = Path("tools.yaml")
    if path is not None:
        toolset = load_tools(path)
    elif found.is_file():
        toolset = load_found(found, ask)
    elif texts:
        toolset = ToolSet(path=Path("--mcp"), tools=[])
    else:
        toolset = load_tools(bundled_tools_path())
        toolset.trust = "sample"
    for text in texts:
        toolset.servers.append(parse_mcp_option(text, taken=[s.name for s in toolset.servers]))
    return toolset


def open_servers(toolset: ToolSet, console: Console, options: RunOptions | None = None, *,
                 lenient: bool = False, quiet: bool = False, debug: bool = False) -> McpServers | None:
    """Start the servers ``toolset`` names (no-op without any, or when already started) and
    say who answered (not with ``quiet`` or ``--json``).

    A server that fails is one error line naming it; with ``--debug`` its stderr and the
    underlying error are printed first."""
    if not toolset.servers or toolset.mcp is not None:
        return toolset.mcp
    from agentdbg.mcp.errors import McpServerError
    from agentdbg.toolspec import start_servers

    debug = debug or (options is not None and options.debug)
    try:
        servers = start_servers(toolset, lenient=lenient)
    except McpServerError as exc:
        if debug:
            print(exc.debug_text(), file=sys.stderr)
        raise
    if servers is not None and not quiet and (options is None or not options.json_out):
        from agentdbg.render.tools import render_servers

        console.print(render_servers(servers.records()), soft_wrap=True)
    return servers


def warn_unchecked(toolset: ToolSet) -> None:
    """One line for each tool whose schema is over the work budget: its arguments are left
    unchecked (by the executor and by the checker) for the whole run."""
    from agentdbg.schemas import over_budget

    for spec in toolset.tools:
        why = over_budget(spec.parameters)
        if why is not None:
            print(f"agentdbg: warning: tool {one_line(spec.name)!r}: arguments left unchecked: "
                  f"{why}", file=sys.stderr)


def close_servers(toolset: ToolSet | None) -> None:
    if toolset is not None and toolset.mcp is not None:
        toolset.mcp.close()


def server_secrets(toolset: ToolSet) -> list[str]:
    return sorted(toolset.mcp.secrets()) if toolset.mcp is not None else []


def exchange_printer(console: Console) -> Callable[[str, dict], None]:
    """A session observer printing each MCP call's JSON-RPC exchange as it ends (``--debug``)."""
    from agentdbg.render.tools import render_exchange

    def observe(kind: str, data: dict) -> None:
        if kind == "tool" and data.get("mcp"):
            console.print(render_exchange(data.get("tool_call_id", ""), data.get("name", ""),
                                          data["mcp"]), soft_wrap=True)
    return observe


def _beside(session: Session, options: RunOptions, export: Callable[[dict, Any], Any],
            writer: TranscriptWriter) -> Any:
    """An exporter beside the transcript writer: the same header, the same events."""
    from agentdbg.transcript.redact import safe_url

    header = {"model": options.model, "provider": options.provider_name,
              "base_url": safe_url(options.base_url), "question": options.question,
              "tools": session.toolset.openai_tools(), "parent": options.parent}
    exporter = export(header, writer)
    session.observers.append(lambda kind, data: exporter.feed(kind, data, writer.redact))
    return exporter


def rescue(session: Session, options: RunOptions, writer: TranscriptWriter) -> str:
    """Save the in-memory run somewhere else; returns what happened, for the error line."""
    import tempfile
    import time

    from agentdbg.transcript.document import run_document, write_json

    target = Path(tempfile.gettempdir()) / f"agentdbg-rescue-{time.strftime('%Y%m%d-%H%M%S')}.json"
    try:
        write_json(target, writer.redact(run_document(session, model=options.model,
                                                      base_url=options.base_url)))
    except OSError as exc:
        return f"saving it to {target} failed too ({exc.strerror}); rerun with --json for stdout"
    return f"the run was kept in memory and saved to {target}"
