"""Proxy overhead: what `agentdbg proxy` adds to each request of the user's loop.

`agentdbg serve --offline` answers; the same requests go to it directly and through
`agentdbg proxy` (each in its own process), on histories of 1, 100 and 1,001 messages,
plain and streaming, in pairs (one direct, one proxied: "added" is the median of the pairs'
differences), then 200 concurrent requests with an 11-message history. The proxy
checks, records and prints every request, off the event loop (in its analyst process). Beside
each wall-clock figure, the relay's CPU time per request (its process, all its threads, the
analyst not included; from /proc on Linux): it does not depend on how loaded the machine is.

Then the first request of a session: a fresh proxy each round (seven rounds), and the
first request it relays (an Anthropic Messages body of 49 KB, as Claude Code's first) timed
against the same request sent directly (its median over six).

Targets: added median latency <= 5 ms at every size; streaming time to first byte
added <= 5 ms; 200 concurrent within 1.3x of direct, no failed request; the first request
of a session <= 10 ms added.

    python bench/proxy_overhead.py
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import httpx
from _util import machine

REPEAT = 40
REPEAT_LARGE = 16        # pairs at 1,001 messages (serve takes 0.1-0.2 s on each)
CONCURRENT = 200
BURSTS = 3              # bursts each way, side by side
BURST_HISTORY = 11      # messages in each of the concurrent requests
SIZES = (1, 100, 1001)


def cpu_ms(pid: int) -> float:
    """CPU milliseconds process ``pid`` has run so far, every thread counted (Linux
    ``schedstat``, in ns); NaN elsewhere."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                total += int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")
    return total / 1e6


def history(n: int) -> list[dict]:
    """A valid loop history of ``n`` messages: a question, then call/result pairs."""
    messages: list[dict] = [{"role": "user", "content": "北京和上海今天哪个更热?"}]
    k = 0
    while len(messages) + 2 <= n:
        k += 1
        call = {"id": f"call_h{k}", "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": f"城市{k}"})}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_h{k}", "content": '{"t": 20}'})
    while len(messages) < n:
        messages.append({"role": "user", "content": "继续"})
    return messages


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Use when the user asks about the weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def start(args: list[str], log) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", *args], stdout=subprocess.PIPE,
                            stderr=log, text=True, env={**os.environ, "NO_COLOR": "1"})
    for line in proc.stdout:  # type: ignore[union-attr]
        m = re.search(r"(http://127\.0\.0\.1:\d+/v1)", line)
        if m:
            # keep draining its output so the process never blocks on a full pipe
            import threading

            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
            return proc, m.group(1)
    raise SystemExit(f"agentdbg {args[0]} did not start")


def timed(client: httpx.Client, url: str, body: dict) -> tuple[float, float]:
    """(total seconds, seconds to the first body byte)."""
    start = time.perf_counter()
    first = None
    with client.stream("POST", url + "/chat/completions", json=body) as resp:
        for _ in resp.iter_raw():
            if first is None:
                first = time.perf_counter() - start
        if resp.status_code != 200:
            raise SystemExit(f"{url}: HTTP {resp.status_code}")
    return time.perf_counter() - start, first or 0.0


NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]  # as the openai client agentdbg uses


def paired(direct: str, proxied: str, body: dict, pid: int) -> tuple[float, float, float, float, float]:
    """The same request sent directly and through the proxy, one after the other, ``REPEAT``
    times: (median seconds direct, through the proxy, median of each pair's difference, the same
    for the first byte, the relay's CPU ms per request). Pairs taken side by side, so a change in
    the machine's load moves both halves of a pair: the difference of medians of two separate
    runs moved by tens of ms from one run to the next."""
    with httpx.Client(timeout=60, transport=httpx.HTTPTransport(socket_options=NODELAY)) as client:
        for _ in range(3):  # warm up the connections and the servers
            timed(client, direct, body)
            timed(client, proxied, body)
        cpu = cpu_ms(pid)
        pairs = []
        rounds = REPEAT if len(body["messages"]) < 1000 else REPEAT_LARGE
        for k in range(rounds):
            first, second = (direct, proxied) if k % 2 else (proxied, direct)
            a, b = timed(client, first, body), timed(client, second, body)
            pairs.append((a, b) if first == direct else (b, a))
        cpu = (cpu_ms(pid) - cpu) / rounds
    return (statistics.median(d[0] for d, _ in pairs), statistics.median(p[0] for _, p in pairs),
            statistics.median(p[0] - d[0] for d, p in pairs),
            statistics.median(p[1] - d[1] for d, p in pairs), cpu)


async def burst(url: str, body: dict) -> tuple[float, int]:
    transport = httpx.AsyncHTTPTransport(socket_options=NODELAY,
                                         limits=httpx.Limits(max_connections=CONCURRENT))
    async with httpx.AsyncClient(timeout=120, transport=transport) as c:
        start = time.perf_counter()
        results = await asyncio.gather(*[c.post(url + "/chat/completions", json=body)
                                         for _ in range(CONCURRENT)], return_exceptions=True)
        took = time.perf_counter() - start
    failed = sum(1 for r in results if not isinstance(r, httpx.Response) or r.status_code != 200)
    return took, failed


