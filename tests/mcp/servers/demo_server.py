"""A small MCP server for agentdbg's tests, written with the SDK's own ``MCPServer`` API.

Run over stdio: ``python demo_server.py``; over Streamable HTTP on 127.0.0.1:
``python demo_server.py --http`` (binds a free port and prints ``PORT <n>`` on stdout).

Tools: read-only ones (``lookup_city``, ``city_weather`` with structured output, ``slow``),
a destructive one (``delete_note``), an additive one (``append_note``), one with no
annotations (``untagged``), one that raises (``fail``), one that answers with a JSON-RPC
error (``reject``), one with mixed content (``mixed``), one with no content (``empty``),
and ``auth_check`` (is the secret the client was given the one this server expects?).

Behaviour chosen by environment variables:
  AGENTDBG_MCP_TEST_MODE   ""                 normal
                           hang               answers nothing (alive, reading its input)
                           hang_before_start  sleeps before serving; ignores its input closing
                           exit_on_start      prints an error on stderr and exits 3
                           crash              any tools/call makes the process exit mid-call
                           v2                 a different tool list (the list changed between runs)
                           bad_list           tools/list answers a tool with no inputSchema
                           with_child         starts a helper process (in its process group) that outlives it
  AGENTDBG_MCP_TEST_PAGE_SIZE    tools per tools/list page (0: one page)
  AGENTDBG_MCP_TEST_EXTRA_TOOLS  how many extra read-only tools ``extra_NN`` to add
  AGENTDBG_MCP_TEST_EVENTS       file to append what the server saw (JSON lines)
  AGENTDBG_MCP_TEST_SECRET       the secret ``auth_check`` expects (env var or Authorization header)
  AGENTDBG_MCP_TEST_LONG_NAME    1: add a read-only tool whose name is 70 characters long
  AGENTDBG_MCP_TEST_LEAKY        1: add ``leak_env``, a careless tool that prints an environment variable
  AGENTDBG_MCP_TEST_TAG          not read: lets a test find this process (and its children) in /proc
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Annotated, Any

MODE = os.environ.get("AGENTDBG_MCP_TEST_MODE", "")

if MODE == "exit_on_start":
    print("demo server: cannot open its database (on purpose)", file=sys.stderr, flush=True)
    sys.exit(3)
if MODE == "hang_before_start":
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL stops it
    print("demo server: stuck before serving (on purpose)", file=sys.stderr, flush=True)
    while True:
        time.sleep(60)

if MODE == "with_child":  # a helper that outlives the server unless its group is stopped
    import subprocess

    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    with open(os.environ["AGENTDBG_MCP_TEST_EVENTS"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"event": "helper", "pid": helper.pid}) + "\n")

import logging  # noqa: E402

# plain logging, set before MCPServer's: its rich tracebacks take ~1 s per failing call
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

import anyio  # noqa: E402
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import (  # noqa: E402
    INVALID_PARAMS,
    ImageContent,
    ListToolsResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field  # noqa: E402

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
CITIES = {"paris": "France", "tokyo": "Japan", "lima": "Peru"}


def event(kind: str, **data: Any) -> None:
    path = os.environ.get("AGENTDBG_MCP_TEST_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": kind, "pid": os.getpid(), **data}) + "\n")


class Weather(BaseModel):
    city: str
    celsius: float
    sky: str


server = MCPServer("agentdbg-demo", version="1.2.3" if MODE != "v2" else "2.0.0")


@server.tool(annotations=READ_ONLY, structured_output=False,
             description="Look up the country of a city. Use when the user names a city.")
def lookup_city(city: Annotated[str, Field(description="City name, e.g. Paris")]) -> str:
    country = CITIES.get(city.lower())
    if country is None:
        raise ValueError(f"unknown city {city!r}")
    return f"{city} is in {country}"


@server.tool(annotations=READ_ONLY, description="Current weather of a city, as structured data.")
def city_weather(city: str) -> Weather:
    return Weather(city=city, celsius=21.5, sky="clear")


@server.tool(annotations=READ_ONLY, structured_output=False, description="Wait, then answer.")
async def slow(seconds: float) -> str:
    event("slow_started", seconds=seconds)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        event("slow_cancelled")
        raise
    event("slow_finished")
    return f"waited {seconds}s"


@server.tool(annotations=ADDITIVE, structured_output=False, description="Append a line to the notes.")
def append_note(text: str) -> str:
    event("append_note", text=text)
    return "appended"


if MODE != "v2":
    @server.tool(annotations=DESTRUCTIVE, structured_output=False, description="Delete a note for ever.")
    def delete_note(note_id: str) -> str:
        event("delete_note", note_id=note_id)
        return f"deleted {note_id}"
else:
    @server.tool(annotations=ADDITIVE, structured_output=False, description="Archive a note.")
    def archive_note(note_id: str, reason: str = "") -> str:
        return f"archived {note_id}"


@server.tool(structured_output=False, description="A tool whose author gave no annotations.")
def untagged(x: int) -> str:
    return str(x * 2)


@server.tool(annotations=READ_ONLY, structured_output=False, description="Always fails.")
def fail(message: str = "boom") -> str:
    raise RuntimeError(message)


@server.tool(annotations=READ_ONLY, structured_output=False, description="Answers with a JSON-RPC error.")
def reject(reason: str = "bad input") -> str:
    raise MCPError(code=INVALID_PARAMS, message=reason, data={"hint": "see the docs"})


@server.tool(annotations=READ_ONLY, structured_output=False, description="Text, an image, more text.")
def mixed() -> list[TextContent | ImageContent]:
    return [TextContent(type="text", text="first part"),
            ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
            TextContent(type="text", text="second part")]


@server.tool(annotations=READ_ONLY, structured_output=False, description="Returns no content at all.")
def empty() -> list[TextContent]:
    return []


@server.tool(annotations=READ_ONLY, structured_output=False,
             description="Says whether this server received the secret it expects.")
def auth_check(ctx: Context) -> str:
    expected = os.environ.get("AGENTDBG_MCP_TEST_SECRET", "")
    headers = ctx.headers or {}
    got_header = headers.get("authorization") == f"Bearer {expected}"
    got_env = os.environ.get("DEMO_TOKEN") == expected
    return json.dumps({"header": bool(expected) and got_header, "env": bool(expected) and got_env})


def make_extra(i: int):
    def extra(n: int = 0) -> str:
        return f"extra {i}: {n}"
    return extra


for i in range(int(os.environ.get("AGENTDBG_MCP_TEST_EXTRA_TOOLS") or 0)):
    server.add_tool(make_extra(i), name=f"extra_{i:02d}", annotations=READ_ONLY, structured_output=False,
                    description=f"Extra tool number {i}.")


if os.environ.get("AGENTDBG_MCP_TEST_LONG_NAME") == "1":
    server.add_tool(make_extra(99), name="lookup_" + "x" * 63, annotations=READ_ONLY,
                    structured_output=False, description="A tool whose name is too long for the API.")

if os.environ.get("AGENTDBG_MCP_TEST_LEAKY") == "1":
    @server.tool(annotations=READ_ONLY, structured_output=False,
                 description="Prints one of its environment variables (a careless tool).")
    def leak_env(name: str) -> str:
        return os.environ.get(name, "")


async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if MODE == "hang":
        await anyio.sleep_forever()
    if ctx.method == "notifications/cancelled":
        event("cancel_notification", params=dict(ctx.params or {}))
    if ctx.method == "tools/call":
        name = (ctx.params or {}).get("name")
        event("call", name=name)
        if MODE == "crash":
            print(f"demo server: crashing during {name} (on purpose)", file=sys.stderr, flush=True)
            os._exit(3)
    if ctx.method == "tools/list":
        return await list_page((ctx.params or {}).get("cursor"))
    return await call_next(ctx)


async def list_page(cursor: Any) -> HandlerResult:
    tools = await server.list_tools()
    if MODE == "bad_list":
        raw = ListToolsResult(tools=tools).model_dump(by_alias=True, mode="json", exclude_none=True)
        del raw["tools"][0]["inputSchema"]
        return raw
    size = int(os.environ.get("AGENTDBG_MCP_TEST_PAGE_SIZE") or 0) or len(tools)
    start = int(cursor or 0)
    if not 0 <= start <= len(tools):
        raise MCPError(code=INVALID_PARAMS, message=f"bad cursor {cursor!r}")
    end = start + size
    event("list_page", start=start)
    return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


server.middleware.append(middleware)


def serve_http() -> None:
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog until uvicorn accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        server.run("stdio")
