"""``agentdbg proxy [OPTIONS] -- CMD [ARGS…]``: run a command with its clients pointed at a
proxy on a free loopback port, and stop with it.

In order: the proxy's upstreams are found (``--offline``/``--script``: an ``agentdbg serve``
on a thread; ``--upstream``: that; else where the command was going, per API family); from
here on agentdbg's own output goes to the run's log file; the live view (``--live``) and the
analyst start in processes of their own, the proxy (and serve) on threads; the command runs
with the terminal (``child``). When it ends, the proxy stops, the analyst writes every
conversation's stop event, the report of the run is written, and a summary goes to stderr:
agentdbg exits with the command's status.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdbg.errors import AgentdbgError, ExitStatus
from agentdbg.i18n import N_, Msg, _
from agentdbg.server.launch import child
from agentdbg.server.launch.clients import App, Plan, client_for
from agentdbg.server.launch.formats import Family, relayed
from agentdbg.server.net import Background

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from agentdbg.server.proxy.workers import ProcessAnalyst

#: ``--offline``/``--script``: serve's app, its bound socket and its URL
Served = tuple["ASGIApp", socket.socket, str]


class CommandNotFound(AgentdbgError):
    exit_status = ExitStatus.COMMAND_NOT_FOUND


@dataclass
class LaunchOptions:
    argv: list[str]
    upstream: str | None = None
    offline: bool = False
    script: Path | None = None
    client: str | None = None
    live: bool = False
    save: Path | None = None
    profile: str = "openai"
    block_invalid: bool = False
    full: bool = False
    export: Any = None
    host: str = "127.0.0.1"
    port: int = 0
    secret_headers: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    drain: float = 60.0


@dataclass
class Running:
    """What runs beside the command, stopped in reverse order."""

    threads: list = field(default_factory=list)        # Background servers
    analyst: Any = None
    live: Any = None


class ByFamily:
    """Each API family's requests to its own proxy app, the family's path taken off."""

    def __init__(self, apps: dict[str, Any]) -> None:
        self.apps = {f"/{name}": app for name, app in apps.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        for prefix, app in self.apps.items():
            if path == prefix or path.startswith(prefix + "/"):
                raw = scope.get("raw_path")
                await app({**scope, "path": path[len(prefix):] or "/",
                           "raw_path": raw[len(prefix):] if isinstance(raw, bytes) else raw},
                          receive, send)
                return
        from agentdbg.server.net import json_response

        paths = ", ".join(self.apps)
        await json_response({"error": {"message": f"agentdbg proxy: no API at this path; the "
                                                  f"command's clients are pointed at {paths}",
                                       "type": "invalid_request_error", "param": None,
                                       "code": None}}, status_code=404)(scope, receive, send)


def run_command(opts: LaunchOptions) -> int:
    """Run the command through the proxy; returns the exit status (the command's)."""
    from agentdbg.wire.codec import NAMES

    if shutil.which(opts.argv[0]) is None:
        raise CommandNotFound(Msg(N_("{command}: command not found"), {"command": opts.argv[0]}))
    client = client_for(opts.argv, opts.client)
    families = relayed(frozenset(NAMES))
    plan = Plan(list(opts.argv), dict(os.environ))
    client.upstreams(plan, families, Path.cwd())
    serve = _serve(opts) if opts.offline or opts.script else None
    targets = _targets(opts, plan, families, serve)
    from agentdbg.server.proxy.command import run_label
    from agentdbg.transcript.runs import runs_dir

    label = run_label()

    folder = Path(opts.save or runs_dir())
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / f"{label}.log"
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    redirect = child.Redirect(log_fd)
    running = Running()
    ended = None
    try:
        _log_start(plan, client, targets, opts)
        root = _start(opts, running, serve, targets, label, folder, families, redirect)
        client.point(plan, families, root, opts.offline or opts.script is not None)
        for note in plan.notes:
            print("agentdbg: " + _("note: {note}").format(note=note), flush=True)
        child.become_subreaper()
        ended = child.run(plan.argv, plan.env, redirect.stdout, redirect.stderr)
        from agentdbg.server.launch.summary import ended_text

        print(f"agentdbg: {ended_text(opts.argv[0], ended)}", flush=True)
    finally:
        paths = _stop(running, opts.drain)
        left = child.end_leftovers(set())
        redirect.restore()
        os.close(log_fd)
    from agentdbg.server.launch.summary import report_and_summary

    assert ended is not None
    report_and_summary(Path(opts.argv[0]).name, ended, paths, folder, label, log_path, plan.notes,
                       left, opts.profile)
    return ended.status


def _serve(opts: LaunchOptions) -> Served:
    """``--offline``/``--script``: agentdbg serve, bound now (its thread starts with the rest)."""
    from agentdbg.server.net import bind, url_of
    from agentdbg.server.serve import make_app, serve_provider

    provider, _ = serve_provider(opts.offline and opts.script is None, None, opts.script)
    sock = bind("127.0.0.1", 0)
    return make_app(provider, profile=opts.profile), sock, url_of(sock)


def _targets(opts: LaunchOptions, plan: Plan, families: tuple[Family, ...], serve: Served | None
             ) -> dict[str, str]:
    """Where the proxy relays each family: serve, --upstream, or where the command was going."""
    if serve is not None:
        return {f.name: serve[2] for f in families}
    if opts.upstream is not None:
        return {f.name: opts.upstream for f in families}
    return {f.name: f.relay_target(plan.found[f.name][0]) for f in families}


def _log_start(plan: Plan, client: App, targets: dict[str, str], opts: LaunchOptions) -> None:
    from agentdbg.textsafe import one_line
    from agentdbg.transcript.redact import safe_url

    print("agentdbg proxy: " + _("running {command} (client: {client})").format(
        command=one_line(_shown(opts.argv, plan.env)), client=client.name), flush=True)
    for name, url in targets.items():
        src = plan.found.get(name, ("", None))[1]
        said = _("{family}: relayed to {url} (from {source})") if src and not (
            opts.offline or opts.script or opts.upstream) else _("{family}: relayed to {url}")
        print("  " + said.format(family=name, url=safe_url(url), source=one_line(src or "")),
              flush=True)


def _shown(argv: list[str], env: dict[str, str]) -> str:
    """The command line for the log: keys in the environment, and what looks like one, hidden."""
    from agentdbg.transcript.redact import Redactor

    secret = ("KEY", "TOKEN", "SECRET", "PASSWORD")
    redact = Redactor(secrets=[v for k, v in env.items() if any(w in k.upper() for w in secret)])
    return redact.text(" ".join(argv))


def _start(opts: LaunchOptions, running: Running, serve: Served | None, targets: dict[str, str], label: str,
           folder: Path, families: tuple[Family, ...], redirect: child.Redirect) -> str:
    """Start the live view, the analyst, serve and the proxy; returns the proxy's root URL."""
    from agentdbg.server.net import bind, raise_file_limit

    raise_file_limit()    # each request in flight holds two descriptors
    if opts.live:   # forked first: no thread runs yet
        from agentdbg.server.live.serving import LiveOptions, start_live

        running.live = start_live(LiveOptions(folder, label, opts.profile))
        os.write(redirect.stderr, ("agentdbg: " + _("live view: {url}").format(url=running.live.url)
                                   + "\n").encode())
    running.analyst = _analyst(opts, targets, label, folder, families)
    if serve is not None:
        running.threads.append(Background(serve[0], serve[1], "agentdbg-serve"))
    sock = bind(opts.host, opts.port)
    app = ByFamily(_proxy_apps(opts, running.analyst, targets))
    running.threads.append(Background(app, sock, "agentdbg-proxy"))
    host, port = sock.getsockname()[:2]
    root = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    print("agentdbg proxy: " + _("listening at {url} ({paths})").format(
        url=root, paths=", ".join(f"/{n}" for n in targets)), flush=True)
    return root


def _analyst(opts: LaunchOptions, targets: dict[str, str], label: str, folder: Path,
             families: tuple[Family, ...]) -> ProcessAnalyst:
    from agentdbg.render.console import make_console
    from agentdbg.server.proxy.analyst import Analysis
    from agentdbg.server.proxy.conversations import Tracker
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.server.proxy.workers import ProcessAnalyst
    from agentdbg.transcript.redact import url_secrets

    by_wire = {w: targets[f.name] for f in families for w in f.wires}
    upstream: str | dict[str, str] = by_wire if len(set(by_wire.values())) > 1 else \
        next(iter(by_wire.values()), "")
    export = opts.export

    def analysis() -> Analysis:
        tracker = Tracker(folder, upstream, export, label=label)
        for url in set(targets.values()):
            for secret in url_secrets(url):
                tracker.add_secret(secret)
        return Analysis(tracker, ProxyView(make_console(), tracker.redactor, full=opts.full),
                        opts.profile)
    return ProcessAnalyst(analysis)


def _proxy_apps(opts: LaunchOptions, analyst: ProcessAnalyst, targets: dict[str, str]) -> dict[str, Any]:
    from agentdbg.server.proxy.app import ProxyOptions, make_app

    made: dict[str, Any] = {}
    apps = {}
    for name, url in targets.items():   # one app (one connection pool) per upstream
        if url not in made:
            made[url] = make_app(ProxyOptions(upstream=url, profile=opts.profile,
                                              block_invalid=opts.block_invalid, full=opts.full,
                                              secret_headers=opts.secret_headers,
                                              allow_origins=opts.allow_origins,
                                              allow_hosts=opts.allow_hosts), analyst)
        apps[name] = made[url]
    return apps


def _stop(running: Running, drain: float) -> list[Path]:
    """Stop the proxy and serve, let the analyst finish (every stop event), stop the live view."""
    for background in reversed(running.threads):
        background.stop()
    paths: list[Path] = running.analyst.close(drain) if running.analyst is not None else []
    if running.live is not None:
        time.sleep(0.3)   # its last scan shows the stop events to a page still open
        running.live.stop()
    sys.stdout.flush()
    return paths
