"""collect throughput: what `agentdbg collect` adds to each OTLP export, and how many spans a
second it turns into checked, drawn and saved conversations.

The exports are OTLP/HTTP protobuf, as the OpenTelemetry SDK's BatchSpanProcessor sends them:
SPANS spans each, GenAI chat spans (`gen_ai.input.messages` / `gen_ai.output.messages`) of
conversations whose histories grow by a call and its result per span, CALLS calls a trace.

1. Latency: REPEAT exports one after another, to `agentdbg collect` and to a receiver that only
   reads the body and answers (the same server stack: starlette on uvicorn) — the median added
   per export request. Target: <= 5 ms. The same through `collect --forward` to that receiver.
2. Throughput: exports paced at RATE spans/s for SECONDS seconds, then as fast as they are
   answered; collect is stopped (Ctrl-C) after the last and its summary read: every span
   counted, none dropped, and how long its worker took past the last answer (its backlog); the
   spans/s achieved over sending + backlog, and the CPU time collect's processes used (what
   the figures would be with the cores to itself). The machine's load average is printed too.
   Target: keeps up with 1,000 spans/s.

    python bench/collect_throughput.py
"""

from __future__ import annotations

import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "traces"))

from _util import machine
from otlp_exports import CALLS, SPANS, export

REPEAT = 60
RATE = 1_000
SECONDS = 10

BARE = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
got = 0
async def traces(request):
    global got
    body = await request.body()
    got += 1
    return Response(b"", media_type="application/x-protobuf")
app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", access_log=False)
server = uvicorn.Server(config)
import socket
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(128)
print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
server.run(sockets=[sock])
"""


def start_collect(tmp: Path, *args: str) -> tuple[subprocess.Popen, str, Path]:
    err = tmp / f"collect-{len(list(tmp.glob('collect-*.err')))}.err"
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "collect", "--port", "0", "--save",
                             str(tmp / err.stem), *args], stdout=subprocess.DEVNULL,
                            stderr=open(err, "wb"), env={**os.environ, "NO_COLOR": "1"})
    deadline = time.time() + 60
    while time.time() < deadline:
        found = re.search(r"OTEL_EXPORTER_OTLP_ENDPOINT=(http://\S+);", err.read_text())
        if found:
            return proc, found.group(1), err
        time.sleep(0.05)
    raise SystemExit(f"collect did not start: {err.read_text()}")


def stop_collect(proc: subprocess.Popen, err: Path) -> tuple[float, str]:
    """Ctrl-C, then (seconds until it exited, its summary)."""
    began = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    proc.wait(600)
    return time.perf_counter() - began, err.read_text()


def start_bare() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", BARE], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def post(client: httpx.Client, url: str, body: bytes) -> float:
    began = time.perf_counter()
    answer = client.post(f"{url}/v1/traces", content=body,
                         headers={"content-type": "application/x-protobuf"})
    took = time.perf_counter() - began
    if answer.status_code != 200:
        raise SystemExit(f"{url}: HTTP {answer.status_code} {answer.text[:200]}")
    return took


def latencies(url: str, bodies: list[bytes]) -> list[float]:
    with httpx.Client(trust_env=False, timeout=30) as client:
        post(client, url, bodies[0])                       # warm
        return [post(client, url, b) for b in bodies[1:]]


def main() -> int:
    print(machine())
    print(f"exports: OTLP/HTTP protobuf, {SPANS} GenAI chat spans each, {CALLS} calls a trace")
    with tempfile.TemporaryDirectory(prefix="collect-bench-") as folder:
        tmp = Path(folder)
        bodies = [export(i * (SPANS // CALLS)) for i in range(REPEAT + 1)]
        print(f"one export: {len(bodies[1]) / 1024:.0f} KB")
        bare, bare_url = start_bare()
        try:
            base = statistics.median(latencies(bare_url, bodies))
            proc, url, err = start_collect(tmp)
            ours = statistics.median(latencies(url, bodies))
            stop_collect(proc, err)
            proc, url, err = start_collect(tmp, "--forward", bare_url)
            forwarded = statistics.median(latencies(url, bodies))
            _, said = stop_collect(proc, err)
            sent = re.search(r"forwarded (\d+) export", said)
        finally:
            bare.terminate()
            bare.wait()
        print(f"1. per export request (median of {REPEAT}): receiver alone {base * 1000:.2f} ms, "
              f"collect {ours * 1000:.2f} ms (+{(ours - base) * 1000:.2f} ms), "
              f"collect --forward {forwarded * 1000:.2f} ms (+{(forwarded - base) * 1000:.2f} ms; "
              f"forwarded {sent.group(1) if sent else '?'} of {REPEAT + 1})")

        per_second = RATE // SPANS
        paced = [export(10_000 + i * (SPANS // CALLS)) for i in range(per_second * SECONDS)]
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc, url, err = start_collect(tmp)
        with httpx.Client(trust_env=False, timeout=30) as client:
            began = time.perf_counter()
            for i, body in enumerate(paced):
                wait = began + i / per_second - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                post(client, url, body)
            sending = time.perf_counter() - began
        backlog, said = stop_collect(proc, err)
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
        counts = re.search(r"(\d+) export\(s\), (\d+) span\(s\), (\d+) model call", said)
        dropped = re.search(r"(\d+) export\(s\) not read", said)
        spans = int(counts.group(2)) if counts else 0
        print(f"2. paced at {RATE} spans/s for {SECONDS} s: {len(paced) * SPANS} spans sent in {sending:.1f} s; "
              f"collect read {spans} spans ({counts.group(3) if counts else '?'} model calls), "
              f"dropped {dropped.group(1) if dropped else 0} export(s)")
        if spans:
            print(f"   achieved: {spans / (sending + backlog):.0f} spans/s (sending + backlog); lag after "
                  f"the last export: {backlog:.1f} s (Ctrl-C until collect exited: its backlog, the "
                  f"transcripts ended, the summary)")
        print(f"   CPU time of collect (receiver + worker, from start to exit): {cpu:.1f} s — "
              f"{len(paced) * SPANS / cpu:.0f} spans per CPU-second")
        print(f"   load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
