"""Serving the live view: in a process of its own beside the proxy, or here (``agentdbg ui``).

Beside the proxy it is a child forked before any thread starts (like the proxy's analyst), so
drawing pages never takes the relay's time and a slow page never slows a request. It ignores
Ctrl-C (the wrapped command or the proxy decides when to stop) and ends when told to
(SIGTERM) or when the proxy is gone. The URL, with its token, is made here and said once by
the caller.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

    from agentdbg.server.guard import LocalOnly

PARENT_CHECK = 1.0     # seconds: how often the live process checks the proxy is still there


@dataclass
class LiveOptions:
    folder: Path
    label: str | None = None        # the run this page follows (None: every run, agentdbg ui)
    profile: str = "openai"


def _server(app: ASGIApp, sock: socket.socket) -> uvicorn.Server:
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:   # its own handlers: see start_live and serve_here
            yield

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False,
                            timeout_graceful_shutdown=1)
    return Server(config)


def make_app(options: LiveOptions, token: str) -> LocalOnly:
    from agentdbg.server.live.app import make_live_app
    from agentdbg.server.live.guard import guarded
    from agentdbg.server.live.view import LiveView
    from agentdbg.server.live.watch import Folder

    view = LiveView(Folder(options.folder, options.label), base=f"/{token}/",
                    current=options.label, profile=options.profile)
    return guarded(make_live_app(view), token)


def url_of(sock: socket.socket, token: str) -> str:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/{token}/"


@dataclass
class LiveProcess:
    url: str
    process: object

    def stop(self, timeout: float = 5.0) -> None:
        p = self.process
        if p.is_alive():   # type: ignore[attr-defined]
            p.terminate()  # type: ignore[attr-defined]
            p.join(timeout)  # type: ignore[attr-defined]
        if p.is_alive():   # type: ignore[attr-defined]
            p.kill()       # type: ignore[attr-defined]
            p.join(timeout)  # type: ignore[attr-defined]


def start_live(options: LiveOptions, host: str = "127.0.0.1") -> LiveProcess:
    """The live view in a child process; call before any thread of this process starts."""
    import multiprocessing

    from agentdbg.server.net import bind

    sock = bind(host, 0)
    token = secrets.token_urlsafe(18)
    ctx = multiprocessing.get_context("fork")
    process = ctx.Process(target=_child, args=(options, sock, token), daemon=True,
                          name="agentdbg-live")
    # the child is born with SIGTERM's default action, not this process's handler (which raises):
    # stopped before it set its own (the proxy's port in use), it ends quietly
    handler = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        process.start()
    finally:
        signal.signal(signal.SIGTERM, handler)
    url = url_of(sock, token)
    sock.close()
    return LiveProcess(url, process)


def _child(options: LiveOptions, sock: socket.socket, token: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    server = _server(make_app(options, token), sock)

    def stop(*_: object) -> None:
        server.should_exit = True
    signal.signal(signal.SIGTERM, stop)

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        stop()
    threading.Thread(target=watch_parent, daemon=True).start()
    server.run(sockets=[sock])


def serve_here(options: LiveOptions, host: str, port: int, on_ready: Callable[[str], object]) -> None:
    """``agentdbg ui``: serve on this thread until Ctrl-C; ``on_ready(url)`` says the URL."""
    from agentdbg.server.net import bind

    sock = bind(host, port)
    token = secrets.token_urlsafe(18)
    server = _server(make_app(options, token), sock)

    def stop(*_: object) -> None:
        server.should_exit = True
    previous = signal.signal(signal.SIGINT, stop), signal.signal(signal.SIGTERM, stop)
    try:
        on_ready(url_of(sock, token))
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
