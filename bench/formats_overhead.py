"""Checking and proxying the other wire formats: a 1,000-item Responses API history and a
1,000-message Anthropic Messages history, with the targets Chat Completions has.

Checking: the format's checker in process (median of repeated runs) next to the Chat
Completions checker on the same loop; and `agentdbg check --json` as a process next to a
process that only parses the file (the start-up both pay is in both).
Proxying: `agentdbg serve --offline` answers; the same requests go to it directly and through
`agentdbg proxy` (each in its own process), on histories of 1, 100 and 1,000, plain and
streaming, then 200 concurrent requests; the proxy checks, records and prints every one.

Beside each wall-clock figure, the relay's CPU time per request (as bench/proxy_overhead.py).
`--only anthropic` (or responses) runs one format's proxy rows and skips the checking rows.

Targets (as bench/proxy_overhead.py): added median latency <= 5 ms at every size; streaming
time to first byte added <= 5 ms; 200 concurrent within 1.3x of direct, no failed request.

    python bench/formats_overhead.py [--only anthropic]
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time

import httpx
from _util import best, machine
from proxy_overhead import CONCURRENT, NODELAY, REPEAT, cpu_ms, start

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
KEY = {"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"}


def responses_history(n: int) -> list[dict]:
    """A valid Responses input of ``n`` items: a question, then call/output pairs."""
    items: list[dict] = [{"role": "user", "content": "北京和上海今天哪个更热?"}]
    k = 0
    while len(items) + 2 <= n:
        k += 1
        items.append({"type": "function_call", "id": f"fc_h{k}", "call_id": f"call_h{k}",
                      "name": "get_weather", "arguments": json.dumps({"city": f"城市{k}"}),
                      "status": "completed"})
        items.append({"type": "function_call_output", "call_id": f"call_h{k}", "output": '{"t": 20}'})
    while len(items) < n:
        items.append({"role": "user", "content": "继续"})
    return items


def anthropic_history(n: int) -> list[dict]:
    """A valid Messages history of ``n`` messages: a question, then tool_use/tool_result turns."""
    messages: list[dict] = [{"role": "user", "content": "北京和上海今天哪个更热?"}]
    k = 0
    while len(messages) + 2 <= n:
        k += 1
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_h{k}", "name": "get_weather", "input": {"city": f"城市{k}"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_h{k}", "content": '{"t": 20}'}]})
    while len(messages) < n:
        messages.append({"role": "user" if messages[-1]["role"] == "assistant" else "assistant",
                         "content": "继续"})
    return messages


def chat_history(n: int) -> list[dict]:
    from proxy_overhead import history

    return history(n)


FORMATS = {
    "responses": ("/responses", lambda n, stream: {
        "model": "offline", "input": responses_history(n), "stream": stream,
        "tools": [{"type": "function", "name": "get_weather", "description": "Use for the weather.",
                   "parameters": SCHEMA}]}),
    "anthropic": ("/messages", lambda n, stream: {
        "model": "offline", "max_tokens": 1024, "messages": anthropic_history(n), "stream": stream,
        "tools": [{"name": "get_weather", "description": "Use for the weather.", "input_schema": SCHEMA}]}),
}


def chat_body(n: int) -> dict:
    from proxy_overhead import TOOLS

    return {"model": "offline", "messages": chat_history(n), "tools": TOOLS}


# -- checking ---------------------------------------------------------------------------------

def in_process(fn, body, repeat: int = 30) -> float:
    fn(body)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(body)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def checking(tmp: str) -> None:
    from agentdbg.checker import check
    from agentdbg.checker.formats import check_anthropic, check_responses

    print("\nchecking a 1,000-long history (in process, median of 30):")
    bodies = {"chat": (check, chat_body(1000)),
              "responses": (check_responses, FORMATS["responses"][1](1000, False)),
              "anthropic": (check_anthropic, FORMATS["anthropic"][1](1000, False))}
    for name, (fn, body) in bodies.items():
        assert not fn(body), f"{name}: the bench history is not clean"
        print(f"  {name:>9}: {in_process(fn, body):7.2f} ms")
    print("`agentdbg check --json FILE` as a process (best of 5) vs a process that only parses it:")
    for name, (_fn, body) in bodies.items():
        path = os.path.join(tmp, f"{name}.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(body, fh, ensure_ascii=False)
        cli = best([sys.executable, "-m", "agentdbg", "check", "--json", path], repeat=5, ok=(0,))
        bare = best([sys.executable, "-c", f"import json; json.load(open({path!r}, encoding='utf-8'))"],
                    repeat=5, ok=(0,))
        print(f"  {name:>9}: {cli * 1000:6.0f} ms vs {bare * 1000:4.0f} ms: {cli / bare:.2f}x")


# -- proxying ---------------------------------------------------------------------------------

def timed(client: httpx.Client, url: str, body: dict) -> tuple[float, float]:
    start = time.perf_counter()
    first = None
    with client.stream("POST", url, json=body, headers=KEY) as resp:
        for _ in resp.iter_raw():
            if first is None:
                first = time.perf_counter() - start
        if resp.status_code != 200:
            raise SystemExit(f"{url}: HTTP {resp.status_code}")
    return time.perf_counter() - start, first or 0.0


def medians(url: str, body: dict, pid: int | None = None) -> tuple[float, float, float]:
    """Median seconds per request and to its first byte; the CPU ms process ``pid`` (the relay)
    spent per request (NaN without it)."""
    with httpx.Client(timeout=60, transport=httpx.HTTPTransport(socket_options=NODELAY)) as client:
        for _ in range(3):
            timed(client, url, body)
        cpu = cpu_ms(pid) if pid else float("nan")
        runs = [timed(client, url, body) for _ in range(REPEAT)]
        cpu = (cpu_ms(pid) - cpu) / REPEAT if pid else float("nan")
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), cpu


async def burst(url: str, body: dict) -> tuple[float, int]:
    transport = httpx.AsyncHTTPTransport(socket_options=NODELAY,
                                         limits=httpx.Limits(max_connections=CONCURRENT))
    async with httpx.AsyncClient(timeout=120, transport=transport) as c:
        start = time.perf_counter()
        results = await asyncio.gather(*[c.post(url, json=body, headers=KEY)
                                         for _ in range(CONCURRENT)], return_exceptions=True)
        took = time.perf_counter() - start
    failed = sum(1 for r in results if not isinstance(r, httpx.Response) or r.status_code != 200)
    return took, failed


def proxying(tmp: str, only: str | None = None) -> None:
    with open(os.path.join(tmp, "log"), "w") as log:
        serve, direct = start(["serve", "--offline", "--port", "0"], log)
        proxy, proxied = start(["proxy", "--upstream", direct, "--port", "0", "--save",
                                os.path.join(tmp, "saved")], log)
        try:
            for name, (path, make) in FORMATS.items():
                if only and name != only:
                    continue
                print(f"\nproxying {name} ({path}):")
                print(f"{'history':>8} {'mode':>7} {'direct ms':>10} {'proxy ms':>9} {'added ms':>9}"
                      f" {'ttfb added':>11} {'relay cpu ms':>13}")
                worst = worst_ttfb = 0.0
                for n in (1, 100, 1000):
                    for stream in (False, True):
                        body = make(n, stream)
                        d, d_first, _ = medians(direct + path, body)
                        p, p_first, cpu = medians(proxied + path, body, proxy.pid)
                        added, ttfb = (p - d) * 1000, (p_first - d_first) * 1000
                        worst = max(worst, added)
                        if stream:
                            worst_ttfb = max(worst_ttfb, ttfb)
                        print(f"{n:>8} {'stream' if stream else 'plain':>7} {d * 1000:>10.2f} "
                              f"{p * 1000:>9.2f} {added:>9.2f} "
                              f"{ttfb if stream else float('nan'):>11.2f} {cpu:>13.2f}")
                body = make(1, False)
                d_took, d_failed = asyncio.run(burst(direct + path, body))
                p_took, p_failed = asyncio.run(burst(proxied + path, body))
                print(f"{CONCURRENT} concurrent: direct {d_took:.2f} s ({d_failed} failed), proxy "
                      f"{p_took:.2f} s ({p_failed} failed): {p_took / d_took:.2f}x")
                print(f"{name}: worst added median {worst:.2f} ms (target <= 5); worst streaming "
                      f"ttfb added {worst_ttfb:.2f} ms (target <= 5); concurrency "
                      f"{p_took / d_took:.2f}x (target <= 1.3)")
        finally:
            for proc in (proxy, serve):
                proc.terminate()
                proc.wait(120)  # the proxy writes its transcripts as it stops


def main() -> None:
    only = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--only" else None
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        if only is None:
            checking(tmp)
        proxying(tmp, only)


if __name__ == "__main__":
    main()
