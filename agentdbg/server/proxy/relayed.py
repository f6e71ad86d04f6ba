"""The relayed answer's ASGI response: starlette's ``StreamingResponse`` without a task group.

Starlette (for servers of ASGI spec < 2.4, uvicorn's included) runs each streaming response in an
anyio task group of two tasks, one writing and one waiting for the client to go away, and anyio
formats the cancelling task's ``repr`` when the writer ends: about a sixth of the relay's CPU per
request. Here the writer is the request's own task and the watcher a plain asyncio task; when the
client goes away the writer is cancelled at once, as before (a stream the app dropped stops
reading the upstream, and the analyst gets what arrived). Status and headers are starlette's own
(``init_headers``: the same bytes as before).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from starlette.responses import StreamingResponse

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


class Relayed(StreamingResponse):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writer = asyncio.current_task()
        state = {"gone": False, "ending": False}

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if not state["ending"] and writer is not None:
                state["gone"] = True
                writer.cancel()

        watcher = asyncio.ensure_future(watch())
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            async for chunk in self.body_iterator:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            state["ending"] = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not state["gone"]:
                raise
            if writer is not None and hasattr(writer, "uncancel"):   # Python 3.11+
                writer.uncancel()
            # cut while it was written: the relay's generator ends now (the upstream's connection
            # closed, the analyst handed what arrived), not when it is collected
            closing = getattr(self.body_iterator, "aclose", None)
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing()
        finally:
            state["ending"] = True
            watcher.cancel()
