"""`agentdbg proxy` in front of `agentdbg serve`, with the official clients' Responses and
Messages tool loops: clean traffic is clean, relayed byte-identical (plain and streaming), saved
as a replayable transcript, the key never kept; each format's classic mistake is reported with
the right rule and the real API's words; `previous_response_id` chains are judged with what
the proxy saw before, and it says plainly when it did not see it."""

import json
import os
import subprocess
import sys

import anthropic
import httpx
import openai
import pytest
from fmt_stack import QUESTION, RESPONSES_TOOLS, SECRET, Served, anthropic_loop, responses_loop
from test_proxy import Proc

from agentdbg.transcript import load_transcript


@pytest.fixture(scope="module")
def serve():
    s = Served()
    yield s
    s.stop()


class Stack:
    def __init__(self, serve, tmp_path, *extra):
        self.serve, self.tmp = serve, tmp_path
        self.saved = tmp_path / "saved"
        self.proxy = Proc(["proxy", "--upstream", serve.url, "--port", "0", "--save", str(self.saved),
                           *extra], tmp_path / "proxy.log",
                          env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})
        self.url = self.proxy.url
        self.root = self.url[:-len("/v1")]
        self.out = ""

    def openai(self):
        return openai.OpenAI(base_url=self.url, api_key=SECRET, max_retries=0)

    def anthropic(self):
        return anthropic.Anthropic(base_url=self.root, api_key=SECRET, max_retries=0)

    def stop(self) -> str:
        self.out = self.proxy.stop()
        return self.out

    def verdicts(self) -> list[str]:
        return [line for line in self.out.splitlines() if line.startswith(("✓ ", "✗ ", "! "))]

    def transcripts(self):
        return [load_transcript(p) for p in sorted(self.saved.glob("*.jsonl"))]


@pytest.fixture
def stack(serve, tmp_path):
    made = []

    def start(*extra):
        made.append(Stack(serve, tmp_path, *extra))
        return made[-1]
    yield start
    for s in made:
        s.proxy.stop()


def agentdbg(*args):
    return subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})


def resend_both_ways(stack, path: str, bodies: list[dict], headers: dict):
    """Each recorded request, plain and streamed, straight to serve and through the proxy:
    the same status and the same bytes, chunk boundaries aside."""
    for body in bodies:
        for stream in (False, True):
            sent = {**{k: v for k, v in body.items() if k != "stream"}, **({"stream": True} if stream else {})}
            data = json.dumps(sent, ensure_ascii=False).encode()
            got = []
            for base in (stack.serve.url, stack.url):
                with httpx.stream("POST", base + path, content=data, timeout=30,
                                  headers={"content-type": "application/json", **headers}) as r:
                    got.append((r.status_code, b"".join(r.iter_raw())))
            assert got[0] == got[1], (stream, got[0][1][:200], got[1][1][:200])


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream=True"])
def test_a_responses_loop_is_clean_relayed_identically_and_replayable(stack, stream):
    s = stack()
    text, _ = responses_loop(s.openai(), stream=stream)
    assert "杭州转运中心" in text
    s.stop()                                   # the transcript's stop event is written now
    (t,) = s.transcripts()
    assert t.header.api == "responses" and t.header.tools[0]["function"]["name"] == "query_order"
    requests = [e for e in t.events if e.event_type == "request"]
    assert len(requests) == 3 and all(not e.findings for e in requests)
    assert s.verdicts() == ["✓ no findings"] * 3
    assert "Responses API" in s.out and "✓ answered at [2]" in s.out and "✓ answers [1]" in s.out
    if stream:
        assert "stream: call call_o1 (query_order): arguments in" in s.out
    for command in ("replay", "check"):
        r = agentdbg(command, str(t.path))
        assert r.returncode == 0, r.stdout[-800:] + r.stderr
    s2 = stack()
    resend_both_ways(s2, "/responses", [e.body for e in requests],
                     {"authorization": f"Bearer {SECRET}"})
    s2.stop()
    for path in s.tmp.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("stream", [False, True], ids=["messages.create", "messages.stream"])
