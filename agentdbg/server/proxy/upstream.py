"""The relay's HTTP/1.1 client for the checked endpoints: one request, its response's bytes.

httpx (through httpcore, h11 and anyio) read each piece of a chunked answer through about ten
layers of Python: a streamed answer of 1,000 events cost the relay 17 ms of CPU, more than 80%
of it reading. Here each upstream connection is an asyncio protocol whose bytes go through
httptools' C parser (uvicorn's own), and everything that came in one read of the socket goes
to the app as one piece. What the upstream sees is what httpx sent: the app's headers, ``Host``,
``Content-Length``, httpx's defaults where the app set none (``accept``, ``connection``,
``user-agent``), ``Authorization: Basic`` from credentials in the upstream URL, TLS verified as
httpx verifies it. Connections are kept for reuse (``idle`` of them), at most ``most`` open; a
request that finds them all busy waits ``pool_wait`` seconds, then fails with ``PoolTimeout``.
Failures carry httpx's exception names (``ConnectError``, ``ReadTimeout`` …): the 502s say them.
"""

from __future__ import annotations

import asyncio
import base64
import collections
from collections.abc import AsyncGenerator, Iterator, Mapping
from typing import TYPE_CHECKING

import httptools

if TYPE_CHECKING:
    import ssl

    import httpx

AHEAD = 1 << 20     # bytes read from the upstream and not yet taken by the relay, at most
HEAD_MOST = 64 << 10   # bytes of headers of one answer, interim ones counted (httptools has no bound)


class UpstreamError(Exception):
    """No (whole) response from the upstream. The class's name is what the app is told."""


class ConnectError(UpstreamError):
    pass


class ConnectTimeout(UpstreamError):
    pass


class ReadTimeout(UpstreamError):
    pass


class RemoteProtocolError(UpstreamError):
    pass


class PoolTimeout(UpstreamError):
    pass


