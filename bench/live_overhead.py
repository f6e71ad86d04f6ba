"""Live view overhead: what `agentdbg proxy --live` adds to each relayed request, and the memory
its live view holds, with a real browser following the run.

Two proxies in front of one `agentdbg serve --offline`: one plain, one with --live and
Chromium (Playwright, /usr/bin/chromium) open on its page, which fetches every conversation
that changes. 1,000 requests — 250 conversations of four requests each, the histories of an
agent loop — go to both, interleaved (A then B, then B then A), timed at the client. The live
view's process is measured when the page has opened and after the 1,000 requests: resident
memory (RSS) and its proportional share (PSS, shared pages split with the proxy it was forked
from).

Targets: the live proxy adds <= 1 ms to the median request; the live view grows by <= 20 MB.

    python bench/live_overhead.py [--requests 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _util import machine

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Use when the user asks about the weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
PER_CONVERSATION = 4


def start(args: list[str], folder: Path) -> tuple[subprocess.Popen, list[str]]:
    """An agentdbg process and the URLs its first lines print."""
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=folder,
                            env={**os.environ, "NO_COLOR": "1", "AGENTDBG_HOME": str(folder)})
    urls: list[str] = []
    wanted = 2 if "--live" in args else 1
    for line in proc.stdout:  # type: ignore[union-attr]
        urls += re.findall(r"(http://127\.0\.0\.1:\d+/\S*)", line)[:1] if "export" not in line else []
        if len(urls) >= wanted:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
            return proc, urls
    raise SystemExit(f"agentdbg {args[0]} did not start")


def request(k: int, n: int) -> dict:
    """Request ``n`` (1-based) of conversation ``k``: a question, then call/result pairs."""
    messages: list[dict] = [{"role": "user", "content": f"对话 {k}: 北京今天多少度?"}]
    for i in range(1, n):
        call = {"id": f"call_{k}_{i}", "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": f"城市{i}"})}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": call["id"], "content": '{"t": 20}'}]
    return {"model": "demo", "messages": messages, "tools": TOOLS}


def timed(client: httpx.Client, url: str, body: dict) -> float:
    start = time.perf_counter()
    resp = client.post(url + "/chat/completions", json=body)
    elapsed = time.perf_counter() - start
    if resp.status_code != 200:
        raise SystemExit(f"{url}: HTTP {resp.status_code}: {resp.text[:200]}")
    return elapsed


def memory(pid: int) -> tuple[float, float]:
    """(RSS, PSS) in MB."""
    rss = int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1))
    pss = int(re.search(r"Pss:\s+(\d+)", Path(f"/proc/{pid}/smaps_rollup").read_text()).group(1))
    return rss / 1024, pss / 1024


def live_process(proxy: int) -> int:
    """The proxy's live view: the child it forked first (the analyst comes after)."""
    children = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if int(fields[1]) == proxy:
                children.append((int(fields[19]), int(name)))
    return min(children)[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    conversations = args.requests // PER_CONVERSATION
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        serve, (upstream,) = start(["serve", "--offline", "--lenient", "--port", "0"], folder)
        plain, (plain_url,) = start(["proxy", "--upstream", upstream, "--port", "0", "--save",
                                     str(folder / "plain")], folder)
        live, (live_url, page_url) = start(["proxy", "--upstream", upstream, "--port", "0", "--live",
                                            "--save", str(folder / "live")], folder)
        with sync_playwright() as p, httpx.Client(timeout=60) as client:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(page_url)
            page.wait_for_selector("#live-status.ok")
            viewer = live_process(live.pid)
            for k in range(5):   # warm both paths up
                timed(client, plain_url, request(10_000 + k, 1))
                timed(client, live_url, request(10_000 + k, 1))
            time.sleep(1)
            before = memory(viewer)
            times: dict[str, list[float]] = {"plain": [], "live": []}
            for k in range(conversations):
                for n in range(1, PER_CONVERSATION + 1):
                    body = request(k, n)
                    order = [("plain", plain_url), ("live", live_url)]
                    for name, url in order if (k + n) % 2 else reversed(order):
                        times[name].append(timed(client, url, body))
            done = time.monotonic()
            recorded = len(list((folder / "live").glob("*-conversation-*.jsonl")))
            shown, written = 0, None
            while time.monotonic() - done < 300:   # the page catches up with the last requests
                shown = page.locator("article.conv").count()
                files = len(list((folder / "live").glob("*-conversation-*.jsonl")))
                if written is None and files >= conversations + 5:
                    written = time.monotonic() - done     # the analyst has written them all
                if shown >= conversations + 5:
                    break
                time.sleep(0.1)
            caught_up = time.monotonic() - done
            after = memory(viewer)
            browser.close()
        for proc in (live, plain, serve):
            proc.terminate()
            proc.wait(30)
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    p90 = {k: statistics.quantiles(v, n=10)[-1] * 1000 for k, v in times.items()}
    print(f"live view overhead — {machine()}")
    print(f"{len(times['live'])} requests ({conversations} conversations of {PER_CONVERSATION}), "
          "each through both proxies, interleaved; Chromium following the live page")
    print(f"  median  plain {med['plain']:.2f} ms   live {med['live']:.2f} ms   "
          f"added {med['live'] - med['plain']:+.2f} ms   (target <= 1 ms)")
    print(f"  p90     plain {p90['plain']:.2f} ms   live {p90['live']:.2f} ms")
    print(f"  live view process: RSS {before[0]:.1f} -> {after[0]:.1f} MB "
          f"(+{after[0] - before[0]:.1f} MB), PSS {before[1]:.1f} -> {after[1]:.1f} MB "
          f"(+{after[1] - before[1]:.1f} MB)   (target: <= 20 MB added)")
    print(f"  after the last request: the analyst had written {recorded} of {shown} transcripts, "
          f"all {written or 0:.1f} s later; the page showed all {caught_up:.1f} s later")
    return 0


if __name__ == "__main__":
    sys.exit(main())
