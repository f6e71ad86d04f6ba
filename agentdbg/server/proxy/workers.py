"""Where the analysis runs: a child process (``ProcessAnalyst``) or a thread (``ThreadAnalyst``).

The relay only reads bytes and forwards them; it hands each request and each response to the
analyst as a job, in the order the traffic happened. By default the analyst is a child process
that runs on CPU time nobody else wants, so it may fall behind: its backlog is bounded in
memory and spills to disk (``spool``). When the proxy stops, the analyst finishes the backlog at
full speed, within ``drain`` seconds (a second Ctrl-C ends the wait at once); what it did not get
to is still recorded where it can be (a response as "not analysed"), and every exchange that is
not recorded is counted and named. ``--intercept`` runs the analysis on a thread of the proxy
process, next to the prompt that pauses each request.

``agentdbg collect`` runs its own analysis (``server.collect.feed``: OTLP exports in) in the same
kind of child, through ``job``; it yields the CPU less (``nice=10`` rather than SCHED_IDLE): it must
keep up with the spans, and still let the receiver answer first.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import signal
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING

from agentdbg.i18n import N_, Msg, _
from agentdbg.server.proxy.analyst import Analyses, Analysis, Exchange, Finished, Verdict, _run_job
from agentdbg.server.proxy.spool import (
    MEMORY_BUDGET,
    Dropped,
    Spool,
    Spooled,
    body_of,
    take,
    weight,
    with_body,
)

if TYPE_CHECKING:
    from collections.abc import MutableSequence
    from multiprocessing.queues import Queue as ProcessQueue

DRAIN = 60.0                 # seconds the stop waits for the analysis to finish the backlog
DRAIN_AFTER_CUT = 20.0       # then, seconds to record what is left unanalysed and end transcripts
PROGRESS_EVERY = 5.0         # seconds between the stop's progress lines
PARENT_CHECK_SECONDS = 1.0   # how often an idle analyst checks that the proxy is still there
RUNNING, STOPPING, CUT = 0, 1, 2   # the stages of the analyst (see ProcessAnalyst)
# the jobs that belong to one exchange (by its id, their second item): the stop's lines count
# exchanges, not jobs (a request and its response are one exchange)
EXCHANGE_JOBS = frozenset({"request", "edited", "blocked", "response", "scripted", "failed"})


class _Analyst(ABC):
    """What the relay calls; never blocks the event loop."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, Future] = {}
        self._lock = threading.Lock()

    @abstractmethod
    def _put(self, job: tuple) -> None:
        """Deliver ``job`` to the analysis (each runner its own way)."""

    def request(self, raw: bytes, client: str | None, want_verdict: bool = False,
                wire: str = "chat") -> Exchange:
        exchange = Exchange(next(self._ids))
        if want_verdict:
            with self._lock:
                self._waiting[exchange.id] = exchange.verdict
        self._put(("request", exchange.id, raw, client, want_verdict, wire))
        return exchange

    def edited(self, exchange: Exchange, body: dict) -> None:
        self._put(("edited", exchange.id, body))

    def blocked(self, exchange: Exchange) -> None:
        self._put(("blocked", exchange.id))

    def response(self, exchange: Exchange, status: int, data: bytes, latency_ms: float,
                 stream: bool = False, received: int | None = None, cut_by: str | None = None,
                 encoding: str | None = None) -> None:
        self._put(("response", exchange.id, status, data, latency_ms, stream, received, cut_by,
                   encoding))

    def scripted(self, exchange: Exchange, body: dict, reply: dict) -> None:
        self._put(("scripted", exchange.id, body, reply))

    def upstream_failed(self, exchange: Exchange, message: str, status: int = 502) -> None:
        self._put(("failed", exchange.id, message, status))

    def note(self, text: str) -> None:
        self._put(("note", text))

    def add_secret(self, token: str) -> None:
        self._put(("secret", token))

    def job(self, *job: object) -> None:
        """A job of another analysis' own kind (``collect``'s ``("export", ...)``), in order."""
        self._put(job)

    def _resolve(self, ex_id: int, verdict: Verdict) -> None:
        with self._lock:
            future = self._waiting.pop(ex_id, None)
        if future is not None and not future.done():
            future.set_result(verdict)


