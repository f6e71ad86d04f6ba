"""``agentdbg collect``: bind on loopback, say where, receive until Ctrl-C, then the summary.

The receiver (this process) only reads each export and answers; the spans become conversations in
a child process (the proxy's ``ProcessAnalyst``), which at stop finishes every export received —
within ``drain`` seconds, or until a second Ctrl-C — ends the transcripts and says the summary."""

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
    drain: float = 60.0       # at stop, seconds to let the worker finish what was received


def _say(text: str) -> None:
    print(f"agentdbg collect: {one_line(text)}", file=sys.stderr, flush=True)


def run_collect(options: CollectOptions, console: Any = None) -> list[Path]:
    """Receive until Ctrl-C (or SIGTERM); the transcripts written."""
    from agentdbg.render.console import make_console
    from agentdbg.server.collect.app import Forwarder, make_app
    from agentdbg.server.collect.feed import Export, Feed
    from agentdbg.server.net import bind
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.server.proxy.workers import ProcessAnalyst
    from agentdbg.transcript.redact import Redactor
    from agentdbg.transcript.runs import runs_dir

    if options.forward:   # a --forward that is no URL is said before anything starts or binds
        from agentdbg.report.otel import traces_url

        traces_url(options.forward, "--forward")
    folder = Path(options.save or runs_dir())
    label = f"collect-{time.strftime('%Y%m%d-%H%M%S')}"
    viewer = None
    if options.live:   # a process of its own, started before any thread of this one
        from agentdbg.server.live.serving import LiveOptions, start_live

        viewer = start_live(LiveOptions(folder, label, options.profile), options.host)
    try:   # before the worker starts: a port in use is one line, and nothing is left running
        sock = bind(options.host, options.port)
    except BaseException:
        if viewer is not None:
            viewer.stop()
        raise
    console = console or make_console()
    view = ProxyView(console, Redactor(), full=options.full)

    def analysis() -> Feed:     # in the worker's process
        return Feed(folder, label, view, options.profile)

    forward = Forwarder(options.forward, view.note) if options.forward else None
    # the worker at nice 10: the receiver answers first, the spans still read at a fair share
    worker = ProcessAnalyst(analysis, nice=10, tell=_say, unit="export", done="received")

    def take(export: Export) -> None:
        worker.job(*export.job())

    host, port = sock.getsockname()[:2]
    endpoint = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    from agentdbg.i18n import _

    _say(_("receiving OTLP/HTTP traces at {url} — point your app at it: {variable}; Ctrl-C stops").format(
        url=f"{endpoint}/v1/traces", variable=f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}"))
    if viewer is not None:
        _say(_("live view: {url}").format(url=viewer.url))
    if forward is not None:
        _say(_("forwarding every export unchanged to {url}").format(url=forward.url))
    try:
        serve(make_app(take, view.note, forward), sock)
    finally:
        written = worker.close(options.drain)     # the worker says its summary
        if viewer is not None:
            viewer.stop()
        if forward is not None:
            said = (_("forwarded {sent} export(s) to {url}; {failed} failed") if forward.failed else
                    _("forwarded {sent} export(s) to {url}"))
            _say(said.format(sent=forward.sent, url=forward.url, failed=forward.failed))
    return written


def serve(app: Any, sock: Any) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False,
                            timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])
