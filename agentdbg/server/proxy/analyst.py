"""Everything the proxy learns from the traffic, done away from the relay, in order.

The relay only reads bytes and forwards them; it hands each request and each response
to the analyst, which parses, assigns the conversation, checks, records the
transcript and prints — in the order the traffic happened, so the cross-request rules
see the loop as the app ran it.

By default the analyst is a child process (``ProcessAnalyst``): its work never holds
the relay's interpreter, so checking and printing a 1,000-message history costs the
app nothing. With ``--block-invalid`` the relay waits for the request's verdict (that is
the point of the flag). ``--intercept`` runs the analyst on a thread of the proxy
process (``ThreadAnalyst``), next to the prompt that pauses each request.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg import schemas
from agentdbg.checker import has_errors
from agentdbg.server.proxy.conversations import Tracker
from agentdbg.server.proxy.reading import Replied, Seen, judge, read_reply, rejudge
from agentdbg.server.served import chain_items, history_of
from agentdbg.server.wires import WIRES
from agentdbg.wire.common import strip_wire


@dataclass
class Verdict:
    """What the analyst found in one request."""

    conversation: int | None = None
    body: dict | None = None
    findings: list = field(default_factory=list)
    note: str | None = None            # not a body of its format: passed through unchecked
    wire: str = "chat"

    @property
    def blocking(self) -> bool:
        return has_errors(self.findings)


@dataclass
class Exchange:
    """One request through the proxy, as the relay knows it."""

    id: int
    verdict: Future = field(default_factory=Future)


class Analysis:
    """The analyst's work, one job at a time: it owns the conversations and the view."""

    def __init__(self, tracker: Tracker, view, profile: str):
        self.tracker = tracker
        self.view = view
        self.profile = profile
        self._open: dict[int, Seen | None] = {}
        self.skips = schemas.Skips()      # schemas left unchecked (work budget): said once

    def handle(self, job: tuple) -> Any:
        kind, *args = job
        return getattr(self, f"on_{kind}")(*args)

    def on_request(self, ex_id: int, raw: bytes, client: str | None,
                   want_verdict: bool = False, wire_name: str = "chat") -> Verdict:
        wire = WIRES[wire_name]
        deep = False
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        except RecursionError:
            body, deep = None, True
        if body is None or wire.shape_error(body) is not None:
            note = (f"a {wire.label} request nested too deeply for agentdbg to read; passed "
                    "through unchecked and unrecorded" if deep else
                    f"a request that is not a {wire.label} body; passed through unchecked")
            self._open[ex_id] = None
            self.view.note(note)
            return Verdict(note=note)
        try:
            with schemas.noting_skips(self.skips):
                seen = judge(wire, body, self.tracker, client, self.profile)
        except Exception as exc:  # noqa: BLE001 - what is relayed is recorded, checked or not
            seen = self._unchecked(wire, body, client)
            self._open[ex_id] = seen
            self.view.note(f"agentdbg could not check this {wire.label} request ({_why(exc)}); "
                           f"it is recorded unchecked in conversation {seen.conv.number}")
            return Verdict(seen.conv.number, body, [], wire=wire_name)
        self._open[ex_id] = seen
        self.view.show_request(seen)
        for line in self.skips.take():
            self.view.note(line)
        return Verdict(seen.conv.number, body, seen.findings, wire=wire_name)

    def _unchecked(self, wire, body: dict, client: str | None) -> Seen:
        """A request the checks could not get through (nested too deeply, say): its
        conversation and chat form as far as they can be had, no findings."""
        messages: list = []
        with contextlib.suppress(Exception):
            messages = body["messages"] if wire.name == "chat" else \
                strip_wire(wire.chat_form(body).messages)
        conv = None
        with contextlib.suppress(Exception):
            conv = self.tracker.assign(messages, client)
        return Seen(wire, body, conv or self.tracker.start(client), messages, [])

    def on_edited(self, ex_id: int, body: dict) -> None:
        """The user edited the body at the intercept prompt: judge what was sent."""
        seen = self._open.get(ex_id)
        if seen is not None and seen.wire.shape_error(body) is None:
            if seen.form is not None:
                from agentdbg.server.served import chain_messages
                from agentdbg.wire.common import strip_wire

                seen.form = seen.wire.chat_form(body)
                messages, seen.sources = chain_messages(seen.form, seen.chain)
                seen.messages = strip_wire(messages)
            rejudge(seen, body, self.tracker, self.profile)

    def on_blocked(self, ex_id: int) -> None:
        seen = self._open.pop(ex_id, None)
        if seen is not None:
            self.tracker.record_blocked(seen.conv, seen.body, seen.findings, seen.messages,
                                        wire=seen.wire.name, tools=_chat_tools(seen))
        self.view.note("blocked: answered the app with HTTP 400 listing the findings")

    def _sent(self, ex_id: int) -> Seen | None:
        seen = self._open.pop(ex_id, None)
        if seen is None:
            return None
        self.tracker.record_request(seen.conv, seen.body, seen.findings, seen.messages,
                                    wire=seen.wire.name, tools=_chat_tools(seen))
        return seen

    def on_response(self, ex_id: int, status: int, data: bytes, latency_ms: float,
                    stream: bool) -> None:
        seen = self._sent(ex_id)
        if seen is None:
            return
        try:
            got = read_reply(seen.wire, status, data, stream)
        except Exception as exc:  # noqa: BLE001 - the request is recorded; say what was not
            got = Replied(None, error=f"HTTP {status}: agentdbg could not read this response "
                                      f"({_why(exc)})")
        reply = strip_wire(got.reply.message) if got.reply is not None else None
        self.tracker.record_response(
            seen.conv, seen.messages, reply, usage=got.reply.usage if got.reply else None,
            finish=got.reply.finish_reason if got.reply else None, latency_ms=latency_ms,
            error=got.error, status=status, stream_shape=got.shape if stream else None,
            native=got.native if seen.wire.name == "responses" and isinstance(got.native, dict)
            else None)
        if reply is not None and seen.wire.name == "responses" and isinstance(got.native, dict) \
                and isinstance(got.native.get("id"), str):
            seen.conv.outputs.extend(seen.wire.output(got.native))
            self.tracker.remember(got.native["id"], seen.conv,
                                  history_of(seen.messages, seen.sources, reply),
                                  chain_items(seen.body, seen.chain, seen.wire.output(got.native)))
        if reply is not None:
            self.view.show_response(seen, reply, got.native, got.shape, latency_ms)
        else:
            self.view.note(f"upstream answered HTTP {status}: {got.error}")

    def on_scripted(self, ex_id: int, body: dict, reply: dict) -> None:
        seen = self._open.pop(ex_id, None)
        if seen is None:
            return
        self.tracker.record_request(seen.conv, seen.body, [], seen.messages, wire=seen.wire.name,
                                    tools=_chat_tools(seen))
        self.tracker.record_response(seen.conv, seen.messages, reply, usage={}, finish=None,
                                     latency_ms=0)
        native = seen.wire.answer(reply, seen.body, {}, None)
        self.view.show_response(seen, reply, native, ["scripted by you, not the upstream"], 0)

    def on_failed(self, ex_id: int, message: str) -> None:
        seen = self._sent(ex_id)
        if seen is not None:
            self.tracker.record_response(seen.conv, seen.messages, None, usage=None, finish=None,
                                         latency_ms=0, error=message, status=502)
        self.view.note(message)

    def on_note(self, text: str) -> None:
        self.view.note(text)

    def on_secret(self, token: str) -> None:
        self.tracker.add_secret(token)

    def on_close(self) -> list[Path]:
        for ex_id in list(self._open):   # relayed, never answered: recorded, then cancelled
            self._sent(ex_id)
        return self.tracker.close()


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _chat_tools(seen: Seen) -> list | None:
    from agentdbg.wire.common import strip_wire

    return strip_wire(seen.form.tools) if seen.form is not None else None


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
                 stream: bool = False) -> None:
        self._put(("response", exchange.id, status, data, latency_ms, stream))

    def scripted(self, exchange: Exchange, body: dict, reply: dict) -> None:
        self._put(("scripted", exchange.id, body, reply))

    def upstream_failed(self, exchange: Exchange, message: str) -> None:
        self._put(("failed", exchange.id, message))

    def note(self, text: str) -> None:
        self._put(("note", text))

    def add_secret(self, token: str) -> None:
        self._put(("secret", token))

    def _resolve(self, ex_id: int, verdict: Verdict) -> None:
        with self._lock:
            future = self._waiting.pop(ex_id, None)
        if future is not None and not future.done():
            future.set_result(verdict)