class ThreadAnalyst(_Analyst):
    """The analyst on a thread of this process (``--intercept``, tests)."""

    def __init__(self, analysis: Analysis):
        super().__init__()
        self.analysis = analysis
        self._jobs: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, name="agentdbg-analyst", daemon=True).start()

    def _put(self, job: tuple) -> None:
        self._jobs.put(job)

    def _run(self) -> None:
        self.analysis.warm()
        while True:
            job = self._jobs.get()
            if job[0] == "_sync":
                job[1].set_result(_run_job(self.analysis, job[2]) if len(job) > 2 else None)
                continue
            result = _run_job(self.analysis, job)
            if job[0] == "request":
                self._resolve(job[1], result)

    def drain(self, timeout: float = 30.0) -> None:
        done: Future = Future()
        self._jobs.put(("_sync", done))
        done.result(timeout)

    def close(self, timeout: float = DRAIN) -> list[Path]:
        done: Future = Future()
        self._jobs.put(("_sync", done, ("finish",)))
        try:
            finished = done.result(timeout) or Finished()
        except FutureTimeout:
            say(_("the analysis was still {seconds} s behind the traffic when the proxy stopped; the "
                  "last conversations' transcripts lack their stop event").format(seconds=f"{timeout:g}"))
            return []
        tell_unrecorded(finished.unrecorded)
        return finished.paths


