"""``agentdbg proxy``: bind, print how to point the app at it, serve, write transcripts."""

from __future__ import annotations

import sys
import threading
from pathlib import Path


def run_proxy(*, upstream: str, host: str, port: int, save: Path | None, block_invalid: bool,
              intercept: bool, profile: str, full: bool, console, export=None,
              secret_headers: tuple[str, ...] = (), allow_origins: tuple[str, ...] = (),
              allow_hosts: tuple[str, ...] = (), drain: float = 60.0) -> None:
    from agentdbg.checker.profiles import get_profile
    from agentdbg.server.net import bind, raise_file_limit, run_app, url_of
    from agentdbg.server.proxy.analyst import Analysis
    from agentdbg.server.proxy.app import ProxyOptions, make_app
    from agentdbg.server.proxy.conversations import Tracker
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.server.proxy.workers import ProcessAnalyst, ThreadAnalyst
    from agentdbg.transcript.redact import safe_url, url_secrets

    get_profile(profile)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)

    def analysis() -> Analysis:
        tracker = Tracker(save, upstream, export)   # export: proxy --otlp (see Tracker)
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
    sock = bind(host, port)
    url = url_of(sock)

    def ready():
        print(f"agentdbg proxy: {url} -> {safe_url(upstream)}", flush=True)
        print(f"  point your app at it: export OPENAI_BASE_URL={url} "
              f"ANTHROPIC_BASE_URL={url[:-len('/v1')]}", flush=True)

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
        for path in analyst.close(drain):
            print(f"transcript: {path}", flush=True)
        sys.stdout.flush()
