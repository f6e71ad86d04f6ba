"""Real agent frameworks, each written the way its own docs write a tool-calling agent, run
through `agentdbg proxy` in front of `agentdbg serve` (the offline model, or a script where the
framework needs a turn the offline model cannot produce).

For every app: the loop completes; its correct traffic gets no error or warning finding; one
run is one conversation (and two runs through one proxy are two); plain and streamed responses
are relayed byte-identical; the saved conversation replays with `agentdbg replay`, passes
`pytest --agentdbg-replay` and `agentdbg check`. For each framework's typical misuse: the right
rule id. The apps live in apps/, their pinned environments in requirements/ (see fw_envs.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fw_apps import ALL, LOCATION, MISUSES, App
from fw_stack import KEY, Proc, Run, agentdbg_env

from agentdbg.transcript import load_transcript, messages_over_time
from agentdbg.transcript.events import Request

PLAIN = [a for a in ALL if "--stream" not in a.args and "--stream-helper" not in a.args]
ENDPOINT = {"chat": "/chat/completions", "responses": "/responses", "messages": "/messages"}


def ids(apps):
    return [a.id for a in apps]


def agentdbg(run: Run, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    home = run.folder / "agentdbg-home"
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True, text=True,
                          env=agentdbg_env(home), cwd=run.folder, timeout=timeout)


def brief(proc: subprocess.CompletedProcess, lines: int = 6) -> str:
    """The last lines a command printed (where agentdbg and pytest say what went wrong)."""
    text = [line.rstrip() for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return "\n".join(text[-lines:])


def saved(run: Run) -> list[Path]:
    assert run.transcripts, f"the proxy saved no conversation for {run.describe()}"
    return run.transcripts


# -- the correct run --------------------------------------------------------------------------

@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_the_loop_completes(runs, app: App):
    run = runs.get(app)
    assert run.returncode == 0, run.describe()
    assert LOCATION in run.stdout, run.describe()


@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_correct_traffic_gets_no_finding(runs, app: App):
    run = runs.get(app)
    assert run.requests() > 0, f"the proxy recorded no request: {run.describe()}\n{run.proxy_out[-1500:]}"
    found = [f for f in run.findings() if f.get("severity") in ("error", "warning")]
    assert not found, "\n".join(f"{f['transcript']} request {f['turn']}: {f['severity']} {f['rule']}"
                                f"@{f.get('index')}: {f.get('message')}" for f in found)
    verdicts = run.verdicts()
    assert verdicts and all(v == "✓ no findings" for v in verdicts), verdicts


@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_one_run_is_one_conversation(runs, app: App):
    run = runs.get(app)
    assert len(saved(run)) == 1, [p.name for p in run.transcripts]


@pytest.mark.parametrize("app", PLAIN, ids=ids(PLAIN))
def test_two_runs_through_one_proxy_are_two_conversations(runs, app: App):
    run = runs.run(app, times=2)
    assert run.returncode == 0, run.describe()
    files = saved(run)
    assert len(files) == 2, [p.name for p in files]
    turns = [sum(1 for e in load_transcript(p).events if e.event_type == "request") for p in files]
    assert turns[0] == turns[1], f"the two runs were filed as conversations of {turns} requests"
    for path in files:
        replay = agentdbg(run, "replay", str(path))
        assert replay.returncode == 0, f"{path.name}:\n{brief(replay)}"


@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_relay_is_byte_identical(runs, app: App, tmp_path):
    """Every recorded request, sent plain and with stream=true, straight to `serve` and through
    a proxy in front of an identical `serve`: the same status and the same bytes."""
    run = runs.get(app)
    bodies = [b for path in saved(run) for b in recorded_bodies(path, app.wire)]
    assert bodies, f"no request recorded: {run.describe()}"
    fresh = any(a in ("--script", "--replay") for a in app.serve)  # stateful: a new pair per pass
    pair = None
    try:
        for stream in (False, True):
            if pair is None or fresh:
                if pair:
                    stop_all(pair)
                pair = start_pair(app, tmp_path / f"pair-{'stream' if stream else 'plain'}", run)
            direct, _behind, proxy = pair
            for n, body in enumerate(bodies):
                body = with_stream(body, stream)
                a = post(direct.url, app.wire, body)
                b = post(proxy.url, app.wire, body)
                assert a == b, (f"request {n + 1} (stream={stream}): straight from serve "
                                f"HTTP {a[0]} {a[1][:300]!r}\nthrough the proxy HTTP {b[0]} {b[1][:300]!r}")
    finally:
        if pair:
            stop_all(pair)


@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_the_recording_replays(runs, app: App):
    run = runs.get(app)
    for path in saved(run):
        replay = agentdbg(run, "replay", str(path))
        assert replay.returncode == 0, f"{path.name}:\n{brief(replay)}"


@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_the_recording_passes_the_pytest_plugin(runs, app: App):
    run = runs.get(app)
    folder = saved(run)[0].parent
    proc = subprocess.run([sys.executable, "-m", "pytest", "--agentdbg-replay", str(folder), "-q",
                           "-p", "no:cacheprovider", "--rootdir", str(folder),
                           "--basetemp", str(run.folder / "plugin-tmp")], capture_output=True,
                          text=True, env=agentdbg_env(run.folder / "agentdbg-home"), cwd=folder, timeout=180)
    summary = [line for line in proc.stdout.splitlines() if line.startswith(("  ", "FAILED", "ERROR"))]
    assert proc.returncode == 0, "\n".join(summary[-12:]) or brief(proc)
    assert f"{len(run.transcripts)} passed" in proc.stdout, brief(proc)


@pytest.mark.parametrize("app", ALL, ids=ids(ALL))
def test_the_recording_passes_check(runs, app: App):
    """What the app sent was valid, so the recording of it must be too."""
    run = runs.get(app)
    for path in saved(run):
        check = agentdbg(run, "check", str(path))
        assert check.returncode == 0, f"{path.name}:\n{brief(check, 12)}"


# -- each framework's typical misuse ----------------------------------------------------------

@pytest.mark.parametrize(("app", "flag", "rules"), MISUSES,
                         ids=[f"{a.id}{flag}" for a, flag, _ in MISUSES])
def test_misuse_is_reported_with_its_rule(runs, app: App, flag: str, rules: tuple[str, ...]):
    run = runs.run(app, flag)
    reported = {f["rule"] for f in run.findings()}
    printed = "\n".join(run.verdicts())
    missing = [r for r in rules if r not in reported or r not in printed]
    assert not missing, (f"expected {', '.join(rules)}; recorded {sorted(reported)}; printed:\n{printed}\n"
                         f"{run.describe()}")


# -- helpers ----------------------------------------------------------------------------------

def recorded_bodies(path: Path, wire: str) -> list[dict]:
    """The request bodies a proxy transcript records, rebuilt from its request events."""
    transcript = load_transcript(path)
    requests = [e for e in transcript.events if isinstance(e, Request)]
    if wire != "chat":
        bodies = [e.body for e in requests]
        assert all(isinstance(b, dict) for b in bodies), \
            f"{path.name}: its request events carry no {wire} request body to re-send"
        return bodies
    tools = transcript.header.tools or []
    out = []
    for event, messages in zip(requests, messages_over_time(transcript.events)):
        body = {**event.param_map, "messages": messages}
        if tools:
            body["tools"] = tools
        out.append(body)
    return out


def with_stream(body: dict, stream: bool) -> dict:
    body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    if stream:
        body["stream"] = True
    return body


def start_pair(app: App, folder: Path, run: Run) -> tuple[Proc, Proc, Proc]:
    folder.mkdir(parents=True)
    home = folder / "agentdbg-home"
    direct = Proc(["serve", *app.serve, "--port", "0"], folder / "direct.log", home)
    behind = Proc(["serve", *app.serve, "--port", "0"], folder / "behind.log", home)
    direct.wait_url()
    behind.wait_url()
    proxy = Proc(["proxy", "--upstream", behind.url, "--port", "0", "--save", str(folder / "saved")],
                 folder / "proxy.log", home).wait_url()
    return direct, behind, proxy


def stop_all(procs) -> None:
    for p in reversed(procs):
        p.stop()


def post(base_url: str, wire: str, body: dict) -> tuple[int, bytes]:
    import httpx

    headers = {"content-type": "application/json", "authorization": f"Bearer {KEY}"}
    if wire == "messages":
        headers = {"content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01"}
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    with httpx.Client(timeout=60) as client, \
            client.stream("POST", base_url + ENDPOINT[wire], content=data, headers=headers) as resp:
        return resp.status_code, b"".join(resp.iter_raw())