class ProcessAnalyst(_Analyst):
    """The analyst in a child process: the relay's interpreter only forwards bytes.

    Its queue holds at most ``MEMORY_BUDGET`` bytes of bodies; past that each body waits in the
    spool on disk. Shared counters say what the child has taken, so the relay knows what the
    queue holds without asking."""

    def __init__(self, make_analysis: Callable[[], Analyses], spool_dir: Path | None = None,
                 memory_budget: int | None = None, *, nice: int | None = None,
                 tell: Callable[[str], None] | None = None, unit: str = "exchange",
                 done: str = "relayed"):
        import multiprocessing

        super().__init__()
        # what the stop's lines call a job ("exchange", or collect's "export") and what
        # happened to it ("relayed", "received"): each line has a template per kind
        self.say, self.unit, self.done = tell or say, unit, done
        ctx = multiprocessing.get_context("fork")
        self.spool = Spool(spool_dir or _spool_home())
        self.memory_budget = memory_budget if memory_budget is not None else _budget()
        # taken[0]: bytes the child took from the queue's memory, [1]: from the spool, [2]: jobs
        # done; stage[0]: RUNNING, STOPPING (full speed) or CUT (jobs left are only recorded)
        self._taken = ctx.RawArray("q", 3)
        self._stage = ctx.RawArray("b", 1)
        self._queued = [0, 0]            # body bytes put in memory, put in the spool
        # per job put and not yet known done, in order: the exchange (or export) it belongs to,
        # None for a job of neither (a note, a secret); the first _owners_done were dropped
        self._owners: deque[int | None] = deque()
        self._owners_done = 0
        self._exports = itertools.count(-1, -1)
        self._jobs = ctx.Queue()
        self._results = ctx.Queue()
        self._synced: dict[int, Future] = {}
        self._sync_ids = itertools.count(1)   # not the exchanges' ids: those are request numbers
        self._process = ctx.Process(target=_child, name="agentdbg-analyst", daemon=True,
                                    args=(make_analysis, self._jobs, self._results, self._taken,
                                          self._stage, self.spool, nice))
        self._process.start()
        threading.Thread(target=self._read, name="agentdbg-verdicts", daemon=True).start()
        # the queue starts its feeder thread on its first put: done by the first request, that
        # thread's start and its first pickling ran on that request's time
        self._sync(("note_nothing",))

    def _put(self, job: tuple) -> None:
        body = body_of(job)
        if isinstance(body, (bytes, bytearray)) and \
                self.in_memory() + weight(job) > self.memory_budget:
            kept = self.spool.keep(bytes(body), self._queued[1] - self._taken[1])
            if isinstance(kept, Spooled):
                self._queued[1] += kept.size
            job = with_body(job, kept)
        self._queued[0] += weight(job)
        self._owners.append(job[1] if job[0] in EXCHANGE_JOBS else
                            next(self._exports) if job[0] == self.unit else None)
        self._jobs.put(job)

    def _left(self) -> int:
        """The exchanges (``collect``: exports) with a job the child has not finished."""
        done = self._taken[2]
        while self._owners_done < done and self._owners:
            self._owners.popleft()
            self._owners_done += 1
        # list() copies under the GIL: the relay may append meanwhile
        return len({owner for owner in list(self._owners) if owner is not None})

    def in_memory(self) -> int:
        """Bytes the queue holds in memory (put, not yet taken by the child)."""
        return self._queued[0] - self._taken[0]

    def _read(self) -> None:
        while True:
            try:
                kind, key, value = self._results.get()
            except (EOFError, OSError):
                return
            if kind == "verdict":
                self._resolve(key, value)
            else:
                with self._lock:
                    future = self._synced.pop(key, None)
                if future is not None:
                    future.set_result(value)

    def _sync(self, job: tuple, settled: Future | None = None) -> Future:
        """``job`` run after everything queued; its result. ``settled``: for ``finish``, what
        could not be recorded, said before the stop events are written."""
        future: Future = Future()
        key = next(self._sync_ids)
        with self._lock:
            self._synced[key] = future
            if settled is not None:
                self._synced[-key] = settled
        self._jobs.put(("_sync", key, job))
        return future

    def drain(self, timeout: float = 30.0) -> None:
        self._sync(("note_nothing",)).result(timeout)

    def close(self, timeout: float = DRAIN) -> list[Path]:
        """Let the analysis finish the backlog (at most ``timeout`` s, or until a second Ctrl-C),
        end every transcript, say what was not recorded; the transcripts' paths."""
        finished: Finished | None = None
        settled: Future = Future()
        try:
            finished = self._finish(timeout, settled)
        finally:
            self._jobs.put(None)
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
                # jobs the child never read must not keep this process from exiting
                self._jobs.cancel_join_thread()
            self.spool.remove()
        if finished is None:
            left = self._left()
            if settled.done():
                said = settled.result() or Finished()
                tell_unrecorded(said.unrecorded, self.say)
                self.say(_("the analysis did not finish writing the stop events of the {n} transcript(s) "
                           "still open: the last of them lack theirs").format(n=said.still_open))
            else:
                self.say(self._units(N_("the analysis did not finish: {n} relayed exchange(s) were never "
                                        "recorded, and the transcripts still open lack their stop event"),
                                     N_("the analysis did not finish: {n} received export(s) were never "
                                        "recorded, and the transcripts still open lack their stop event"),
                                     n=left))
            return []
        tell_unrecorded(finished.unrecorded, self.say)
        return finished.paths

    def _units(self, exchanges: str, exports: str, **values: object) -> str:
        """The line about this worker's jobs (``collect``'s are exports), in the chosen language."""
        template = exports if self.unit == "export" else exchanges
        return _(template).format(**values)

    def _finish(self, timeout: float, settled: Future) -> Finished | None:
        start = time.monotonic()
        self._stage[0] = STOPPING
        left = self._left()
        future = self._sync(("finish",), settled)
        told = left > 100 or self.in_memory() + self._queued[1] - self._taken[1] > (1 << 20)
        if told:
            self.say(self._units(N_("stopping: analysing the {n} exchange(s) still queued (at most "
                                    "{seconds} s; Ctrl-C again to stop waiting)"),
                                 N_("stopping: analysing the {n} export(s) still queued (at most "
                                    "{seconds} s; Ctrl-C again to stop waiting)"),
                                 n=left, seconds=f"{timeout:g}"))
        waited = self._wait(future, start + timeout, progress=True)
        if waited is None:
            self._stage[0] = CUT
            left = self._left()
            self.say(self._units(N_("stopped analysing after {seconds} s: recording the {n} "
                                    "exchange(s) left without analysing them"),
                                 N_("stopped analysing after {seconds} s: recording the {n} "
                                    "export(s) left without analysing them"),
                                 n=left, seconds=f"{time.monotonic() - start:.0f}"))
            waited = self._wait(future, time.monotonic() + DRAIN_AFTER_CUT, progress=False)
        elif told:
            self.say(_("analysed the backlog in {seconds} s").format(
                seconds=f"{time.monotonic() - start:.1f}"))
        return waited

    def _wait(self, future: Future, deadline: float, progress: bool) -> Finished | None:
        next_line = time.monotonic() + PROGRESS_EVERY
        while True:
            now = time.monotonic()
            if now >= deadline:
                return None
            try:
                return future.result(min(0.5, deadline - now)) or Finished()
            except FutureTimeout:
                pass
            except KeyboardInterrupt:     # a second Ctrl-C: stop waiting for the analysis
                if not progress:
                    return None
                return self._wait(future, now, progress)   # deadline now: cut at once
            if progress and time.monotonic() >= next_line:
                next_line += PROGRESS_EVERY
                self.say(self._units(N_("stopping: {n} exchange(s) left to analyse"),
                                     N_("stopping: {n} export(s) left to analyse"),
                                     n=self._left()))


def _budget() -> int:
    """``MEMORY_BUDGET``, or ``AGENTDBG_PROXY_QUEUE_MB`` megabytes."""
    text = os.environ.get("AGENTDBG_PROXY_QUEUE_MB", "")
    return int(float(text) * (1 << 20)) if text.replace(".", "", 1).isdigit() else MEMORY_BUDGET


def _spool_home() -> Path:
    from agentdbg.paths import data_dir

    return data_dir() / "spool"


