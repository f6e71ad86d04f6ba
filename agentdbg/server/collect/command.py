"""``agentdbg collect``: bind on loopback, say where, receive until Ctrl-C, then the summary."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.textsafe import one_line


@dataclass
class CollectOptions:
    host: str = "127.0.0.1"
    port: int = 4318
    forward: str | None = None
    save: Path | None = None
    live: bool = False
    profile: str = "openai"
    full: bool = False


def _say(text: str) -> None:
    print(f"agentdbg collect: {one_line(text)}", file=sys.stderr, flush=True)


def run_collect(options: CollectOptions, console: Any = None) -> list[Any]:
    from agentdbg.render.console import make_console
    from agentdbg.server.collect.app import Forwarder, make_app
    from agentdbg.server.collect.feed import Feed
    from agentdbg.server.net import bind
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.transcript.redact import Redactor
    from agentdbg.transcript.runs import runs_dir

    folder = Path(options.save or runs_dir())
    label = f"collect-{time.strftime('%Y%m%d-%H%M%S')}"
    viewer = None
    if options.live:   # a process of its own, started before any thread of this one
        from agentdbg.server.live.serving import LiveOptions, start_live

        viewer = start_live(LiveOptions(folder, label, options.profile), options.host)
    console = console or make_console()
    view = ProxyView(console, Redactor(), full=options.full)
    feed = Feed(folder, label, view, options.profile)
    forward = Forwarder(options.forward, view.note) if options.forward else None
    sock = bind(options.host, options.port)
    host, port = sock.getsockname()[:2]
    endpoint = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    _say(f"receiving OTLP/HTTP traces at {endpoint}/v1/traces — point your app at it: "
         f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}; Ctrl-C stops")
    if viewer is not None:
        _say(f"live view: {viewer.url}")
    if forward is not None:
        _say(f"forwarding every export unchanged to {forward.url}")
    try:
        serve(make_app(feed, view.note, forward), sock)
    finally:
        written = feed.close()
        if viewer is not None:
            viewer.stop()
        _summary(feed, written, forward)
    return written


def serve(app: Any, sock: Any) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False,
                            timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])


def _summary(feed: Any, written: list[Any], forward: Any) -> None:
    s = feed.stats
    lines = [f"{s.exports} export(s), {s.spans} span(s), {s.calls} model call(s) in "
             f"{len(written)} conversation(s); findings: {s.findings or 'none'}"]
    if s.dropped:
        lines.append(f"{s.dropped} export(s) not read: agentdbg fell too far behind")
    if forward is not None:
        lines.append(f"forwarded {forward.sent} export(s) to {forward.url}"
                     + (f"; {forward.failed} failed" if forward.failed else ""))
    for w in written:
        agent = f" · {w.thread.agent}" if w.thread.agent else ""
        lines.append(f"  conversation {w.number}{agent}: {w.requests} request"
                     f"{'s' if w.requests != 1 else ''}  {w.path}")
    notes = sorted({n for w in written if (n := w.thread.missing_text())})
    lines.extend(f"  note: {n}" for n in notes)
    for line in lines:
        print(f"agentdbg collect: {one_line(line)}" if not line.startswith("  ") else one_line(line),
              file=sys.stderr, flush=True)
