"""Recordings made before the codec refactor (by agentdbg at the commit before it: a run in
each of Chat Completions, the Responses API and Anthropic Messages, and the proxy's
transcripts of a Responses loop and an Anthropic loop with thinking) still replay, are still
judged clean, and `serve --replay` still plays them to a live client."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fmt_stack import Served, anthropic_loop, responses_loop

RECORDINGS = Path(__file__).resolve().parent.parent / "fixtures" / "recordings"
ALL = sorted(p.name for p in RECORDINGS.glob("*.jsonl"))


def agentdbg(*args):
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True, text=True)


@pytest.mark.parametrize("name", ALL)
def test_an_old_recording_replays_and_is_judged_clean(name):
    replay = agentdbg("replay", str(RECORDINGS / name), "--json")
    assert replay.returncode == 0, replay.stderr[-1500:]
    assert json.loads(replay.stdout)["stop_reason"] == "completed"
    check = agentdbg("check", str(RECORDINGS / name), "--json")
    assert check.returncode == 0 and json.loads(check.stdout)["findings"] == [], check.stdout


@pytest.mark.parametrize("name,loop", [("proxy-1.jsonl", "responses"), ("proxy-2.jsonl", "anthropic")])
def test_serve_replay_plays_an_old_proxy_recording_to_the_same_loop(name, loop):
    import anthropic
    import openai

    from agentdbg.server.served import ServedReplay

    served = Served(ServedReplay(RECORDINGS / name))
    try:
        if loop == "responses":
            text, _ = responses_loop(openai.OpenAI(base_url=served.url, api_key="sk-x", max_retries=0))
        else:
            text, _ = anthropic_loop(anthropic.Anthropic(base_url=served.root, api_key="sk-ant-x",
                                                         max_retries=0),
                                     thinking={"type": "enabled", "budget_tokens": 1024})
    finally:
        served.stop()
    assert "杭州转运中心" in text