def test_an_anthropic_loop_is_clean_relayed_identically_and_replayable(stack, stream):
    s = stack()
    text, _ = anthropic_loop(s.anthropic(), stream=stream)
    assert "杭州转运中心" in text
    s.stop()
    (t,) = s.transcripts()
    assert t.header.api == "anthropic"
    requests = [e for e in t.events if e.event_type == "request"]
    assert len(requests) == 3 and s.verdicts() == ["✓ no findings"] * 3
    assert "Anthropic Messages" in s.out and "✓ answered at [2].content[0]" in s.out
    if stream:
        assert "input_json_delta(s)" in s.out
    for command in ("replay", "check"):
        r = agentdbg(command, str(t.path))
        assert r.returncode == 0, r.stdout[-800:] + r.stderr
    s2 = stack()
    resend_both_ways(s2, "/messages", [e.body for e in requests],
                     {"x-api-key": SECRET, "anthropic-version": "2023-06-01"})
    s2.stop()
    for path in s.tmp.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in s.out


# -- each format's classic mistakes --------------------------------------------------------

def test_responses_mistakes_are_reported_with_the_rule_and_the_apis_words(stack):
    s = stack()
    client = s.openai()
    with pytest.raises(openai.BadRequestError):    # forgot the function_call items
        responses_loop(client, keep=lambda item: item.type != "function_call")
    with pytest.raises(openai.BadRequestError):    # dropped the outputs, asked again
        responses_loop(client, answer=False)
    with pytest.raises(openai.BadRequestError):    # dropped the reasoning item
        responses_loop(client, keep=lambda item: item.type != "reasoning", reasoning={"effort": "low"})
    out = s.stop()
    verdicts = s.verdicts()
    assert "✗ 1 error(s), 0 warning(s): orphan-tool-message@1" in verdicts
    assert "No tool call found for function call output with call_id call_o1." in out
    assert "✗ 1 error(s), 0 warning(s): missing-tool-response@1" in verdicts
    assert "No tool output found for function call call_o1." in out
    assert "✗ 1 error(s), 0 warning(s): reasoning-item-missing@1" in verdicts
    # the proxy saw the response that carried the reasoning item: it names it
    rs = next(line for line in out.splitlines() if "reasoning-item-missing:" in line)
    assert "came after reasoning item rs_" in rs
    assert "of type 'function_call' was provided without its required 'reasoning' item: 'rs_" in out
    assert out.count("upstream answered HTTP 400") == 3


def test_anthropic_mistakes_are_reported_with_the_rule_and_the_apis_words(stack):
    s = stack()
    client = s.anthropic()
    first = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=[
        {"role": "user", "content": QUESTION}], tools=[{"name": "query_order", "input_schema":
                                                         RESPONSES_TOOLS[0]["parameters"]}])
    call = next(b for b in first.content if b.type == "tool_use")
    result = {"type": "tool_result", "tool_use_id": call.id, "content": '{"status": "shipped"}'}
    histories = {
        "tool-result-not-first@2": [{"role": "user", "content": QUESTION},
                                    {"role": "assistant", "content": first.content},
                                    {"role": "user", "content": [{"type": "text", "text": "结果:"}, result]}],
        "missing-tool-response@1": [{"role": "user", "content": QUESTION},
                                    {"role": "assistant", "content": first.content},
                                    {"role": "user", "content": "然后呢?"}],
        "orphan-tool-message@1": [{"role": "user", "content": QUESTION},
                                  {"role": "user", "content": [result]}],
    }
    for messages in histories.values():
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=messages)
    out = s.stop()
    flat = " ".join(out.split())
    for rule in histories:   # one error each (later requests also rewrote the first one's history)
        assert any(v.startswith("✗ 1 error(s),") and rule in v for v in s.verdicts()), \
            (rule, s.verdicts())
    assert ("`tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{call.id}. Each `tool_use` block must have a corresponding `tool_result` block in the "
            "next message.") in flat
    assert (f"unexpected `tool_use_id` found in `tool_result` blocks: {call.id}. Each `tool_result` "
            "block must have a corresponding `tool_use` block in the previous message.") in flat


# -- previous_response_id chains --------------------------------------------------------------