def _run_job(analysis: Analysis, job: tuple) -> Any:
    try:
        return analysis.handle(job)
    except Exception as exc:  # noqa: BLE001 - analysis must never stop the relay
        with contextlib.suppress(Exception):  # e.g. the terminal is gone
            analysis.view.note(f"agentdbg could not analyse this exchange: {type(exc).__name__}: {exc}")
        return Verdict(note="not analysed") if job[0] == "request" else None


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

    def close(self, timeout: float = 30.0) -> list[Path]:
        done: Future = Future()
        self._jobs.put(("_sync", done, ("close",)))
        return done.result(timeout) or []


class ProcessAnalyst(_Analyst):
    """The analyst in a child process: the relay's interpreter only forwards bytes."""

    def __init__(self, make_analysis: Callable[[], Analysis]):
        import multiprocessing

        super().__init__()
        ctx = multiprocessing.get_context("fork")
        self._jobs = ctx.Queue()
        self._results = ctx.Queue()
        self._synced: dict[int, Future] = {}
        self._process = ctx.Process(target=_child, args=(make_analysis, self._jobs, self._results),
                                    name="agentdbg-analyst", daemon=True)
        self._process.start()
        threading.Thread(target=self._read, name="agentdbg-verdicts", daemon=True).start()

    def _put(self, job: tuple) -> None:
        self._jobs.put(job)

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

    def _sync(self, job: tuple, timeout: float) -> Any:
        future: Future = Future()
        key = next(self._ids)
        with self._lock:
            self._synced[key] = future
        self._jobs.put(("_sync", key, job))
        return future.result(timeout)

    def drain(self, timeout: float = 30.0) -> None:
        self._sync(("note_nothing",), timeout)

    def close(self, timeout: float = 60.0) -> list[Path]:
        import concurrent.futures
        import sys

        paths: list[Path] = []
        try:
            paths = self._sync(("close",), timeout) or []
        except concurrent.futures.TimeoutError:
            print(f"agentdbg: warning: the analysis was still {timeout:g} s behind the traffic when "
                  "the proxy stopped; the last conversations' transcripts lack their stop event",
                  file=sys.stderr)
        finally:
            self._jobs.put(None)
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
                # jobs the child never read must not keep this process from exiting
                self._jobs.cancel_join_thread()
        return paths


