"""The OTLP/HTTP receiver: ``POST /v1/traces`` (protobuf or JSON, gzip or not), on loopback.

It answers at once, as a collector does (an empty ``ExportTraceServiceResponse`` in the
request's own encoding), and hands the raw body to the worker (a child process running
``feed.Feed``) — the spans are read away from the request, and away from this interpreter.
With ``--forward URL`` every export is passed on as it came: the same
bytes, the same ``Content-Type`` and ``Content-Encoding``, in the order received, by one sender
task (the app never waits for the real collector; a failure is said on the console). The
``LocalOnly`` guard refuses web pages and foreign Host names, as in front of the proxy.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

from agentdbg.i18n import _
from agentdbg.server.collect.feed import Export
from agentdbg.server.net import read_body

TRACES = "/v1/traces"
KINDS = ("application/x-protobuf", "application/json")
FORWARD_QUEUE = 4096      # exports waiting to be forwarded; past it, one is dropped (and said)


def _error(status: int, message: str) -> dict:
    return {"code": status, "message": message}


class Forwarder:
    """Passes each export on to the user's collector, unchanged and in order."""

    def __init__(self, url: str, say: Callable[[str], None]):
        from agentdbg.report.otel import traces_url

        self.url = traces_url(url, "--forward")
        self.say = say
        self.sent = 0
        self.failed = 0
        self._queue: asyncio.Queue[tuple[bytes, dict[str, str]] | None] | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._queue = asyncio.Queue(FORWARD_QUEUE)
        self._task = asyncio.get_running_loop().create_task(self._send_all())

    def put(self, body: bytes, headers: dict[str, str]) -> None:
        assert self._queue is not None
        try:
            self._queue.put_nowait((body, headers))
        except asyncio.QueueFull:
            self.failed += 1
            self.say(_("forward: {url} is not keeping up; an export was not forwarded").format(url=self.url))

    async def _send_all(self) -> None:
        import httpx

        assert self._queue is not None
        async with httpx.AsyncClient(timeout=10.0, trust_env=False) as client:
            while True:
                job = await self._queue.get()
                if job is None:
                    return
                body, headers = job
                try:
                    answer = await client.post(self.url, content=body, headers=headers)
                    if answer.status_code >= 400:
                        self.failed += 1
                        self.say(_("forward: {url} answered HTTP {status}").format(
                            url=self.url, status=answer.status_code))
                    else:
                        self.sent += 1
                except httpx.HTTPError as exc:
                    self.failed += 1
                    self.say(_("forward: {url} could not be reached ({error})").format(
                        url=self.url, error=type(exc).__name__))

    async def stop(self, timeout: float = 10.0) -> None:
        if self._queue is None or self._task is None:
            return
        await self._queue.put(None)
        try:
            await asyncio.wait_for(self._task, timeout)
        except asyncio.TimeoutError:
            self.say(_("forward: stopped before every export reached {url}").format(url=self.url))


def make_app(take: Callable[[Export], None], say: Callable[[str], None],
             forward: Forwarder | None = None,
             allow_hosts: tuple[str, ...] = ()) -> Any:
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from agentdbg.server.guard import LocalOnly
    from agentdbg.server.net import json_response

    numbers = itertools.count(1)

    async def traces(request: Any) -> Any:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in KINDS:
            return json_response(_error(415, f"Content-Type {kind or '(none)'} is not an OTLP "
                                             "export: send application/x-protobuf or "
                                             "application/json"), status_code=415)
        body = await read_body(request)
        if body is None:
            return json_response(_error(413, "the export is too large"), status_code=413)
        encoding = request.headers.get("content-encoding")
        if forward is not None:
            headers = {"content-type": request.headers["content-type"]}
            if encoding:
                headers["content-encoding"] = encoding
            forward.put(body, headers)
        take(Export(next(numbers), body, kind, encoding.lower() if encoding else None,
                    time.monotonic()))
        if kind == "application/json":
            return Response(b"{}", media_type="application/json")
        return Response(b"", media_type="application/x-protobuf")

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        if forward is not None:
            forward.start()
        yield
        if forward is not None:
            await forward.stop()

    app = Starlette(routes=[Route(TRACES, traces, methods=["POST"])], lifespan=lifespan)
    return LocalOnly(app, body_of=_error, say=say, what="collect", allow_hosts=allow_hosts)
