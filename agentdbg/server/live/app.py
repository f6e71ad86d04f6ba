"""The live view's HTTP side: pages, fragments, and server-sent events as transcripts change.

Routes (after ``/TOKEN``, see ``guard``)::

    /                    this run (proxy --live, proxy --live -- CMD), or every run (ui)
    /runs                every run in the folder
    /run?key=K           one run's page; /events?key=K its changes as server-sent events,
                         /conv?key=K&name=N one conversation's section, /summary?key=K its summary
    /diff?a=N&b=N        two transcripts compared
    /assets/live.js|css  the page's one script and style sheet (no CDN, nothing inline)

A poller scans the folder every ``POLL`` seconds; a change wakes every open event stream,
which sends each transcript's version, and the page fetches the sections that changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from agentdbg.server.live.view import CSP, LiveView, asset

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

POLL = 0.1                 # seconds between scans of the folder
KEEPALIVE = 15.0           # a comment on an idle event stream, so proxies and browsers keep it
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Content-Security-Policy": CSP}


class Changes:
    """Wakes every waiting event stream when the folder changed."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def changed(self) -> None:
        self.event.set()
        self.event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.event.wait(), timeout)


def make_live_app(view: LiveView) -> Starlette:
    """The starlette app (behind ``guard.guarded`` before it is served)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
    from starlette.routing import Route

    changes: Changes | None = None
    lock = asyncio.Lock()      # one drawing at a time: the view's caches are not shared

    async def drawn(fn: Callable[..., str | None], *args: object) -> str | None:
        async with lock:
            return await run_in_threadpool(fn, *args)

    def html(text: str | None, status: int = 200) -> Response:
        if text is None:
            return PlainTextResponse("404 Not Found: no such run or transcript in this folder\n",
                                     status_code=404, headers=HEADERS)
        return HTMLResponse(text, status_code=status, headers=HEADERS)

    def known(key: str | None) -> bool:
        return bool(key) and any(e.run == key for e in view.folder.entries.values())

    async def home(request: Request) -> Response:
        if view.current is not None:
            return html(await drawn(view.run_page, view.current))
        return html(await drawn(view.runs_page))

    async def runs(request: Request) -> Response:
        return html(await drawn(view.runs_page))

    async def run(request: Request) -> Response:
        key = request.query_params.get("key")
        if key != view.current and not known(key):
            return html(None)
        return html(await drawn(view.run_page, key))

    async def conv(request: Request) -> Response:
        key, name = request.query_params.get("key"), request.query_params.get("name")
        entry = view.folder.entry(name or "")
        if entry is None or entry.run != key:
            return html(None)
        anchors = view.anchors(view.folder.run(entry.run))
        return html(await drawn(view.section, entry, anchors[entry.name]))

    async def summary(request: Request) -> Response:
        key = request.query_params.get("key")
        if key != view.current and not known(key):
            return html(None)
        return html(await drawn(view.summary, key))

    async def diff(request: Request) -> Response:
        a, b = request.query_params.get("a"), request.query_params.get("b")
        return html(await drawn(view.diff_page, a or "", b or ""))

    async def events(request: Request) -> Response:
        key = request.query_params.get("key") or ""

        async def stream() -> AsyncIterator[str]:
            last = None
            while True:
                state = view.state(key)
                if state != last:
                    last = state
                    yield f"data: {json.dumps(state, ensure_ascii=False)}\n\n"
                else:
                    yield ": keepalive\n\n"
                assert changes is not None
                await changes.wait(KEEPALIVE)
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={**HEADERS, "X-Accel-Buffering": "no"})

    async def assets(request: Request) -> Response:
        found = asset(request.path_params["name"])
        if found is None:
            return html(None)
        return Response(found[0], media_type=found[1], headers=HEADERS)

    async def poll() -> None:
        while True:
            if view.folder.scan() and changes is not None:
                changes.changed()
            await asyncio.sleep(POLL)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        nonlocal changes
        changes = Changes()
        view.folder.scan()
        task = asyncio.create_task(poll())
        try:
            yield
        finally:
            task.cancel()

    routes = [Route("/", home), Route("/runs", runs), Route("/run", run), Route("/conv", conv),
              Route("/summary", summary), Route("/events", events), Route("/diff", diff),
              Route("/assets/{name}", assets)]
    return Starlette(routes=routes, lifespan=lifespan)
