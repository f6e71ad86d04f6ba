"""Handlers used by the tests' own tools files."""

import asyncio
import threading
import time

from agentdbg.tool_api import ToolError

CALLS: list = []
LOCK = threading.Lock()


def echo(**kwargs):
    return {"echo": kwargs}


def sleepy(ms: int = 200, tag: str = ""):
    start = time.perf_counter()
    time.sleep(ms / 1000)
    with LOCK:
        CALLS.append((tag, start, time.perf_counter()))
    return {"slept_ms": ms, "tag": tag}


def hang(**kwargs):
    time.sleep(30)
    return {"late": True}


def boom(**kwargs):
    raise KeyError("SELECT * FROM secret_table WHERE host='db.internal' /home/alice/app.py")


def nothing(**kwargs):
    return None


def not_found(key: str):
    raise ToolError("not_found", f"no record {key}")


def unencodable(**kwargs):
    return {"when": object()}


def big(n: int = 10000):
    return {"rows": ["x" * 10] * (n // 10)}


async def async_echo(text: str):
    await asyncio.sleep(0.01)
    return {"async": text}


def counter(**kwargs):
    return {"same": True}
