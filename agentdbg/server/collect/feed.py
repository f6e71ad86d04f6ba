"""What ``collect`` does with each export it received, away from the receiver, in order.

The receiver only reads bytes and answers; each export goes, as a job, to a child process (the
proxy's analyst machinery, ``server.proxy.workers.ProcessAnalyst``: its queue bounded in memory,
spilling to disk past that), where ``Feed`` — the analysis — decodes it (gzip undone with a cap,
OTLP JSON or protobuf), turns its spans into calls (``traces.otlp.Assembler``: one conversation
per trace and agent), checks each request as the proxy does (the format's rules on the body,
the cross-request rules on the conversation), writes it to the conversation's transcript
(``transcript.imported.Recorder``, the proxy's shape) and draws it as the proxy draws it. The
child has an interpreter of its own: turning spans into conversations never holds up the
receiver's answers. A bad export is one line on the console, never a stop. At stop the child
finishes what is queued, ends every transcript and says the summary.
"""

from __future__ import annotations

import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.checker.rules.conversation import ConversationRules
from agentdbg.i18n import N_, Msg, _, ngettext, tr
from agentdbg.traces.exchange import Called, Thread
from agentdbg.traces.otlp import Assembler
from agentdbg.traces.spans import OtlpError, Span, from_json, from_protobuf
from agentdbg.transcript.imported import Recorder, Written, chat_of
from agentdbg.wire import codec as codecs
from agentdbg.wire.common import strip_wire

MAX_DECODED = 64 << 20       # bytes of one export once gzip is undone
BEHIND = 0.25                # seconds an export waited (the worker started): catching up, drawn in brief


@dataclass
class Export:
    number: int
    body: bytes
    content_type: str
    encoding: str | None
    received: float = 0.0       # time.monotonic() when it arrived (one clock for both processes)

    def job(self) -> tuple:
        """The worker's job for it (the body third: where the spool finds it)."""
        return ("export", self.number, self.body, self.content_type, self.encoding, self.received)


@dataclass
class Stats:
    exports: int = 0
    spans: int = 0
    calls: int = 0
    findings: int = 0
    dropped: int = 0
    unreadable: int = 0
    bad: list[Msg] = field(default_factory=list)      # the first 1,000 unreadable exports, said


class _Conv:
    """What the drawing reads of a conversation (the proxy view's ``seen.conv``)."""

    def __init__(self, number: int):
        self.number = number
        self.rules = ConversationRules()
        # what the proxy view reads of a conversation's place in a run's tree: spans carry the
        # agent on the import side (``agentdbg import``); the live view draws each conversation alone
        self.agent: str | None = None
        self.started_by: Any = None
        self.children: dict[str, Any] = {}
        self.requests = 0
        self.last_messages: list[Any] = []


@dataclass
class _Seen:
    """One request as the proxy view draws it."""

    wire: Any
    body: dict[str, Any]
    conv: _Conv
    messages: list[Any]
    findings: list[Any]
    new_from: int = 0
    pairing: Any = None
    notes: list[str] = field(default_factory=list)
    edits: list[Any] = field(default_factory=list)   # history edits: the view's notes of them


def decode(export: Export) -> list[Span]:
    """The spans of one export (``OtlpError`` naming what it is not)."""
    data = export.body
    if export.encoding == "gzip":
        data = _gunzip(data)
    elif export.encoding not in (None, "", "identity"):
        raise OtlpError(Msg("content encoding {encoding} is not supported (gzip is)",
                            {"encoding": repr(export.encoding)}))
    if export.content_type.startswith("application/json"):
        import json

        try:
            doc = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise OtlpError(Msg("invalid JSON: {problem}", {"problem": getattr(exc, "msg", exc)})) from None
        return from_json(doc)
    return from_protobuf(data)


