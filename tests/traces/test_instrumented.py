"""The same app, instrumented with OpenInference and with OpenLLMetry (each in its own cached
environment with pinned versions: tests/frameworks/requirements/{openinference,openllmetry}.txt),
runs through `agentdbg proxy --script` while exporting OTLP/HTTP protobuf to `agentdbg collect`:
the conversation collect builds from the spans equals, as the API reads it, the one the proxy
recorded of the very same run; and a dropped tool result is reported in the API's words from
the spans alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentdbg.transcript import load_transcript
from agentdbg.transcript.compare import first_difference
from agentdbg.transcript.events import Request
from agentdbg.wire.common import strip_wire

from .collecting import Collect
from .tests_env import clean_env

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent
APP = HERE / "apps" / "instrumented_app.py"
TURNS = {"turns": [{"tool_calls": [{"name": "get_weather", "id": "call_w1", "arguments": {"city": "Paris"}}]},
                   {"content": "It is 18 °C in Paris."}]}


KINDS = [pytest.param(k, marks=pytest.mark.framework_env(k)) for k in ("openinference", "openllmetry")]


def _env_python(name: str) -> Path:
    """The cached environment of requirements/<name>.txt (built before the session by the test
    command, tests/provision.py, for the items marked framework_env)."""
    if str(HERE.parent / "frameworks") not in sys.path:
        sys.path.insert(0, str(HERE.parent / "frameworks"))
    import fw_envs

    return fw_envs.ensure(name).python


def _run(tmp_path: Path, kind: str, *flags: str) -> tuple[subprocess.CompletedProcess, Collect]:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(TURNS), encoding="utf-8")
    collect = Collect(tmp_path)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "agentdbg", "proxy", "--script", str(turns), "--save",
             str(tmp_path / "proxied"), "--", str(_env_python(kind)), str(APP), kind, *flags],
            capture_output=True, timeout=300,
            env=clean_env(OTEL_EXPORTER_OTLP_ENDPOINT=collect.endpoint))
    finally:
        collect.said = collect.stop()
    return run, collect


@pytest.mark.parametrize("kind", KINDS)
def test_the_spans_make_the_conversation_the_proxy_recorded(tmp_path, kind):
    run, collect = _run(tmp_path, kind)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    assert b"It is 18" in run.stdout
    [proxied] = sorted((tmp_path / "proxied").glob("*conversation-1.jsonl"))
    [collected] = collect.transcripts()
    theirs = [e.messages for e in load_transcript(proxied).events if isinstance(e, Request)]
    ours = [e.messages for e in load_transcript(collected).events if isinstance(e, Request)]
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert first_difference(strip_wire(b), strip_wire(a)) is None, (a, b)
    assert "findings: none" in collect.said
    header = load_transcript(collected).header
    assert [t["function"]["name"] for t in header.tools] == ["get_weather"]
    # the spans recorded the tool definitions: a note names only what they did not record
    assert "without tool definitions" not in collect.said


@pytest.mark.parametrize("kind", KINDS)
def test_a_dropped_tool_result_is_reported_from_the_spans_alone(tmp_path, kind):
    run, collect = _run(tmp_path, kind, "--drop-result")
    assert run.returncode != 0          # the model API refused the app's second request
    [collected] = collect.transcripts()
    found = [f for e in load_transcript(collected).events if isinstance(e, Request)
             for f in e.findings or []]
    assert [f["rule"] for f in found] == ["missing-tool-response"], found
    shown = " ".join(collect.out.read_text(encoding="utf-8").split())
    assert "An assistant message with 'tool_calls' must be followed by tool messages responding " \
           "to each 'tool_call_id'" in shown
