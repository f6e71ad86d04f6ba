"""``agentdbg proxy``: bind, print how to point the app at it, serve, write transcripts."""

from __future__ import annotations

import secrets
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.server.proxy.conversations import Export


def run_label() -> str:
    """The run's name: every transcript of this proxy run starts with it."""
    return f"proxy-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def run_proxy(*, upstream: str | None, host: str, port: int, save: Path | None,
              block_invalid: bool, intercept: bool, profile: str, full: bool, console: Console,
              export: Export | None = None, secret_headers: tuple[str, ...] = (),
              allow_origins: tuple[str, ...] = (), allow_hosts: tuple[str, ...] = (),
              drain: float = 60.0, offline: bool = False, script: Path | None = None,
              live: bool = False) -> None:
    from agentdbg.checker.profiles import get_profile
    from agentdbg.server.net import bind, raise_file_limit, run_app, url_of
    from agentdbg.server.proxy.analyst import Analysis
    from agentdbg.server.proxy.app import ProxyOptions, make_app
    from agentdbg.server.proxy.conversations import Tracker
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.server.proxy.workers import ProcessAnalyst, ThreadAnalyst
    from agentdbg.transcript.redact import safe_url, url_secrets
    from agentdbg.transcript.runs import runs_dir

    get_profile(profile)
    serve = None
    if offline or script is not None:   # agentdbg serve behind the proxy, on a thread
        from agentdbg.server.serve import make_app as serve_app
        from agentdbg.server.serve import serve_provider

        provider, _note = serve_provider(script is None, None, script)
        serve_sock = bind("127.0.0.1", 0)
        upstream = url_of(serve_sock)
        serve = serve_app(provider, profile=profile), serve_sock
    assert upstream is not None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    label = run_label()
    viewer = None
    if live:   # forked before any thread starts
        from agentdbg.server.live.serving import LiveOptions, start_live

        viewer = start_live(LiveOptions(Path(save or runs_dir()), label, profile))
    try:   # before the analyst starts: a port in use is one line, and nothing is left running
        sock = bind(host, port)
    except BaseException:
        if viewer is not None:
            viewer.stop()
        raise

    def analysis() -> Analysis:
        tracker = Tracker(save, upstream, export, label=label)   # export: proxy --otlp (see Tracker)
        for secret in url_secrets(upstream):
            tracker.add_secret(secret)
        return Analysis(tracker, ProxyView(console, tracker.redactor, full=full), profile)

    # --intercept pauses each request next to its prompt; otherwise the analysis runs in
    # its own process and never competes with the relay
    analyst = ThreadAnalyst(analysis()) if intercept else ProcessAnalyst(analysis)
    raise_file_limit()    # each request in flight holds two descriptors (see connection_cap)
    options = ProxyOptions(upstream=upstream, profile=profile, block_invalid=block_invalid, full=full,
                           secret_headers=secret_headers, allow_origins=allow_origins,
                           allow_hosts=allow_hosts)
    background = None
    if serve is not None:
        from agentdbg.server.net import Background

        background = Background(serve[0], serve[1], "agentdbg-serve")
    url = url_of(sock)

    def ready() -> None:
        from agentdbg.i18n import _

        behind = "agentdbg serve (" + (_("the script") if script else _("the offline model")) + ")" \
            if serve is not None else safe_url(upstream)
        print(f"agentdbg proxy: {url} -> {behind}", flush=True)
        print("  " + _("point your app at it: {command}").format(
            command=f"export OPENAI_BASE_URL={url} ANTHROPIC_BASE_URL={url[:-len('/v1')]}"), flush=True)
        if viewer is not None:
            print("  " + _("live view: {url}").format(url=viewer.url), flush=True)

    try:
        if intercept:
            from agentdbg.server.proxy.intercept import Interceptor

            ui = Interceptor(console)
            app = make_app(options, analyst, intercept=ui.decide)
            worker = threading.Thread(target=run_app, args=(app, sock), daemon=True,
                                      name="agentdbg-proxy")
            ready()
            worker.start()
            ui.loop()
        else:
            run_app(make_app(options, analyst), sock, on_ready=ready)
    finally:
        from agentdbg.i18n import _

        for path in analyst.close(drain):
            print(_("transcript: {path}").format(path=path), flush=True)
        if background is not None:
            background.stop()
        if viewer is not None:
            viewer.stop()
        sys.stdout.flush()