def _gunzip(data: bytes) -> bytes:
    """gzip undone, refusing more than ``MAX_DECODED`` bytes (a small bomb stays small)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, MAX_DECODED + 1)
    except zlib.error as exc:
        raise OtlpError(Msg("not gzip data ({why})", {"why": exc})) from None
    if len(out) > MAX_DECODED:
        raise OtlpError(Msg("more than {mb} MB once decompressed", {"mb": MAX_DECODED >> 20}))
    return out


class Feed:
    """The analysis (in the worker's child process): export jobs in, conversations out."""

    def __init__(self, folder: Path, label: str, view: Any, profile: str = "openai"):
        self.recorder = Recorder(folder, label, origin="otlp collect")
        self.assembler = Assembler()
        self.view = view
        self.profile = profile
        self.stats = Stats()
        self.convs: dict[str, _Conv] = {}
        self.written: list[Written] = []
        self.ready = 0.0          # when warm: what waited before it, waited for the worker to start

    def warm(self) -> None:
        """Load now what the first export would load on its way (the proxy analyst's set);
        from then on, an export that waited is one the worker was behind on."""
        from agentdbg.server.proxy.analyst import Analysis

        Analysis.warm()
        self.ready = time.monotonic()

    def handle(self, job: tuple) -> Any:
        kind, *args = job
        return getattr(self, f"on_{kind}")(*args)

    def on_export(self, number: int, body: Any, content_type: str, encoding: str | None,
                  received: float = 0.0) -> None:
        if not isinstance(body, (bytes, bytearray)):   # Dropped: the backlog was full, or the stop cut it
            self.stats.dropped += 1
            return
        # behind (it waited): a call is drawn only when it has findings, the rest are one line
        # for the export — drawing every call would never catch up
        brief = received > 0 and time.monotonic() - max(received, self.ready) > BEHIND
        self.take(Export(number, bytes(body), content_type, encoding, received), brief)

    def on_note(self, text: str) -> None:
        if self.view is not None:
            self.view.note(text)

    def on_settle(self) -> Any:
        from agentdbg.server.proxy.analyst import Finished

        return Finished(still_open=sum(1 for c in self.recorder.conversations.values()
                                       if c.written is None))

    def on_finish(self) -> Any:
        """Every transcript ended, the summary said; what was written."""
        from agentdbg.server.proxy.analyst import Finished

        self.written = self.recorder.close()
        summary(self.stats, self.written)
        return Finished(paths=[w.path for w in self.written])

    def on_close(self) -> list[Path]:
        """``collect`` was killed: end the transcripts, as a stop would."""
        self.written = self.recorder.close()
        return [w.path for w in self.written]

    def take(self, export: Export, brief: bool = False) -> None:
        """Read one export (``brief``: draw only the calls with findings)."""
        try:
            self.handle_export(export, brief)
        except Exception as exc:  # noqa: BLE001 - one export's failure never stops the rest
            self._said(Msg("export {number}: agentdbg could not read it ({error}: {why})",
                           {"number": export.number, "error": type(exc).__name__,
                            "why": _why(exc)}))

    def handle_export(self, export: Export, brief: bool = False) -> None:
        self.stats.exports += 1
        try:
            spans = decode(export)
        except OtlpError as exc:
            self._said(_unreadable(export.number, exc))
            return
        self.stats.spans += len(spans)
        quiet: list[int] = []
        for item in self.assembler.feed(spans):
            if isinstance(item, Thread):
                self.recorder.add(item)
            elif isinstance(item, Called):
                number = self._call(item, brief)
                if number is not None:
                    quiet.append(number)
        if quiet and self.view is not None:
            convs = sorted(set(quiet))
            self.view.note(ngettext(
                "export {export}: {n} call with no finding in conversation(s) {numbers} (not drawn: "
                "collect is catching up)",
                "export {export}: {n} calls with no finding in conversation(s) {numbers} (not drawn: "
                "collect is catching up)", len(quiet)).format(export=export.number, n=len(quiet),
                                                               numbers=_numbers(convs)))

    def _call(self, called: Called, brief: bool = False) -> int | None:
        """Check, record and draw one call; in ``brief`` mode one with no finding is not drawn
        (its conversation's number is returned, for the export's line)."""
        from agentdbg.checker import check

        thread = self.recorder.threads[called.key]
        codec = codecs.get(thread.wire)
        body = called.exchange.body
        messages, _tools = chat_of(thread.wire, body)
        conv = self.convs.get(called.key)
        fresh = conv is None
        if conv is None:
            conv = self.convs[called.key] = _Conv(len(self.convs) + 1)
        new_from = 0 if fresh else _common(conv.rules.last_messages, messages)
        findings = conv.rules.check(messages) + check(body, self.profile)
        self.recorder.add(called, [f.to_dict() for f in findings])
        self.stats.calls += 1
        self.stats.findings += len(findings)
        seen = _Seen(codec, body, conv, messages, findings, new_from)
        reply = codec.reply(called.exchange.reply) if called.exchange.reply is not None else None
        message = strip_wire(reply.message) if reply is not None else None
        conv.rules.saw_response(messages, message)
        if self.view is None:
            return None
        if brief and not findings and message is not None:
            return conv.number
        self.view.show_request(seen)
        if message is not None:
            self.view.show_response(seen, message, called.exchange.reply, [],
                                    called.exchange.latency_ms or 0.0)
        else:
            self.view.note(_("conversation {n}: no reply: {error}").format(
                n=conv.number, error=called.exchange.error))
        return None

    def _said(self, said: Msg) -> None:
        """One export that could not be read: kept (English, as ``str``) and drawn in the
        chosen language."""
        self.stats.unreadable += 1
        if len(self.stats.bad) < 1000:
            self.stats.bad.append(said)
        if self.view is not None:
            self.view.note(tr(said))


#: an export that is not OTLP; the decoder's own sentence already says so when it begins
#: "not an OTLP …" (JSON without 'resourceSpans', protobuf that does not parse)
NOT_OTLP = N_("export {number}: not an OTLP trace export: {problem}")
NOT_OTLP_SAID = N_("export {number}: {problem}")


def _unreadable(number: int, exc: OtlpError) -> Msg:
    problem = _why(exc)
    says_so = isinstance(problem, Msg) and "not an OTLP" in problem.template
    return Msg(NOT_OTLP_SAID if says_so else NOT_OTLP, {"number": number, "problem": problem})


def _why(exc: BaseException) -> Any:
    """What ``exc`` says: its ``Msg`` (shown in the chosen language) or its own text."""
    said = exc.args[0] if len(exc.args) == 1 else None
    return said if isinstance(said, Msg) else str(exc)


def summary(s: Stats, written: list[Written]) -> None:
    """What collect read and wrote, on stderr (said by the worker when it finishes)."""
    from agentdbg.textsafe import one_line

    lines = [_("{exports} export(s), {spans} span(s), {calls} model call(s) in {n} conversation(s); "
               "findings: {findings}").format(exports=s.exports, spans=s.spans, calls=s.calls,
                                              n=len(written), findings=s.findings or _("none"))]
    if s.unreadable:
        lines.append(_("{n} export(s) could not be read (each is said above, as it came)").format(
            n=s.unreadable))
    if s.dropped:
        lines.append(_("{n} export(s) not read: the backlog was full, or collect stopped before it "
                       "got to them").format(n=s.dropped))
    for w in written:
        agent = f" · {w.thread.agent}" if w.thread.agent else ""
        lines.append("  " + ngettext("conversation {n}{agent}: {requests} request  {path}",
                                     "conversation {n}{agent}: {requests} requests  {path}",
                                     w.requests).format(n=w.number, agent=agent, requests=w.requests,
                                                        path=w.path))
    notes = {str(n): n for w in written if (n := w.thread.missing_note())}
    lines.extend("  " + _("note: {note}").format(note=tr(notes[n])) for n in sorted(notes))
    for line in lines:
        print(f"agentdbg collect: {one_line(line)}" if not line.startswith("  ") else one_line(line),
              file=sys.stderr, flush=True)


def _numbers(numbers: list[int]) -> str:
    """1, 2, 3, 5 -> "1–3, 5"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def _common(before: list[Any], now: list[Any]) -> int:
    from agentdbg.transcript.compare import common_prefix

    return common_prefix(before, now)