class Headers(Mapping[str, str]):
    """A response's headers in order (names lower case); a repeated header's values joined, as
    httpx's ``Headers`` gives them, ``multi_items`` each as sent."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = pairs

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self._pairs)

    def __getitem__(self, name: str) -> str:
        name = name.lower()
        values = [v for k, v in self._pairs if k == name]
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(k for k, _ in self._pairs))

    def __len__(self) -> int:
        return len(dict.fromkeys(k for k, _ in self._pairs))


class _Connection(asyncio.Protocol):
    """One connection to the upstream: the response being read, as the parser gives it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, key: tuple[str, str, int]) -> None:
        self.loop, self.key = loop, key
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.busy = False
        self._waiter: asyncio.Future | None = None
        self._paused = False
        self._start()

    def _start(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.pairs: list[tuple[str, str]] = []
        self.head_bytes = 0
        self.status = 0
        self.head = False              # the final (not 1xx) response's head is complete
        self.done = False              # its body is complete
        self.sized = False             # it said where its body ends (a length, or chunks)
        self.body: list[bytes] = []
        self.buffered = 0
        self.error: UpstreamError | None = None

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport     # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if not self.busy or self.done or self.error is not None:
            self.close()               # bytes nobody asked for: this connection cannot be reused
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.error = RemoteProtocolError("the upstream switched protocols")
        except httptools.HttpParserError as exc:
            self.error = RemoteProtocolError(f"the upstream's response is not HTTP/1.1 ({exc})")
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.done and self.error is None:   # (idle: never read again)
            if self.head and not self.sized:     # a body that ends where the connection does
                self.done = True
            elif self.head:
                self.error = RemoteProtocolError("peer closed connection without sending complete "
                                                 "message body")
            else:
                self.error = RemoteProtocolError("Server disconnected without sending a response.")
        self._wake()

    # -- httptools callbacks ---------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        if self._count_head(len(name) + len(value) + 4):
            self.pairs.append((name.decode("latin-1").lower(), value.decode("latin-1")))

    def _count_head(self, size: int) -> bool:
        """False past the head's bound (endless headers or 1xx answers): the answer ends there
        (h11 bounded it too)."""
        self.head_bytes += size
        if self.head_bytes <= HEAD_MOST:
            return True
        if self.error is None:
            self.error = RemoteProtocolError(
                f"the upstream's response head is over {HEAD_MOST >> 10} KiB")
            self.close()
        return False

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:         # 100 Continue and the like: the answer comes after
            self.pairs = []
            self._count_head(32)
            return
        self.status = status
        self.head = True
        self.sized = any(k == "content-length" or (k == "transfer-encoding" and "chunked" in v.lower())
                         for k, v in self.pairs) or status in (204, 304)

    def on_body(self, body: bytes) -> None:
        self.body.append(body)
        self.buffered += len(body)
        if self.buffered >= AHEAD and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        if self.head:
            self.done = True

    # -- the relay's side ------------------------------------------------------------------
    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Until the upstream sends something or goes away; ``ReadTimeout`` after ``timeout``."""
        waiter = self._waiter = self.loop.create_future()
        timer = self.loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def take(self) -> bytes:
        """What arrived of the body since the last take, as one piece."""
        chunk = self.body[0] if len(self.body) == 1 else b"".join(self.body)
        self.body.clear()
        self.buffered = 0
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()
        return chunk

    def reusable(self) -> bool:
        return self.done and self.error is None and not self.closed and self.parser.should_keep_alive()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _expire(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_exception(ReadTimeout("no answer from the upstream within the timeout"))


class Answer:
    """The upstream's answer: status and headers now, the body as it arrives (``aiter_raw``)."""

    def __init__(self, pool: Upstream, conn: _Connection) -> None:
        self.status_code = conn.status
        self.headers = Headers(conn.pairs)
        self._pool, self._conn = pool, conn
        self._ended = False

    async def aiter_raw(self) -> AsyncGenerator[bytes, None]:
        """The body's bytes as sent (the chunked encoding undone, nothing decompressed), each
        piece everything that arrived since the last."""
        conn = self._conn
        while True:
            if conn.body:
                yield conn.take()
            elif conn.done:
                break
            elif conn.error is not None:
                raise conn.error
            else:
                await conn.wait(self._pool.timeout)
        self._end(reuse=True)

    async def aclose(self) -> None:
        self._end(reuse=False)

    def _end(self, reuse: bool) -> None:
        if not self._ended:
            self._ended = True
            self._pool.release(self._conn, reuse and self._conn.reusable())


class Upstream:
    """Connections to the upstream, kept for reuse, bounded."""

    def __init__(self, timeout: float, pool_wait: float, most: int, idle: int) -> None:
        self.timeout, self.pool_wait, self.most, self.idle = timeout, pool_wait, most, idle
        self._kept: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open = 0
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._tls: ssl.SSLContext | None = None
        import httpx

        self.agent = f"python-httpx/{httpx.__version__}"   # the user-agent httpx sent

    async def send(self, url: httpx.URL, headers: dict[str, str], body: bytes) -> Answer:
        """POST ``body`` to ``url``; the response once its head is in."""
        scheme, host = url.scheme, url.host
        port = url.port or (443 if scheme == "https" else 80)
        head = request_head(url, headers, len(body), self.agent)
        conn = await self._connection((scheme, host, port))
        conn.busy = True
        try:
            assert conn.transport is not None
            conn.transport.write(head + body if len(body) < 65536 else head)
            if len(body) >= 65536:
                conn.transport.write(body)
            while not conn.head:
                if conn.error is not None:
                    raise conn.error
                await conn.wait(self.timeout)
        except BaseException:
            self.release(conn, False)
            raise
        return Answer(self, conn)

    async def _connection(self, key: tuple[str, str, int]) -> _Connection:
        loop = asyncio.get_running_loop()
        kept = self._kept.setdefault(key, [])
        deadline = loop.time() + self.pool_wait
        while True:
            while kept:
                conn = kept.pop()
                if not conn.closed and conn.loop is loop:
                    conn._start()
                    return conn
                self._closed(conn)
            if self._open < self.most:
                self._open += 1
                try:
                    return await self._connect(loop, key)
                except BaseException:
                    self._open -= 1
                    self._wake_one()
                    raise
            if not self._drop_other_idle():
                left = deadline - loop.time()
                if left <= 0:
                    raise PoolTimeout("every connection is busy")
                waiter = loop.create_future()
                self._waiters.append(waiter)
                try:
                    await asyncio.wait_for(waiter, left)
                except asyncio.TimeoutError:
                    raise PoolTimeout("every connection is busy") from None
                finally:
                    if waiter in self._waiters:
                        self._waiters.remove(waiter)

    def _drop_other_idle(self) -> bool:
        """At the limit, an idle connection to another address makes room (True)."""
        for conns in self._kept.values():
            if conns:
                self._closed(conns.pop(0), close=True)
                return True
        return False

    async def _connect(self, loop: asyncio.AbstractEventLoop, key: tuple[str, str, int]) -> _Connection:
        scheme, host, port = key
        tls = None
        if scheme == "https":
            if self._tls is None:
                import httpx

                self._tls = httpx.create_ssl_context()   # as the httpx client verified it
                self._tls.set_alpn_protocols(["http/1.1"])
            tls = self._tls
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: _Connection(loop, key), host, port, ssl=tls,
                                       server_hostname=host if tls else None), self.timeout)
        except asyncio.TimeoutError:
            raise ConnectTimeout(f"could not connect within {self.timeout:g} s") from None
        except (OSError, ValueError) as exc:    # refused, unreachable, a name that does not resolve, TLS
            raise ConnectError(str(exc)) from None
        return conn

    def release(self, conn: _Connection, reuse: bool) -> None:
        """``conn`` is done with one exchange: kept for the next, or closed."""
        conn.busy = False
        if reuse and not conn.closed and sum(len(c) for c in self._kept.values()) < self.idle:
            self._kept.setdefault(conn.key, []).append(conn)
            self._wake_one()
            return
        self._closed(conn, close=True)

    def _closed(self, conn: _Connection, close: bool = False) -> None:
        if close:
            conn.close()
        self._open -= 1
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


def request_head(url: httpx.URL, headers: dict[str, str], length: int, agent: str) -> bytes:
    """The request line and headers, as httpx wrote them for this request."""
    fields = {"accept": "*/*", "connection": "keep-alive", "user-agent": agent}
    fields.update(headers)
    if url.username or url.password:       # credentials in the upstream URL, as httpx sent them
        pair = f"{url.username}:{url.password}".encode()
        fields["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    fields["content-length"] = str(length)
    lines = [b"POST " + url.raw_path + b" HTTP/1.1", b"host: " + url.netloc]
    lines += [f"{name}: {value}".encode("latin-1") for name, value in fields.items()]
    return b"\r\n".join(lines) + b"\r\n\r\n"


