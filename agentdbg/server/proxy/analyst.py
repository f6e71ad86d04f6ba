"""Everything the proxy learns from the traffic, done away from the relay, in order.

The relay only reads bytes and forwards them; it hands each request and each response
to the analyst, which parses, assigns the conversation, checks, records the
transcript and prints — in the order the traffic happened, so the cross-request rules
see the loop as the app ran it.

This module is the analysis itself (``Analysis``: one job at a time); ``workers`` runs it in
a child process (by default: checking and printing a 1,000-message history costs the app
nothing) or on a thread (``--intercept``). With ``--block-invalid`` the relay waits for the
request's verdict (that is the point of the flag). A body the analysis never got (``Dropped``:
the backlog was full, or the proxy stopped first) is counted and named at stop.
"""

from __future__ import annotations

import contextlib
import json
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentdbg import schemas
from agentdbg.checker import has_errors
from agentdbg.i18n import N_, Msg, _, recorded, tr
from agentdbg.server.proxy.conversations import Tracker
from agentdbg.server.proxy.copies import Cut, decoded, size_said
from agentdbg.server.proxy.reading import Replied, Seen, judge, read_reply, rejudge
from agentdbg.server.proxy.spool import Dropped
from agentdbg.server.served import chain_items, history_of
from agentdbg.wire import codec as codecs
from agentdbg.wire.common import OUTPUT_END, strip_wire

if TYPE_CHECKING:
    from agentdbg.server.proxy.view import ProxyView
    from agentdbg.wire.codec import Codec


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
class Finished:
    """What the analysis leaves at stop: the transcripts, and what it could not record."""

    paths: list[Path] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    still_open: int = 0            # transcripts whose stop event is still to be written


class Analyses(Protocol):
    """What a worker runs (``workers``): this module's ``Analysis``, or ``collect``'s ``Feed``."""

    view: Any

    def warm(self) -> None: ...

    def handle(self, job: tuple) -> Any: ...


@dataclass
class Exchange:
    """One request through the proxy, as the relay knows it."""

    id: int
    verdict: Future = field(default_factory=Future)


