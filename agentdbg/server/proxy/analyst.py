"""Everything the proxy learns from the traffic, done off the event loop, in order.

The relay only reads bytes and forwards them; it hands each request and each response
to the ``Analyst``, a single worker thread that parses, assigns the conversation,
checks, records the transcript and prints — in the order the traffic happened, so the
cross-request rules see the loop as the app ran it. With ``--block-invalid`` or
``--intercept`` the relay waits for the request's verdict (that is the point of those
flags); otherwise nothing the analyst does delays the app.
"""

from __future__ import annotations

import json
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from agentdbg.checker import check, has_errors
from agentdbg.server.proxy.conversations import Conversation, Tracker


@dataclass
class Verdict:
    """What the analyst found in one request (and the conversation it belongs to)."""

    conv: Conversation | None = None
    body: dict | None = None
    findings: list = field(default_factory=list)
    note: str | None = None            # not a chat body: passed through unchecked

    @property
    def blocking(self) -> bool:
        return has_errors(self.findings)


@dataclass
class Exchange:
    """One request through the proxy, as the analyst tracks it."""

    raw: bytes
    client: str | None
    verdict: Future = field(default_factory=Future)
    sent_body: dict | None = None      # the body as forwarded, when the user edited it


class Analyst:
    def __init__(self, tracker: Tracker, view, profile: str):
        self.tracker = tracker
        self.view = view
        self.profile = profile
        self._jobs: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="agentdbg-analyst", daemon=True)
        self._thread.start()

    # -- called from the event loop: never blocks --------------------------------------
    def request(self, raw: bytes, client: str | None) -> Exchange:
        exchange = Exchange(raw, client)
        self._jobs.put((self._on_request, exchange))
        return exchange

    def blocked(self, exchange: Exchange) -> None:
        self._jobs.put((self._on_blocked, exchange))

    def response(self, exchange: Exchange, status: int, data: bytes, latency_ms: float,
                 stream: bool = False) -> None:
        self._jobs.put((self._on_response, exchange, status, data, latency_ms, stream))

    def scripted(self, exchange: Exchange, body: dict, reply: dict) -> None:
        self._jobs.put((self._on_scripted, exchange, body, reply))

    def upstream_failed(self, exchange: Exchange, message: str) -> None:
        self._jobs.put((self._on_failed, exchange, message))

    def note(self, text: str) -> None:
        self._jobs.put((self.view.note, text))

    def drain(self, timeout: float = 10.0) -> None:
        """Wait until everything handed over so far is done (tests, shutdown)."""
        done = threading.Event()
        self._jobs.put((done.set,))
        done.wait(timeout)

    # -- the worker ----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            fn, *args = self._jobs.get()
            try:
                fn(*args)
            except Exception as exc:  # noqa: BLE001 - analysis must never stop the relay
                for arg in args:  # a relay waiting for this verdict goes on unchecked
                    if isinstance(arg, Exchange) and not arg.verdict.done():
                        arg.verdict.set_result(Verdict(note="not analysed"))
                self.view.note(f"agentdbg could not analyse this exchange: {type(exc).__name__}: {exc}")

    def _on_request(self, exchange: Exchange) -> None:
        try:
            body = json.loads(exchange.raw)
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            note = "a request that is not a chat completion body; passed through unchecked"
            exchange.verdict.set_result(Verdict(note=note))
            self.view.note(note)
            return
        messages = body["messages"]
        conv = self.tracker.assign(messages, exchange.client)
        findings = self.tracker.check(conv, messages) + check(body, self.profile)
        try:
            self.view.show_request(conv, body, findings)  # shown before any pause for it
        finally:
            exchange.verdict.set_result(Verdict(conv, body, findings))

    def _on_blocked(self, exchange: Exchange) -> None:
        v: Verdict = exchange.verdict.result()
        if v.conv is not None and v.body is not None:
            self.tracker.record_blocked(v.conv, v.body, v.findings)
        self.view.note("blocked: answered the app with HTTP 400 listing the findings")

    def _recorded(self, exchange: Exchange) -> Verdict | None:
        v: Verdict = exchange.verdict.result()
        if v.conv is None or v.body is None:
            return None
        if exchange.sent_body is not None:  # edited at the intercept prompt: judge what was sent
            body = exchange.sent_body
            v = Verdict(v.conv, body, v.conv.rules.check(body.get("messages") or [])
                        + check(body, self.profile))
        self.tracker.record_request(v.conv, v.body or {}, v.findings)
        return v

    def _on_response(self, exchange: Exchange, status: int, data: bytes, latency_ms: float,
                     stream: bool) -> None:
        v = self._recorded(exchange)
        if v is None or v.conv is None or v.body is None:
            return
        messages = v.body["messages"]
        if stream:
            from agentdbg.wire.chat import StreamAccumulator

            acc = StreamAccumulator()
            acc.feed(data)
            self.tracker.record_response(v.conv, messages, acc.message, usage=acc.usage,
                                         finish=acc.finish_reason, latency_ms=latency_ms,
                                         stream_shape=acc.shape())
            self.view.show_response(v.conv, messages, acc.message, acc.shape(), latency_ms)
            return
        reply, usage, finish, error = _plain_reply(status, data)
        self.tracker.record_response(v.conv, messages, reply, usage=usage, finish=finish,
                                     latency_ms=latency_ms, error=error, status=status)
        if reply is not None:
            self.view.show_response(v.conv, messages, reply, [], latency_ms)
        else:
            self.view.note(f"upstream answered HTTP {status}: {error}")

    def _on_scripted(self, exchange: Exchange, body: dict, reply: dict) -> None:
        v: Verdict = exchange.verdict.result()
        if v.conv is None:
            return
        self.tracker.record_request(v.conv, body, [])
        self.tracker.record_response(v.conv, body["messages"], reply, usage={}, finish=None,
                                     latency_ms=0)
        self.view.show_response(v.conv, body["messages"], reply,
                                ["scripted by you, not the upstream"], 0)

    def _on_failed(self, exchange: Exchange, message: str) -> None:
        v = self._recorded(exchange)
        if v is not None and v.conv is not None and v.body is not None:
            self.tracker.record_response(v.conv, v.body["messages"], None, usage=None, finish=None,
                                         latency_ms=0, error=message, status=502)
        self.view.note(message)


def _plain_reply(status: int, data: bytes) -> tuple[dict | None, Any, Any, str | None]:
    try:
        doc = json.loads(data)
        choice = (doc.get("choices") or [{}])[0]
        reply, usage, finish = choice.get("message"), doc.get("usage"), choice.get("finish_reason")
        if status >= 400 or not isinstance(reply, dict):
            error = str((doc.get("error") or {}).get("message") or doc)[:500]
            return None, usage, finish, error
        return reply, usage, finish, None
    except (ValueError, AttributeError, TypeError, IndexError, RecursionError):
        return None, None, None, f"HTTP {status}: a body that is not a chat completion"

