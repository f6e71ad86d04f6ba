"""A relayed stream's chunks, those already received joined into one write.

The upstream's HTTP client yields one chunk per piece of its chunked encoding: a server that
writes each event of a stream on its own (``serve`` does; so do real APIs in a burst) gives the
relay one chunk per event. Written one by one, each went through starlette and uvicorn on its
own (1,000 events: 1,000 writes). Here a task reads the chunks while the relay writes: whatever
arrived while the last write went out goes out as the next one. A chunk that comes alone still
goes out at once; the task reads at most ``AHEAD`` bytes ahead of the app, so a slow app holds up
the upstream as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator

AHEAD = 1 << 20     # bytes read from the upstream and not yet written to the app, at most


async def batches(chunks: AsyncIterator[bytes], ahead: int = AHEAD) -> AsyncGenerator[bytes, None]:
    """``chunks`` as they arrive, every chunk already received joined to the ones before it."""
    pending: list[bytes] = []
    size = 0
    arrived = asyncio.Event()        # a chunk (or the end) is there for the writer
    room = asyncio.Event()           # the reader may read on
    room.set()
    ended = False
    failure: BaseException | None = None

    async def read() -> None:
        nonlocal size, ended, failure
        try:
            async for chunk in chunks:
                pending.append(chunk)
                size += len(chunk)
                arrived.set()
                if size >= ahead:
                    room.clear()
                    await room.wait()
        except Exception as exc:  # noqa: BLE001 - raised again on the writer's side
            failure = exc
        finally:
            ended = True
            arrived.set()

    reader = asyncio.ensure_future(read())
    try:
        while True:
            if not pending and not ended:
                await arrived.wait()
            arrived.clear()
            if pending:
                batch = pending[0] if len(pending) == 1 else b"".join(pending)
                pending.clear()
                size = 0
                room.set()
                yield batch
            elif ended:
                break
        if failure is not None:
            raise failure
    finally:
        if not reader.done():
            reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