PARENT_CHECK_SECONDS = 1.0  # how often an idle analyst checks that the proxy is still there


def _child(make_analysis: Callable[[], Analysis], jobs, results) -> None:
    """The analyst process: jobs in, verdicts out, until the proxy says stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the proxy decides when we stop
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _yield_cpu()
    parent = os.getppid()
    analysis = make_analysis()
    while True:
        try:
            job = jobs.get(timeout=PARENT_CHECK_SECONDS)
        except queue.Empty:
            if os.getppid() == parent:
                continue
            # the proxy was killed (no "close" will come): what it relayed is already in the
            # queue and now analysed; end the transcripts as a stop would, then go
            results.cancel_join_thread()     # nobody reads the results any more
            _unyield_cpu()
            _run_job(analysis, ("close",))
            break
        if job is None:
            break
        if job[0] == "_sync":
            _, key, inner = job
            if inner[0] == "close":  # the proxy is stopping: finish the backlog at full speed
                _unyield_cpu()
            value = None if inner[0] == "note_nothing" else _run_job(analysis, inner)
            results.put(("sync", key, value))
            continue
        result = _run_job(analysis, job)
        if job[0] == "request" and job[4]:  # the relay waits for it (--block-invalid)
            with contextlib.suppress(Exception):
                results.put(("verdict", job[1], Verdict(result.conversation, None,
                                                        result.findings, result.note, result.wire)))


def _yield_cpu() -> None:
    """Run only on CPU time nobody else wants: the relay, the upstream and the app go first
    (SCHED_IDLE on Linux, else the lowest priority); the analysis catches up after."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        with contextlib.suppress(AttributeError, OSError):
            os.nice(19)


def _unyield_cpu() -> None:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))  # type: ignore[attr-defined]