def say(text: str) -> None:
    from agentdbg.textsafe import one_line

    print(f"agentdbg proxy: {one_line(text)}", file=sys.stderr, flush=True)


UNRECORDED_SHOWN = 20


def tell_unrecorded(lines: list[str], tell: Callable[[str], None] | None = None) -> None:
    """Each exchange relayed and not (fully) recorded, by name (the first 20), and how many."""
    if not lines:
        return
    show = tell or say     # not called ``tell``: the catalog reads tell("…") as the offline model's
    show(_("{n} relayed exchange(s) are not recorded in full:").format(n=len(lines)))
    for line in lines[:UNRECORDED_SHOWN]:
        show(f"  {line}")
    if len(lines) > UNRECORDED_SHOWN:
        more = _("… and {n} more").format(n=len(lines) - UNRECORDED_SHOWN)
        show(f"  {more}")


def _child(make_analysis: Callable[[], Analyses], jobs: ProcessQueue[tuple | None],
           results: ProcessQueue[tuple], taken: MutableSequence[int], stage: MutableSequence[int],
           spool: Spool, nice: int | None = None) -> None:
    """The analyst process: jobs in, verdicts out, until the proxy says stop. ``nice``: how it
    yields the CPU while the traffic runs (None: SCHED_IDLE; N: ``nice`` N)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the proxy decides when we stop
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    unyield = _yield_cpu(nice)
    parent = os.getppid()
    analysis = make_analysis()
    analysis.warm()      # on CPU time nobody else wants, before the first request comes
    yielding = True
    while True:
        if yielding and stage[0] != RUNNING:   # the proxy is stopping: the backlog at full speed
            yielding = False
            unyield()
        try:
            job = jobs.get(timeout=PARENT_CHECK_SECONDS)
        except queue.Empty:
            if os.getppid() == parent:
                continue
            # the proxy was killed (no "finish" will come): what it relayed is already in the
            # queue and now analysed; end the transcripts as a stop would, then go
            results.cancel_join_thread()     # nobody reads the results any more
            unyield()
            _run_job(analysis, ("close",))
            spool.remove()                   # every body in it was read, or will never be
            break
        if job is None:
            break
        if job[0] == "_sync":
            _, key, inner = job
            if inner[0] == "finish":   # what was not recorded first: the stop events may be slow
                results.put(("sync", -key, _run_job(analysis, ("settle",))))
            value = None if inner[0] == "note_nothing" else _run_job(analysis, inner)
            results.put(("sync", key, value))
            continue
        job = _unpacked(job, taken, stage[0] == CUT)
        result = _run_job(analysis, job)
        taken[2] += 1
        if job[0] == "request" and job[4]:  # the relay waits for it (--block-invalid)
            with contextlib.suppress(Exception):
                results.put(("verdict", job[1], Verdict(result.conversation, None,
                                                        result.findings, result.note, result.wire)))


def _unpacked(job: tuple, taken: MutableSequence[int], skip: bool) -> tuple:
    """``job`` with its body in hand (read from the spool), counted as taken; once the stop no
    longer waits (``skip``), a body is left unread: the exchange is recorded as not analysed."""
    body = body_of(job)
    taken[0] += weight(job)
    if isinstance(body, Spooled):
        taken[1] += body.size
        if skip:
            with contextlib.suppress(OSError):
                os.unlink(body.path)
            return with_body(job, Dropped(body.size, _STOPPED))
        return with_body(job, take(body))
    if skip and isinstance(body, (bytes, bytearray)):
        return with_body(job, Dropped(len(body), _STOPPED))
    return job


_STOPPED = Msg(N_("the proxy stopped before agentdbg analysed it"))


def _yield_cpu(nice: int | None = None) -> Callable[[], None]:
    """Run only on CPU time nobody else wants: the relay, the upstream and the app go first
    (SCHED_IDLE on Linux, else the lowest priority); the analysis catches up after. ``nice``: a
    lower priority instead (``nice`` N: a fair share still, the others first when they wake).
    What undoes it (at the stop: the backlog at full speed, where the system allows it)."""
    if nice is not None:
        before = _priority()
        with contextlib.suppress(AttributeError, OSError):
            os.nice(nice)

        def undo() -> None:
            with contextlib.suppress(AttributeError, OSError):   # unprivileged: stays niced
                os.setpriority(os.PRIO_PROCESS, 0, before)       # type: ignore[attr-defined,unused-ignore]
        return undo
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        with contextlib.suppress(AttributeError, OSError):
            os.nice(19)
    return _unyield_idle


def _priority() -> int:
    try:
        return os.getpriority(os.PRIO_PROCESS, 0)   # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return 0


def _unyield_idle() -> None:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))  # type: ignore[attr-defined,unused-ignore]