FIRST_ROUNDS = 7


def claude_code_body(kb: int = 49) -> bytes:
    """An Anthropic Messages request of about ``kb`` KB, the size of Claude Code's first."""
    from formats_overhead import FORMATS

    _, make = FORMATS["anthropic"]
    n = 2
    while len(raw := json.dumps(make(n, False)).encode()) < kb * 1000:
        n += 2
    return raw


def first_requests(direct: str, tmp: str, log) -> list[tuple[float, float, float]]:
    """What the first request of a fresh proxy adds, one (ms added, relay CPU ms of the first
    request, relay CPU ms of the second) per round."""
    from formats_overhead import KEY

    raw = claude_code_body()
    headers = {**KEY, "content-type": "application/json"}
    rounds = []
    for k in range(FIRST_ROUNDS):
        proxy, proxied = start(["proxy", "--upstream", direct, "--port", "0", "--save",
                                os.path.join(tmp, f"first{k}")], log)
        try:
            with httpx.Client(timeout=60, transport=httpx.HTTPTransport(socket_options=NODELAY)) as c:
                def once(url: str) -> float:
                    t = time.perf_counter()
                    if c.post(url + "/messages", content=raw, headers=headers).status_code != 200:
                        raise SystemExit(f"{url}: the first request failed")
                    return time.perf_counter() - t
                before = [once(direct) for _ in range(3)]
                cpu = [cpu_ms(proxy.pid)]
                first = once(proxied)
                cpu.append(cpu_ms(proxy.pid))
                once(proxied)
                cpu.append(cpu_ms(proxy.pid))
                after = [once(direct) for _ in range(3)]
            rounds.append(((first - statistics.median(before + after)) * 1000, cpu[1] - cpu[0],
                           cpu[2] - cpu[1]))
        finally:
            proxy.terminate()
            proxy.wait(120)
    return rounds


def main() -> None:
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp, open(os.path.join(tmp, "log"), "w") as log:
        serve, direct = start(["serve", "--offline", "--port", "0"], log)
        proxy, proxied = start(["proxy", "--upstream", direct, "--port", "0", "--save",
                                os.path.join(tmp, "saved")], log)
        try:
            print(f"{'history':>8} {'mode':>7} {'direct ms':>10} {'proxy ms':>9} {'added ms':>9}"
                  f" {'ttfb added':>11} {'relay cpu ms':>13}")
            worst = worst_ttfb = 0.0
            for n in SIZES:
                for stream in (False, True):
                    body = {"model": "offline", "messages": history(n), "tools": TOOLS,
                            "stream": stream}
                    d, p, added, ttfb, cpu = paired(direct, proxied, body, proxy.pid)
                    added, ttfb = added * 1000, ttfb * 1000
                    worst = max(worst, added)
                    if stream:
                        worst_ttfb = max(worst_ttfb, ttfb)
                    print(f"{n:>8} {'stream' if stream else 'plain':>7} {d * 1000:>10.2f} "
                          f"{p * 1000:>9.2f} {added:>9.2f} {ttfb if stream else float('nan'):>11.2f}"
                          f" {cpu:>13.2f}")
            body = {"model": "offline", "messages": history(BURST_HISTORY), "tools": TOOLS}
            ratios, cpus, failed = [], [], 0
            for _ in range(BURSTS):         # side by side, as the pairs above
                d_took, d_failed = asyncio.run(burst(direct, body))
                cpu = cpu_ms(proxy.pid)
                p_took, p_failed = asyncio.run(burst(proxied, body))
                cpus.append((cpu_ms(proxy.pid) - cpu) / CONCURRENT)
                ratios.append(p_took / d_took)
                failed += d_failed + p_failed
            ratio = statistics.median(ratios)
            print(f"{CONCURRENT} concurrent ({BURST_HISTORY}-message history), {BURSTS} bursts each way: "
                  f"proxy/direct " + ", ".join(f"{r:.2f}x" for r in ratios) + f" (median {ratio:.2f}x), "
                  f"{failed} failed; relay cpu " + ", ".join(f"{c:.2f}" for c in cpus) + " ms per request")
            rounds = first_requests(direct, tmp, log)
            first = [added for added, _, _ in rounds]
            print(f"first request of a session ({len(claude_code_body()) // 1000} KB, a fresh proxy "
                  f"each round): added " + ", ".join(f"{ms:.1f}" for ms in first) + " ms; relay cpu "
                  "first · second request " + ", ".join(f"{a:.1f} · {b:.1f}" for _, a, b in rounds)
                  + " ms")
            print(f"worst added median {worst:.2f} ms (target <= 5); worst streaming ttfb added "
                  f"{worst_ttfb:.2f} ms (target <= 5); concurrency {ratio:.2f}x "
                  f"(target <= 1.3); first request added median {statistics.median(first):.1f} ms "
                  "(target <= 10)")
        finally:
            for proc in (proxy, serve):
                proc.terminate()
                proc.wait(120)  # the proxy writes every conversation's stop event first


if __name__ == "__main__":
    main()