def test_a_chain_is_judged_with_what_the_proxy_saw_and_says_when_it_did_not(stack, serve):
    s = stack()
    client = s.openai()
    first = client.responses.create(model="m", tools=RESPONSES_TOOLS, input=QUESTION)
    call = first.output[0]
    output = {"type": "function_call_output", "call_id": call.call_id,
              "output": '{"status": "shipped", "tracking_no": "SF123456"}'}
    second = client.responses.create(model="m", tools=RESPONSES_TOOLS, previous_response_id=first.id,
                                     input=[output])
    assert second.output[0].name == "query_logistics"
    # a stored item sent again: the API's "Duplicate item found" (the proxy knows the chain)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="m", tools=RESPONSES_TOOLS, previous_response_id=first.id,
                                input=[call, output])
    # a response this proxy never saw (made straight at serve)
    direct = openai.OpenAI(base_url=serve.url, api_key=SECRET, max_retries=0)
    elsewhere = direct.responses.create(model="elsewhere", tools=RESPONSES_TOOLS, input=QUESTION)
    assert elsewhere.id != first.id
    client.responses.create(model="m", tools=RESPONSES_TOOLS, previous_response_id=elsewhere.id,
                            input=[{**output, "call_id": elsewhere.output[0].call_id}])
    out = s.stop()
    flat = " ".join(out.split())
    assert s.verdicts()[:2] == ["✓ no findings"] * 2
    assert f"continues {first.id} (previous_response_id): judged with the 2 item(s) this proxy saw" in flat
    assert "duplicate-item-id" in s.verdicts()[2]
    assert f"Duplicate item found with id {call.id}." in flat
    assert s.verdicts()[3] == "✓ no findings"
    assert f"continues {elsewhere.id} (previous_response_id), which this proxy did not see" in flat
    (t,) = [t for t in s.transcripts() if len([e for e in t.events if e.event_type == "request"]) == 3]
    assert agentdbg("check", str(t.path)).returncode == 1   # the duplicate, judged from the transcript


def test_block_invalid_answers_in_the_formats_own_error_shape(stack):
    s = stack("--block-invalid")
    with pytest.raises(anthropic.BadRequestError) as caught:
        s.anthropic().messages.create(model="claude-sonnet-4-6", max_tokens=10, messages=[
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "{}"}]}])
    body = caught.value.body
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "agentdbg proxy blocked this request" in body["error"]["message"]
    assert "orphan-tool-message at messages[0].content[0]" in body["error"]["message"]
    s.stop()


# -- a recording judged after the fact, as it was judged when sent ----------------------------

def test_report_export_and_assertions_judge_a_recording_in_its_own_format(stack, serve):
    """What the proxy and `check` accept, `report`, `export` and `assert_no_findings` accept too
    (they once re-judged a Responses recording by the Chat Completions rules); a real mistake
    they report in the format's own words, on the message that holds it."""
    from agentdbg.report.timeline import read_run
    from agentdbg.testing import assert_no_findings

    s = stack()
    client = s.openai()
    first = client.responses.create(model="m", tools=RESPONSES_TOOLS, input=QUESTION)
    call = first.output[0]
    output = {"type": "function_call_output", "call_id": call.call_id,
              "output": '{"status": "shipped", "tracking_no": "SF123456"}'}
    # a user message between a call and its output: valid on the Responses API
    client.responses.create(model="m", tools=RESPONSES_TOOLS, input=[
        {"role": "user", "content": QUESTION}, call.model_dump(exclude_none=True),
        {"role": "user", "content": "顺便说一下, 我很急"}, output])
    # an output for a call of a stored response this proxy never saw: cannot be known here
    direct = openai.OpenAI(base_url=serve.url, api_key=SECRET, max_retries=0)
    elsewhere = direct.responses.create(model="elsewhere", tools=RESPONSES_TOOLS, input=QUESTION)
    client.responses.create(model="m", tools=RESPONSES_TOOLS, previous_response_id=elsewhere.id,
                            input=[{**output, "call_id": elsewhere.output[0].call_id}])
    s.stop()
    assert s.verdicts() == ["✓ no findings"] * 3
    clean = s.transcripts()
    assert clean and all(t.header.api == "responses" for t in clean)
    for t in clean:
        assert agentdbg("check", str(t.path)).returncode == 0
        assert read_run(t.path).findings() == []
        assert_no_findings(t.path)
        exported = agentdbg("export", str(t.path), "--format", "otlp-json", "-o",
                            str(s.tmp / f"{t.path.stem}.otlp.json"))
        assert exported.returncode == 0 and "finding" not in (s.tmp / f"{t.path.stem}.otlp.json").read_text()
        report = agentdbg("report", str(t.path), "-o", str(s.tmp / f"{t.path.stem}.html"))
        assert report.returncode == 0 and " 0 finding(s)" in report.stdout, report.stdout

    s2 = stack()   # a real mistake: the output went missing, the user asked again
    with pytest.raises(openai.BadRequestError):
        responses_loop(s2.openai(), answer=False)
    s2.stop()
    (bad,) = [t for t in s2.transcripts() if t.path not in {c.path for c in clean}]
    (f,) = read_run(bad.path).findings()
    assert f.rule == "missing-tool-response" and f.index == 1    # the chat message of the call
    assert f.api_error.startswith("No tool output found for function call call_o1")
    with pytest.raises(AssertionError):
        assert_no_findings(bad.path)
