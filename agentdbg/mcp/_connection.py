"""The async side of ``McpClient``: one SDK ``Client`` living on a private event loop.

Only this module imports the MCP SDK (``mcp``), and only ``McpClient.start()`` imports it.
``serve()`` owns the SDK client for its whole life (anyio wants a context entered and left
by one task); calls run as other tasks on the same loop and share the session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError

from agentdbg import __version__
from agentdbg.mcp import results
from agentdbg.mcp.config import McpServerConfig
from agentdbg.mcp.exchange import Exchange, LoggedReadStream, LoggedWriteStream, MessageLog, current_exchange
from agentdbg.mcp.process import StderrTap, child_with_stderr, process_running

MAX_PAGES = 100    # a tools/list that has not ended after this many pages is broken


class ServerGone(Exception):
    """The connection to the server is closed (the process exited, or HTTP went away)."""


class Connection:
    def __init__(self, config: McpServerConfig, log: MessageLog, stderr: StderrTap | None, *,
                 args: list[str], env: dict[str, str], url: str, headers: dict[str, str]):
        self.config, self.log, self.stderr = config, log, stderr
        self._args, self._env, self._url, self._headers = args, env, url, headers
        self.client: Any = None
        self.pid: int | None = None
        self.server_info: dict | None = None      # kept after the session ends
        self.protocol_version: str | None = None
        self._stop: anyio.Event | None = None
        self._calls = 0     # calls running on the loop now
        self._settled = False   # the end of the connection has been waited for

    # -- lifetime -----------------------------------------------------------
    async def serve(self, ready: Future) -> None:
        """Connect and initialise, report on ``ready``, then hold the session until ``stop()``."""
        self._stop = anyio.Event()
        client = Client(self._transport(), cache=None,
                        client_info=Implementation(name="agentdbg", version=__version__))
        async with client:
            self.client = client
            info = client.server_info
            self.server_info = info.model_dump(mode="json", exclude_none=True) if info else None
            self.protocol_version = client.protocol_version
            ready.set_result(None)
            await self._stop.wait()
            # cancelled calls send notifications/cancelled as they unwind: let them out first
            with anyio.move_on_after(1.0):
                while self._calls:
                    await anyio.sleep(0.01)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def _transport(self) -> Any:
        return self._stdio() if self.config.transport == "stdio" else self._http()

    @asynccontextmanager
    async def _stdio(self) -> AsyncIterator[tuple[Any, Any]]:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=self.config.resolved_command(), args=self._args,
                                       env=self._env, cwd=self.config.resolved_cwd())
        assert self.stderr is not None and self.stderr.writer is not None
        try:
            async with stdio_client(params, errlog=self.stderr.writer) as (read, write):
                self.stderr.close_writer()
                self.pid = child_with_stderr(self.stderr.inode)
                yield LoggedReadStream(read, self.log), LoggedWriteStream(write, self.log)
        finally:
            self.stderr.close_writer()

    @asynccontextmanager
    async def _http(self) -> AsyncIterator[tuple[Any, Any]]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # the SDK's recommended timeouts: 30 s to connect/write, 300 s to read a stream
        http = httpx2.AsyncClient(headers=self._headers, timeout=httpx2.Timeout(30.0, read=300.0))
        async with http, streamable_http_client(self._url, http_client=http) as (read, write):
            yield LoggedReadStream(read, self.log), LoggedWriteStream(write, self.log)

    # -- requests -------------------------------------------------------------
    async def list_tools(self) -> list[dict]:
        """Every page of ``tools/list``, as wire dicts; raises ``ServerGone`` / the SDK's errors."""
        tools: list[dict] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                page = await self.client.list_tools(cursor=cursor, cache_mode="bypass")
            except MCPError as exc:
                await self._raise_if_gone(exc)
                raise
            tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise ValueError(f"tools/list did not end after {MAX_PAGES} pages (the server keeps "
                         "answering with a next cursor)")

    async def call_tool(self, name: str, arguments: dict, timeout: float,
                        exchange: Exchange) -> results.McpCallResult:
        token = current_exchange.set(exchange)
        self._calls += 1
        try:
            with anyio.fail_after(timeout):
                answer = await self.client.call_tool(name, arguments)
            return results.from_call_result(answer)
        except TimeoutError:
            return results.failure("timeout", f"the tool {name!r} did not answer within {timeout:g}s",
                                   f"no answer from MCP server {self.config.name!r} after {timeout:g}s; "
                                   "agentdbg cancelled the request", retryable=True)
        except MCPError as exc:
            if self._gone(exc):
                return await self._gone_result(name)
            return results.jsonrpc_error(self.config.name, name, exc.code, exc.message, exc.data)
        except ValidationError as exc:
            return results.failure("internal_error", f"the MCP server {self.config.name!r} answered "
                                   f"the call of {name!r} with an invalid result", str(exc))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            return await self._gone_result(name, f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - e.g. structured content that breaks its outputSchema
            return results.failure("internal_error", f"the MCP server {self.config.name!r} answered "
                                   f"the call of {name!r} with a result agentdbg could not use",
                                   f"{type(exc).__name__}: {exc}")
        finally:
            self._calls -= 1
            current_exchange.reset(token)
            self.log.forget(exchange)

    # -- the connection ended ---------------------------------------------------
    def _gone(self, exc: MCPError) -> bool:
        return exc.code == CONNECTION_CLOSED and exc.message == "Connection closed"

    async def _raise_if_gone(self, exc: MCPError) -> None:
        if self._gone(exc):
            await self._settle()
            raise ServerGone(self.gone_reason()) from exc

    async def _settle(self, limit: float = 1.0) -> None:
        """The connection closed: give a stdio server's process a moment to finish exiting and its
        last stderr lines to arrive, so what is said about it is the whole story."""
        if self.config.transport != "stdio" or self.pid is None or self._settled:
            return
        self._settled = True    # once: later calls to the gone server answer at once
        with anyio.move_on_after(limit):
            while process_running(self.pid):
                await anyio.sleep(0.02)
        if self.stderr is not None and not process_running(self.pid):
            await anyio.to_thread.run_sync(self.stderr.wait_eof, 0.5)

    def gone_reason(self) -> str:
        if self.config.transport == "stdio" and self.pid is not None and not process_running(self.pid):
            return "its process exited"
        return "it closed the connection"

    async def _gone_result(self, name: str, cause: str = "") -> results.McpCallResult:
        await self._settle()
        reason = self.gone_reason()
        stderr = self.stderr.text() if self.stderr is not None else ""
        detail = f"MCP server {self.config.name!r} ({self.config.describe()}): {reason}"
        if cause:
            detail += f"; {cause}"
        if stderr:
            detail += f"\nserver stderr (last lines):\n{stderr}"
        return results.failure("internal_error", f"the tool {name!r} failed: its MCP server "
                               f"{self.config.name!r} has stopped ({reason})", detail)
