"""The live view's server in-process (starlette's test client): only the URL's token, from a
loopback Host and Origin, gets anything; names in queries are looked up, never followed."""

from __future__ import annotations

import sys

import pytest
from starlette.testclient import TestClient

from agentdbg.server.live.serving import LiveOptions, make_app

from .helpers import EXAMPLES, QUESTION, agentdbg

TOKEN = "tok-" + "x" * 20
PORT = 8123
HOST = {"host": f"127.0.0.1:{PORT}"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two proxy runs of the example app (one clean, one with an orphan) and a `run`."""
    folder = tmp_path_factory.mktemp("runs")
    for flags in ([], ["--forget-assistant"]):
        agentdbg("proxy", "--offline", "--save", str(folder), "--", sys.executable,
                 str(EXAMPLES / "agent_app.py"), QUESTION, *flags)
    (folder / "notes.jsonl").write_text('{"not": "a transcript"}\n')
    return folder


@pytest.fixture
def client(folder):
    with TestClient(make_app(LiveOptions(folder), TOKEN), base_url=f"http://127.0.0.1:{PORT}") as c:
        yield c


def runs(folder) -> list[str]:
    return sorted({p.name.split("-conversation-")[0] for p in folder.glob("proxy-*-conversation-*.jsonl")})


@pytest.mark.parametrize("path, headers", [
    ("/", HOST),                                           # no token
    (f"/{TOKEN[:-1]}/", HOST),                             # not the token
    (f"/{TOKEN}x/", HOST),
    (f"/{TOKEN}/", {"host": f"evil.example:{PORT}"}),      # DNS rebinding: a foreign name
    (f"/{TOKEN}/", {"host": "127.0.0.1:9999"}),            # another port
    (f"/{TOKEN}/", {**HOST, "origin": "http://evil.example"}),
    (f"/{TOKEN}/", {**HOST, "sec-fetch-site": "cross-site"}),       # a page elsewhere
    (f"/{TOKEN}/assets/live.js", {**HOST, "origin": "null"}),
])
def test_anything_but_the_token_from_loopback_is_forbidden(client, path, headers):
    r = client.get(path, headers=headers)
    assert r.status_code == 403 and ("403 Forbidden" in r.text or "refused" in r.text)
    assert TOKEN not in r.text


def test_the_token_from_loopback_gets_the_runs_and_each_run(client, folder):
    page = client.get(f"/{TOKEN}/", headers={**HOST, "origin": f"http://127.0.0.1:{PORT}"})
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    clean, broken = runs(folder)
    assert clean in page.text and broken in page.text and "notes.jsonl" not in page.text
    run = client.get(f"/{TOKEN}/run", params={"key": broken}, headers=HOST)
    assert "orphan-tool-message" in run.text and 'name="agentdbg-run"' in run.text
    assert f'src="/{TOKEN}/assets/live.js"' in run.text and "<script>" not in run.text
    js = client.get(f"/{TOKEN}/assets/live.js", headers=HOST)
    assert js.headers["content-type"].startswith("text/javascript") and "EventSource" in js.text


@pytest.mark.parametrize("params", [
    {"key": "../../etc", "name": "passwd"},
    {"key": "x", "name": "../../../etc/passwd"},
    {"key": "x", "name": "notes.jsonl"},
])
def test_names_are_looked_up_never_followed(client, params):
    assert client.get(f"/{TOKEN}/conv", params=params, headers=HOST).status_code == 404
    assert client.get(f"/{TOKEN}/run", params={"key": params["name"]}, headers=HOST).status_code == 404
    assert client.get(f"/{TOKEN}/assets/../../x", headers=HOST).status_code in (403, 404)


def test_a_conversation_fragment_the_summary_and_the_diff_of_two(client, folder):
    clean, broken = runs(folder)
    [a] = [p.name for p in folder.glob(f"{clean}-conversation-*.jsonl")]
    [b] = [p.name for p in folder.glob(f"{broken}-conversation-*.jsonl")]
    conv = client.get(f"/{TOKEN}/conv", params={"key": broken, "name": b}, headers=HOST)
    assert conv.text.startswith('<article class="conv"') and "since request 1:" in conv.text
    summary = client.get(f"/{TOKEN}/summary", params={"key": broken}, headers=HOST)
    assert summary.text.startswith('<section id="run-summary">') and "orphan-tool-message" in summary.text
    diff = client.get(f"/{TOKEN}/diff", params={"a": a, "b": b}, headers=HOST)
    assert diff.status_code == 200 and "<h2>Diff</h2>" in diff.text
    assert client.get(f"/{TOKEN}/diff", params={"a": a, "b": "nope"}, headers=HOST).status_code == 404