class Analysis:
    """The analyst's work, one job at a time: it owns the conversations and the view."""

    def __init__(self, tracker: Tracker, view: ProxyView, profile: str) -> None:
        self.tracker = tracker
        self.view = view
        self.profile = profile
        self._open: dict[int, Seen | None] = {}
        self.unrecorded: list[str] = []     # relayed, not recorded (or only in part): why
        tracker.say = view.note
        view.tracker_parent = tracker.parent_of
        self.skips = schemas.Skips()      # schemas left unchecked (work budget): said once

    @staticmethod
    def warm() -> None:
        """Load now what the first exchange would load on its way (each format's codec and
        chat conversion, the checker of each format, the messages view): done at the first request,
        it delayed that request's analysis (and with --block-invalid the request itself) by
        hundreds of ms."""
        import importlib

        for module in ("agentdbg.wire.anthropic", "agentdbg.wire.responses", "agentdbg.wire.gemini",
                       "agentdbg.checker.formats", "agentdbg.render.view"):
            importlib.import_module(module)
        codecs.every()

    def handle(self, job: tuple) -> Any:
        kind, *args = job
        return getattr(self, f"on_{kind}")(*args)

    def on_request(self, ex_id: int, raw: bytes | Dropped, client: str | None,
                   want_verdict: bool = False, wire_name: str = "chat") -> Verdict:
        wire = codecs.get(wire_name)
        if isinstance(raw, Dropped):   # relayed, never seen here: named at stop
            self._open[ex_id] = None
            self.unrecorded.append(
                _("the proxy's request #{id} ({api}, {size}, from {client}): not recorded: {why}").format(
                    id=ex_id, api=wire.label, size=tr(size_said(raw.size)), why=raw.why.tr(),
                    client=client or _("an unknown client")))
            self.view.note(_("request #{id} was relayed but is not recorded: {why}").format(
                id=ex_id, why=raw.why.tr()))
            return Verdict(note=f"not recorded: {raw.why}")
        deep = False
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        except RecursionError:
            body, deep = None, True
        if body is None or wire.shape_error(body) is not None:
            note = (N_("a {api} request nested too deeply for agentdbg to read; passed through "
                       "unchecked and unrecorded") if deep else
                    N_("a request that is not a {api} body; passed through unchecked"))
            self._open[ex_id] = None
            self.view.note(_(note).format(api=wire.label))
            return Verdict(note=note.format(api=wire.label))
        try:
            with schemas.noting_skips(self.skips):
                seen = judge(wire, body, self.tracker, client, self.profile)
        except Exception as exc:  # noqa: BLE001 - what is relayed is recorded, checked or not
            seen = self._unchecked(wire, body, client)
            self._follow(ex_id, seen, len(raw))
            self.view.note(_("agentdbg could not check this {api} request ({error}); it is recorded "
                             "unchecked in conversation {n}").format(api=wire.label, error=_why(exc),
                                                                     n=seen.conv.number))
            return Verdict(seen.conv.number, body, [], wire=wire_name)
        self._follow(ex_id, seen, len(raw))
        self.view.show_request(seen)
        for line in self.skips.take():   # English as noted; said in the chosen language
            self.view.note(schemas.skip_text(line))
        return Verdict(seen.conv.number, body, seen.findings, wire=wire_name)

    def _follow(self, ex_id: int, seen: Seen, size: int) -> None:
        """``seen`` waits for its response; the tracker weighs what it follows."""
        self._open[ex_id] = seen
        busy = {s.conv.number for s in self._open.values() if s is not None}
        self.tracker.weigh(seen.conv, size, busy)

    def _unchecked(self, wire: Codec, body: dict, client: str | None) -> Seen:
        """A request the checks could not get through (nested too deeply, say): its
        conversation and chat form as far as they can be had, no findings."""
        messages: list = []
        with contextlib.suppress(Exception):
            messages = body["messages"] if wire.chat_native else \
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
        self.view.note(_("blocked: answered the app with HTTP 400 listing the findings"))

    def _sent(self, ex_id: int) -> Seen | None:
        seen = self._open.pop(ex_id, None)
        if seen is None:
            return None
        self.tracker.record_request(seen.conv, seen.body, seen.findings, seen.messages,
                                    wire=seen.wire.name, tools=_chat_tools(seen))
        return seen

    def on_response(self, ex_id: int, status: int, data: bytes | Dropped, latency_ms: float,
                    stream: bool, received: int | None = None, cut_by: str | None = None,
                    encoding: str | None = None) -> None:
        """``received``: the bytes the upstream sent (``data`` may be its first ones only, see
        ``copies``); ``encoding``: its content encoding, undone here with a cap."""
        seen = self._sent(ex_id)
        if seen is None:
            return
        if isinstance(data, Dropped):
            self._unread(seen, status, latency_ms, data)
            return
        notes = [n for n in (Cut(received if received is not None else len(data), len(data),
                                 cut_by).note(),) if n]
        body, undone = decoded(data, encoding)
        notes += [undone] if undone else []
        for note in notes:   # English, as the transcript records it
            self.view.note(_("conversation {n}: {note}").format(n=seen.conv.number,
                                                                note=recorded(note, nested=True)))
        if body is None:
            got = Replied(None, error=f"HTTP {status}: {undone}")
        else:
            try:
                got = read_reply(seen.wire, status, body, stream)
            except Exception as exc:  # noqa: BLE001 - the request is recorded; say what was not
                got = Replied(None, error=f"HTTP {status}: " + N_(
                    "agentdbg could not read this response ({error})").format(error=_why(exc)))
        if got.error is not None and notes and body is not None:
            got.error = f"{got.error} ({'; '.join(notes)})"
        reply = strip_wire(got.reply.message) if got.reply is not None else None
        self.tracker.record_response(
            seen.conv, seen.messages, reply, usage=got.reply.usage if got.reply else None,
            finish=got.reply.finish_reason if got.reply else None, latency_ms=latency_ms,
            error=got.error, status=status, stream_shape=[*notes, *(got.shape if stream else [])],
            native=got.native if seen.wire.stores and isinstance(got.native, dict)
            else None)
        if reply is not None and seen.wire.stores and isinstance(got.native, dict) \
                and isinstance(got.native.get("id"), str):
            seen.conv.outputs.extend([{"type": OUTPUT_END}, *seen.wire.output(got.native)])
            self.tracker.remember(got.native["id"], seen.conv,
                                  history_of(seen.messages, seen.sources, reply),
                                  chain_items(seen.body, seen.chain, seen.wire.output(got.native)))
        if reply is not None:
            self.view.show_response(seen, reply, got.native, got.shape, latency_ms)
        else:
            self.view.note(_("upstream answered HTTP {status}: {error}").format(
                status=status, error=_said_error(got.error or "", status)))

    def _unread(self, seen: Seen, status: int, latency_ms: float, dropped: Dropped) -> None:
        """A response relayed to the app that the analysis never got to read."""
        message = Msg(N_("HTTP {status}: the upstream answered ({size}, relayed to the app) but "
                         "agentdbg did not analyse the response: {why}"),
                      {"status": status, "size": size_said(dropped.size), "why": dropped.why})
        self.tracker.record_response(seen.conv, seen.messages, None, usage=None, finish=None,
                                     latency_ms=latency_ms, error=str(message), status=status)
        self.unrecorded.append(_("conversation {n}, request {request}: its response was not "
                                 "analysed: {why}").format(n=seen.conv.number, request=seen.conv.requests,
                                                           why=dropped.why.tr()))
        self.view.note(_("conversation {n}: {note}").format(n=seen.conv.number, note=message.tr()))

    def on_scripted(self, ex_id: int, body: dict, reply: dict) -> None:
        seen = self._open.pop(ex_id, None)
        if seen is None:
            return
        self.tracker.record_request(seen.conv, seen.body, [], seen.messages, wire=seen.wire.name,
                                    tools=_chat_tools(seen))
        self.tracker.record_response(seen.conv, seen.messages, reply, usage={}, finish=None,
                                     latency_ms=0)
        native = seen.wire.answer(reply, seen.body, {}, None)
        self.view.show_response(seen, reply, native, [N_("scripted by you, not the upstream")], 0)

    def on_failed(self, ex_id: int, message: str, status: int = 502) -> None:
        seen = self._sent(ex_id)
        if seen is not None:
            self.tracker.record_response(seen.conv, seen.messages, None, usage=None, finish=None,
                                         latency_ms=0, error=message, status=status)
        self.view.note(message)

    def on_note(self, text: str) -> None:
        self.view.note(text)

    def on_secret(self, token: str) -> None:
        self.tracker.add_secret(token)

    def on_close(self) -> list[Path]:
        for ex_id in list(self._open):   # relayed, never answered: recorded, then cancelled
            self._sent(ex_id)
        return self.tracker.close()

    def on_settle(self) -> Finished:
        """What could not be recorded so far, before the stop events are written (writing
        them may take long: each repeats its conversation's last request)."""
        return Finished([], self.unrecorded + self.tracker.unwritten(),
                        sum(c.writer is not None for c in self.tracker.conversations))

    def on_finish(self) -> Finished:
        """``close``, and what could not be recorded (said at stop)."""
        paths = self.on_close()
        return Finished(paths, self.unrecorded + self.tracker.unwritten())


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _chat_tools(seen: Seen) -> list | None:
    from agentdbg.wire.common import strip_wire

    return strip_wire(seen.form.tools) if seen.form is not None else None


def _said_error(error: str, status: int) -> str:
    """A recorded error (English) in the chosen language: agentdbg's own words read back from
    their templates, the API's own words verbatim; the status it starts with kept."""
    head = f"HTTP {status}: "
    if error.startswith(head):
        return head + recorded(error[len(head):], nested=True)
    return recorded(error, nested=True)


def _run_job(analysis: Analyses, job: tuple) -> Any:
    try:
        return analysis.handle(job)
    except Exception as exc:  # noqa: BLE001 - analysis must never stop the relay
        with contextlib.suppress(Exception):  # e.g. the terminal is gone
            analysis.view.note(_("agentdbg could not analyse this exchange: {error}").format(
                error=f"{type(exc).__name__}: {exc}"))
        return Verdict(note="not analysed") if job[0] == "request" else None
