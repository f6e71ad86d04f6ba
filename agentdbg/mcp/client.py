"""``McpClient``: a synchronous, thread-safe handle on one MCP server.

agentdbg's executor is synchronous and runs read-only calls in threads, so the async SDK
runs on its own event loop in a background thread (an anyio blocking portal); every
method here blocks the calling thread only. Importing this module does not import the SDK.

Lifetime: ``start()`` spawns (stdio, in its own process group) or connects (Streamable
HTTP) and initialises within ``init_timeout``; ``close()`` asks the server to stop, then
terminates and kills its process group if it lingers. ``close()`` belongs in a ``finally``;
an interrupted caller (Ctrl-C, SIGTERM as ``KeyboardInterrupt``) that still reaches it, or
interpreter exit (``atexit``), leaves no server process behind.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import threading
import time
from collections.abc import Mapping
from typing import Any

from agentdbg.mcp import redact
from agentdbg.mcp.config import McpServerConfig
from agentdbg.mcp.errors import McpServerError, one_line
from agentdbg.mcp.exchange import Exchange, MessageLog
from agentdbg.mcp.process import StderrTap, process_running, stop_group
from agentdbg.mcp.results import McpCallResult, failure
from agentdbg.mcp.tools import McpToolDef, select_tools

CLOSE_GRACE = 2.0       # seconds a server gets to exit after its input closes
_LIVE: set[McpClient] = set()   # started and not closed (strong refs: a forgotten client is closed at exit)
_LIVE_LOCK = threading.Lock()


class McpClient:
    def __init__(self, config: McpServerConfig, *, environ: Mapping[str, str] | None = None):
        self.config = config
        self.log = MessageLog()
        self._environ = environ
        self._conn: Any = None
        self._portal_cm: Any = None
        self._portal: Any = None
        self._serve: cf.Future | None = None
        self._ready: cf.Future = cf.Future()
        self._stderr: StderrTap | None = None
        self._inflight: set[cf.Future] = set()
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        self._state = "new"          # new | running | closed

    def __enter__(self) -> McpClient:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- facts --------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.config.name

    @property
    def pid(self) -> int | None:
        """The stdio server's process id (its process group id too); None over HTTP."""
        return self._conn.pid if self._conn is not None else None

    @property
    def server_info(self) -> dict | None:
        """``name``/``version`` (and ``title`` …) the server gave when initialised."""
        return self._conn.server_info if self._conn is not None else None

    @property
    def protocol_version(self) -> str | None:
        return self._conn.protocol_version if self._conn is not None else None

    def identity(self) -> dict:
        """What a transcript records about the server: how it was started and who answered."""
        return {**self.config.public_dict(), "server_info": self.server_info,
                "protocol_version": self.protocol_version}

    def stderr_text(self, max_chars: int = 4000) -> str:
        return redact.redact(self._stderr.text(max_chars)) if self._stderr is not None else ""

    def message_log(self) -> list[dict]:
        """The last JSON-RPC messages exchanged with this server (bounded)."""
        return self.log.recent()

    # -- lifetime -------------------------------------------------------------
    def start(self) -> McpClient:
        with self._lock:
            if self._state != "new":
                raise RuntimeError(f"MCP client {self.name!r} was already started")
            self._state = "running"
        cfg = self.config
        # a missing ${VAR} fails here, before anything is spawned
        args = cfg.resolved_args(self._environ) if cfg.transport == "stdio" else []
        env = cfg.resolved_env(self._environ) if cfg.transport == "stdio" else {}
        url = cfg.resolved_url(self._environ) if cfg.transport == "http" else ""
        headers = cfg.resolved_headers(self._environ) if cfg.transport == "http" else {}
        self._secrets = cfg.secret_values(self._environ)
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            self._start(args=args, env=env, url=url, headers=headers)
        except BaseException:
            self.close(grace=0)
            raise
        return self

    def _start(self, **resolved: Any) -> None:
        import anyio.from_thread

        from agentdbg.mcp._connection import Connection

        redact.register(self._secrets)  # after the SDK's import: its loggers exist now
        if self.config.transport == "stdio":
            self._stderr = StderrTap()
        self._conn = Connection(self.config, self.log, self._stderr, **resolved)
        self._portal_cm = anyio.from_thread.start_blocking_portal(name=f"agentdbg-mcp-{self.name}")
        self._portal = self._portal_cm.__enter__()
        self._serve = self._portal.start_task_soon(self._conn.serve, self._ready)
        done, _ = cf.wait([self._ready, self._serve], timeout=self.config.init_timeout,
                          return_when=cf.FIRST_COMPLETED)
        if self._ready in done:
            return
        if self._serve in done:
            raise self._start_error(self._serve.exception())
        self._kill()  # never answered: no grace
        raise self._error(f"did not finish initialising within {self.config.init_timeout:g}s "
                          f"({self.config.describe()})")

    def close(self, grace: float = CLOSE_GRACE) -> None:
        """Stop the server (idempotent). Safe to call from any thread, also after a failure."""
        with self._lock:
            if self._state == "closed":
                return
            self._state = "closed"
        try:
            self.cancel_all()
            self._request_stop(grace)
        finally:  # also when interrupted while closing
            self._kill()
            self._stop_portal()
            if self._stderr is not None:
                self._stderr.stop()
            with _LIVE_LOCK:
                _LIVE.discard(self)

    def _request_stop(self, grace: float) -> None:
        """Let the SDK shut the session down (stdio: close its input, wait, then kill)."""
        if self._portal is None or self._serve is None or self._serve.done():
            return
        if not self._ready.done():
            self._serve.cancel()  # never initialised: nothing to stop gently
            return
        try:
            self._portal.call(self._conn.stop)
            self._serve.result(timeout=grace)
        except cf.TimeoutError:
            self._kill()  # the SDK notices the exit and finishes at once
            self._serve.cancel()
        except Exception:  # noqa: BLE001 - it ended with an error (or the loop is gone)
            pass

    def _kill(self) -> None:
        """Terminate, then kill, whatever is left of the server's process group."""
        if self.pid is not None:
            stop_group(self.pid, grace=0.5)

    def _stop_portal(self) -> None:
        portal, cm = self._portal, self._portal_cm
        self._portal = self._portal_cm = None
        if portal is None:
            return
        try:
            portal.call(portal.stop, True)  # cancel what is left (the SDK's shutdown is shielded)
        except RuntimeError:
            pass  # the loop has already ended
        finally:
            cm.__exit__(None, None, None)

    # -- requests ---------------------------------------------------------------
    def list_tools(self) -> list[dict]:
        """The server's whole tool list (every page), as JSON dicts in wire spelling."""
        from agentdbg.mcp._connection import ServerGone

        future = self._submit(self._running_portal(), self._conn.list_tools)
        if future is None:
            raise self._error("is not running")
        try:
            return future.result(timeout=self.config.init_timeout)
        except cf.TimeoutError:
            future.cancel()
            raise self._error(f"tools/list got no answer within {self.config.init_timeout:g}s") from None
        except ServerGone as exc:
            raise self._error(f"stopped while listing its tools ({exc})") from None
        except (KeyboardInterrupt, cf.CancelledError):
            future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - a JSON-RPC error, a tool list that fails validation …
            raise self._error(f"invalid tool list: {_describe(exc)}", exc) from None

    def tools(self) -> list[McpToolDef]:
        """``list_tools()`` with this server's include/exclude/prefix/policy applied."""
        cfg = self.config
        return select_tools(self.list_tools(), server=cfg.name, include=cfg.include,
                            exclude=cfg.exclude, prefix=cfg.prefix, unhinted=cfg.unhinted)

    def call_tool(self, name: str, arguments: dict | None = None,
                  timeout: float | None = None) -> McpCallResult:
        """Call the server's tool ``name`` (its own name, without prefix). Never raises for a
        failure of the call: that is a result with ``ok=False``. Ctrl-C cancels the call on
        the server and propagates."""
        limit = self.config.timeout if timeout is None else timeout
        exchange = Exchange()
        started = time.monotonic()
        future = self._submit(self._running_portal(raise_=False), self._conn.call_tool,
                              name, dict(arguments or {}), limit, exchange)
        if future is None:
            return failure("internal_error", f"the MCP server {self.name!r} is not running")
        with self._lock:
            self._inflight.add(future)
        try:
            result = future.result(timeout=limit + 10)  # the task times itself out; this is a backstop
        except cf.CancelledError:
            result = failure("cancelled", f"the call of {name!r} was cancelled by the user")
        except cf.TimeoutError:
            future.cancel()
            result = failure("timeout", f"the tool {name!r} did not answer within {limit:g}s",
                             retryable=True)
        except BaseException:
            future.cancel()  # the SDK sends notifications/cancelled for it
            raise
        finally:
            with self._lock:
                self._inflight.discard(future)
        if not result.ok:  # an error may quote a URL or a header (tool output is left as it is)
            result.message = redact.redact(result.message or "")
            result.detail = redact.redact(result.detail) if result.detail else None
        result.duration_ms = round((time.monotonic() - started) * 1000, 3)
        result.exchange, result.exchange_dropped = exchange.messages, exchange.dropped
        return result

    def cancel_all(self) -> int:
        """Cancel every call in flight (the server is sent the protocol's cancellation)."""
        with self._lock:
            pending = list(self._inflight)
        return sum(1 for f in pending if f.cancel() or f.cancelled())

    # -- helpers ------------------------------------------------------------------
    def _running_portal(self, raise_: bool = True) -> Any:
        if self._state == "new":
            raise RuntimeError(f"MCP client {self.name!r} is not started")
        portal = self._portal if self._state == "running" else None
        if portal is None and raise_:
            raise self._error("is not running")
        return portal

    @staticmethod
    def _submit(portal: Any, func: Any, *args: Any) -> cf.Future | None:
        """Run ``func`` on the client's loop; None when the loop has stopped (a close won a race)."""
        if portal is None:
            return None
        try:
            return portal.start_task_soon(func, *args)
        except RuntimeError:
            return None

    def _error(self, message: str, exc: BaseException | None = None,
               last_stderr_line: bool = False) -> McpServerError:
        if self._stderr is not None and (self.pid is None or not process_running(self.pid)):
            self._stderr.stop()  # it has exited (or never started): read to the end of what it wrote
        stderr = self.stderr_text()
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "")
        if last_stderr_line and last:
            message += f"; its stderr ends: {one_line(last, 200)}"
        detail = _describe(exc, full=True) if exc is not None else None
        return McpServerError(self.name, redact.redact(message), stderr=stderr,
                              detail=redact.redact(detail) if detail else None)

    def _start_error(self, exc: BaseException | None) -> McpServerError:
        from agentdbg.mcp._connection import ServerGone

        leaf = _leaf(exc)
        if isinstance(leaf, OSError) and self.config.transport == "stdio":
            reason = leaf.strerror or str(leaf)
            return self._error(f"cannot start {self.config.command!r}: {reason}", exc)
        if getattr(leaf, "code", None) == -32000 or isinstance(leaf, ServerGone):
            return self._error("exited before it finished initialising", exc, last_stderr_line=True)
        if self.config.transport == "http" and _is_connect_error(leaf):
            return self._error(f"cannot connect to {self.config.public_url()}: {_describe(leaf)}", exc)
        return self._error(f"failed to initialise: {_describe(leaf)}", exc, last_stderr_line=True)


def _leaf(exc: BaseException | None) -> BaseException | None:
    """The first real error inside (possibly nested) exception groups."""
    while exc is not None and hasattr(exc, "exceptions") and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _is_connect_error(exc: BaseException | None) -> bool:
    names = {c.__name__ for c in type(exc).__mro__} if exc is not None else set()
    return bool(names & {"ConnectError", "ConnectTimeout", "TransportError", "ConnectionError"})


def _describe(exc: BaseException | None, full: bool = False) -> str:
    if exc is None:
        return ""
    leaf = _leaf(exc) or exc
    errors = getattr(leaf, "errors", None)
    if not full and callable(errors) and type(leaf).__name__ == "ValidationError":
        found = errors()  # pydantic: say where, not the whole dump
        first = found[0] if found else {}
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ()))
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return one_line(f"{where.lstrip('.')}: {first.get('msg', 'invalid')}{more}", 240)
    text = f"{type(leaf).__name__}: {leaf}"
    return text if full else one_line(text, 240)


@atexit.register
def _close_all() -> None:
    """Interpreter exit with servers still open: stop them (a missed ``close()``)."""
    with _LIVE_LOCK:
        clients = list(_LIVE)
    for client in clients:
        client.close(grace=0.5)
