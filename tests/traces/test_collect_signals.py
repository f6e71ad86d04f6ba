"""collect stopped by a signal, as a real process: SIGTERM (a supervisor) loses nothing received —
the worker finishes every export still queued and ends the transcripts; a crash of the receiving
process (SIGKILL) still leaves what the worker had read as complete transcripts."""

from __future__ import annotations

import signal
import time

import httpx

from agentdbg.errors import InputError
from agentdbg.transcript import load_transcript
from agentdbg.transcript.events import Request

from .collecting import Collect
from .otlp_exports import export


def _burst(collect: Collect, n: int) -> None:
    with httpx.Client(trust_env=False, timeout=30) as client:
        for i in range(n):
            answer = client.post(collect.endpoint + "/v1/traces", content=export(i * 10),
                                 headers={"content-type": "application/x-protobuf"})
            assert answer.status_code == 200


def _requests(collect: Collect) -> int:
    """The requests saved so far (a transcript being written may not have its header yet)."""
    return sum(_read(p, lambda t: sum(isinstance(e, Request) for e in t.events), 0)
               for p in collect.transcripts())


def _ended(path) -> bool:
    return _read(path, lambda t: t.stop is not None, False)


def _read(path, what, otherwise):
    try:
        return what(load_transcript(path))
    except InputError:
        return otherwise


def test_sigterm_right_after_a_burst_loses_nothing_received(tmp_path):
    collect = Collect(tmp_path)
    try:
        _burst(collect, 20)
    finally:
        collect.proc.send_signal(signal.SIGTERM)     # at once: most of the burst still queued
        collect.proc.wait(120)
    said = collect.log.read_text(encoding="utf-8")
    assert "20 export(s), 2000 span(s), 2000 model call(s) in 200 conversation(s)" in said, said
    assert "not read" not in said and "Traceback" not in said
    saved = collect.transcripts()
    assert len(saved) == 200 and _requests(collect) == 2000
    assert all(load_transcript(p).stop is not None for p in saved)    # every transcript ended


def test_a_crash_of_the_receiver_leaves_what_was_read_as_complete_transcripts(tmp_path):
    collect = Collect(tmp_path)
    try:
        _burst(collect, 2)
        deadline = time.monotonic() + 120
        while _requests(collect) < 200 and time.monotonic() < deadline:   # read and written
            time.sleep(0.2)
        assert _requests(collect) == 200
    finally:
        collect.proc.kill()                          # SIGKILL: collect's own process never says stop
        collect.proc.wait(30)
    saved = collect.transcripts()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(_ended(p) for p in saved):
        time.sleep(0.2)
    assert len(saved) == 20 and all(load_transcript(p).stop is not None for p in saved)
