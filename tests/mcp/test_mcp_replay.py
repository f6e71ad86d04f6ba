"""Replaying a run that used an MCP server: no server starts unless --live-tools; replay says
which server a live replay needs, and when the server's tool list changed since the recording."""

import os
import uuid

import pytest
from mcp_helpers import DEMO, demo_yaml, server_pids, tagged, wait_until, write_script
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A run with the demo server (version 1.2.3), saved as a transcript."""
    folder = tmp_path_factory.mktemp("mcp-replay")
    events = folder / "events.jsonl"
    tools = demo_yaml(folder / "v1.yaml", {"events": events})
    script = write_script(folder / "s.yaml", {"calls": [("lookup_city", {"city": "Paris"}),
                                                        ("untagged", {"x": 21})]}, {"content": "done"})
    r = invoke("run", "--tools", tools, "--script", script, "q", "--save", folder / "rec.jsonl")
    assert r.exit_code == 0, r.output
    return folder, events


def test_replay_starts_no_server_and_names_the_one_it_used(recorded):
    folder, events = recorded
    before = server_pids(events)
    r = invoke("replay", folder / "rec.jsonl")
    assert r.exit_code == 0, r.output
    header = " ".join(r.stdout.replace("│", " ").split())      # the header panel, unwrapped
    assert f"MCP server(s) not started: demo (python {DEMO})" in header
    assert "Paris is in France" in r.stdout and "stop: completed" in r.stdout
    assert server_pids(events) == before                      # no server was started


def test_a_live_replay_without_tools_says_which_server_it_needs(recorded):
    folder, _ = recorded
    r = invoke("replay", folder / "rec.jsonl", "--live-tools")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "agentdbg: error: --live-tools runs tools: name them with --tools PATH or --mcp (a transcript's "
        f"own tools file is never loaded); the recording used MCP server(s) 'demo' (--mcp 'python {DEMO}')")


def test_live_tools_say_when_the_servers_tool_list_changed(recorded, tmp_path):
    folder, _ = recorded
    tag = uuid.uuid4().hex
    tools = demo_yaml(tmp_path / "v2.yaml", {"mode": "v2", "tag": tag})
    r = invoke("replay", folder / "rec.jsonl", "--live-tools", "--strict", "--tools", tools)
    assert r.exit_code == 0, r.output                        # the calls it made give the same results
    assert ("agentdbg: warning: MCP server 'demo': its tool list changed since the recording (server "
            "version 1.2.3 then, 2.0.0 now): new: archive_note; gone: delete_note") in r.stderr
    assert "MCP server 'demo': agentdbg-demo 2.0.0 over stdio" in r.stdout
    assert wait_until(lambda: not tagged(tag), 5)


def test_a_changed_tool_list_names_the_recorded_tools_escaped(recorded, tmp_path):
    """The recorded tool names in the warning come from the transcript: shown, never raw."""
    import json

    folder, _ = recorded
    hidden = "gone\u3164\u115f\u1160\uffa0\u034f\x1b]0;title\x07\u202e"
    lines = (folder / "rec.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["mcp_servers"][0]["tools"].append({"name": hidden, "hash": "sha256:0"})
    header["mcp_servers"][0]["tools_hash"] = "sha256:changed"
    path = tmp_path / "rec.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    r = invoke("replay", path, "--live-tools", "--tools", demo_yaml(tmp_path / "v1.yaml", {}))
    assert r.exit_code == 0, r.output
    assert ("its tool list changed since the recording: gone: "
            "gone\\u3164\\u115f\\u1160\\uffa0\\u034f\\x1b]0;title\\x07\\u202e") in r.stderr, r.stderr
    assert not set(hidden) - set("gone]0;title") & set(r.stderr)


def test_live_tools_with_mcp_option_and_a_server_the_recording_named_otherwise(recorded):
    folder, _ = recorded
    r = invoke("replay", folder / "rec.jsonl", "--live-tools", "--strict", "--mcp", f"python {DEMO}")
    assert r.exit_code == 0, r.output
    assert (f"agentdbg: warning: the recording used MCP server 'demo' (--mcp 'python {DEMO}'), which is "
            "not started now: its calls run live only where a tool of the same name is there") in r.stderr
    assert "MCP server 'demo_server': agentdbg-demo 1.2.3" in r.stdout   # same tools, another name
