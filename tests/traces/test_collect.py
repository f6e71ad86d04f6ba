"""agentdbg collect as a real process: spans become checked, saved conversations as they
arrive; --forward delivers every export byte-identical; bad exports are one line each."""

from __future__ import annotations

import gzip
import json

import httpx

from agentdbg.transcript import load_transcript
from agentdbg.transcript.events import Request

from .collecting import Collect, Receiver
from .support import FIXTURES, OTLP_JSON, pairs
from .test_otlp import _protobuf


def _post(endpoint: str, body: bytes, kind: str, encoding: str | None = None) -> httpx.Response:
    headers = {"content-type": kind} | ({"content-encoding": encoding} if encoding else {})
    return httpx.post(endpoint + "/v1/traces", content=body, headers=headers, trust_env=False)


def test_spans_become_a_checked_saved_conversation_as_they_arrive(tmp_path):
    collect = Collect(tmp_path)
    try:
        line = OTLP_JSON.read_bytes().strip()
        answer = _post(collect.endpoint, line, "application/json")
        assert answer.status_code == 200 and answer.json() == {}
        binary = _post(collect.endpoint, _protobuf(json.loads(line)), "application/x-protobuf")
        assert binary.status_code == 200 and binary.content == b""
    finally:
        said = collect.stop()
    shown = collect.out.read_text(encoding="utf-8")
    assert "request 1 · conversation 1" in shown and "✓ no findings" in shown
    assert "2 export(s), 12 span(s), 6 model call(s) in 2 conversation(s); findings: none" in said
    paths = collect.transcripts()
    assert len(paths) == 2       # the same trace twice: two fresh starts, two conversations
    assert pairs(paths[0]) == pairs(paths[1]) == pairs(FIXTURES / "codex" / "proxy-conversation-1.jsonl")
    assert load_transcript(paths[0]).header.provider == "otlp"


def test_forward_delivers_every_export_byte_identical_in_order(tmp_path):
    receiver = Receiver()
    collect = Collect(tmp_path, "--forward", receiver.url)
    line = OTLP_JSON.read_bytes().strip()
    sent = [(line, "application/json", None),
            (_protobuf(json.loads(line)), "application/x-protobuf", None),
            (gzip.compress(line), "application/json", "gzip"),
            (b"\x00not otlp at all", "application/x-protobuf", None)]
    try:
        for body, kind, encoding in sent:
            assert _post(collect.endpoint, body, kind, encoding).status_code == 200
    finally:
        said = collect.stop()
        receiver.close()
    assert [(p, t, e, b) for p, t, e, b in receiver.got] == \
        [("/v1/traces", kind, encoding, body) for body, kind, encoding in sent]
    assert f"forwarded 4 export(s) to {receiver.url}/v1/traces" in said
    assert "export 4: not an OTLP protobuf trace export (" in collect.out.read_text(encoding="utf-8")


def test_what_is_not_an_export_is_refused_or_said_in_one_line(tmp_path):
    collect = Collect(tmp_path)
    try:
        assert _post(collect.endpoint, b"hi", "text/plain").status_code == 415
        bomb = gzip.compress(b"{" + b" " * (80 << 20))
        assert _post(collect.endpoint, bomb, "application/json", "gzip").status_code == 200
        page = httpx.post(collect.endpoint + "/v1/traces", content=b"{}", trust_env=False,
                          headers={"content-type": "application/json", "origin": "http://evil.example"})
        assert page.status_code == 403
    finally:
        said = collect.stop()
    shown = collect.out.read_text(encoding="utf-8")
    assert "export 1: not an OTLP trace export: more than 64 MB once decompressed" in shown
    assert "Traceback" not in shown + said


def test_a_burst_is_read_whole_on_ctrl_c_and_drawn_in_brief_while_behind(tmp_path):
    """More exports than collect draws in time, then Ctrl-C at once: every span is still read
    and saved (nothing received is lost), the calls with no finding drawn as one line per
    export while it catches up."""
    from .otlp_exports import export

    collect = Collect(tmp_path)
    try:
        with httpx.Client(trust_env=False, timeout=30) as client:
            for i in range(30):
                answer = client.post(collect.endpoint + "/v1/traces", content=export(i * 10),
                                     headers={"content-type": "application/x-protobuf"})
                assert answer.status_code == 200
    finally:
        said = collect.stop()
    assert "30 export(s), 3000 span(s), 3000 model call(s) in 300 conversation(s); findings: none" in said
    saved = collect.transcripts()
    assert len(saved) == 300
    assert sum(isinstance(e, Request) for p in saved for e in load_transcript(p).events) == 3000
    shown = " ".join(collect.out.read_text(encoding="utf-8").split())
    assert "(not drawn: collect is catching up)" in shown
