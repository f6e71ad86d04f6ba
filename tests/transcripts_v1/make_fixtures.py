"""Record the version-1 transcripts this folder keeps, with agentdbg as it was before the typed
events (run it on that code: ``git stash``/a checkout of it, then)::

    python tests/transcripts_v1/make_fixtures.py

Every producer of that version wrote them for real: ``run`` (offline model and a model
endpoint that fails), the step debugger's actions on a session (edit, drop, rewind, retry,
inject on a pending call and on a finished result, fail, send), ``replay --save`` of that
recording, a fork (``replay --from``), and ``agentdbg proxy`` as its own process in front of
``serve``'s app, driven by the official ``openai`` and ``anthropic`` clients in all three wire
formats (plain and streamed; one Chat Completions conversation refused by
``--block-invalid``). ``test_v1_recordings.py`` plays every one with today's agentdbg.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TOOLS = ROOT / "agentdbg" / "samples" / "tools.yaml"
QUESTION = "订单 ORD-2026-001 到哪里了?"


def agentdbg(*args: str) -> None:
    r = subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "120"})
    if r.returncode not in (0, 1, 4, 7):  # 7: the model endpoint failed, as meant
        raise SystemExit(f"agentdbg {args}: exit {r.returncode}\n{r.stderr}")


def step_session(path: Path) -> None:
    """What the step debugger writes: its commands call these session methods."""
    from agentdbg.engine.faults import Fault
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import load_tools
    from agentdbg.transcript import start_transcript

    s = Session.for_question(OfflineModel(), load_tools(TOOLS), QUESTION,
                             RunConfig(approve="all", stop_on_invalid=False), system="你是客服助手。")
    writer = start_transcript(s, path, model="offline", provider="offline", base_url=None,
                              question=QUESTION)
    s.step()                                              # turn 1: query_order asked
    s.inject(s.pending[0]["id"], Fault("timeout", ""))    # a fault on the pending call
    s.step()                                              # its result: the fault
    s.retry()                                             # ask again
    s.step()
    s.step()                                              # the real result this time
    s.inject(str(len(s.messages) - 1), Fault("custom", '{"status": "lost"}'))  # a finished one
    s.edit(len(s.messages) - 1, {**s.messages[-1], "content": '{"status": "shipped", '
                                 '"tracking_no": "SF123456"}'})
    s.fail("get_weather", Fault("rate_limit", ""), sticky=True)
    s.step()                                              # turn: query_logistics
    s.step()
    s.rewind(len(s.messages) - 1)                         # keep all: a rewind that cuts none
    s.drop(len(s.messages) - 1)                           # drop the result: an orphan call
    s.send_once()
    s.step()                                              # the pre-send check is passed once
    while not s.done:
        s.step()
    writer.close()


def proxy_recordings(out: Path) -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "formats")]
    import anthropic
    import openai
    from fmt_stack import SECRET, Served, anthropic_loop, responses_loop
    from test_proxy import Proc

    served = Served()
    try:
        for wire in ("chat", "responses", "anthropic"):
            for stream in (False, True):
                saved = Path(tempfile.mkdtemp())
                proxy = Proc(["proxy", "--upstream", served.url, "--port", "0", "--save", str(saved)],
                             saved / "proxy.log")
                if wire == "chat":
                    chat_loop(openai.OpenAI(base_url=proxy.url, api_key=SECRET, max_retries=0), stream)
                elif wire == "responses":
                    responses_loop(openai.OpenAI(base_url=proxy.url, api_key=SECRET, max_retries=0),
                                   stream=stream)
                else:
                    anthropic_loop(anthropic.Anthropic(base_url=proxy.url[:-len("/v1")], api_key=SECRET,
                                                       max_retries=0), stream=stream)
                proxy.stop()
                (made,) = saved.glob("*.jsonl")
                shutil.copy(made, out / f"proxy-{wire}{'-stream' if stream else ''}.jsonl")
        saved = Path(tempfile.mkdtemp())
        proxy = Proc(["proxy", "--upstream", served.url, "--port", "0", "--save", str(saved),
                      "--block-invalid"], saved / "proxy.log")
        client = openai.OpenAI(base_url=proxy.url, api_key=SECRET, max_retries=0)
        chat_loop(client, False, forget_result=True)
        proxy.stop()
        (made,) = saved.glob("*.jsonl")
        shutil.copy(made, out / "proxy-chat-blocked.jsonl")
    finally:
        served.stop()


def chat_loop(client, stream: bool, forget_result: bool = False) -> None:
    """The function-calling guide's Chat Completions loop (``forget_result``: the classic
    mistake, the call's result never appended)."""
    import json

    import openai
    from fmt_stack import RESPONSES_TOOLS, run_tool

    tools = [{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
             for t in RESPONSES_TOOLS]
    messages: list = [{"role": "user", "content": QUESTION}]
    for _ in range(6):
        try:
            if stream:
                chunks = list(client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                             tools=tools, stream=True))
                text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                calls: dict = {}
                for c in chunks:
                    for d in (c.choices[0].delta.tool_calls or []) if c.choices else []:
                        got = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                        got["id"] += d.id or ""
                        got["name"] += (d.function.name or "") if d.function else ""
                        got["arguments"] += (d.function.arguments or "") if d.function else ""
                message = {"role": "assistant", "content": text or None}
                if calls:
                    message["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                        "name": c["name"], "arguments": c["arguments"]}} for c in calls.values()]
            else:
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                       tools=tools)
                message = reply.choices[0].message.model_dump(exclude_none=True)
        except openai.BadRequestError:
            return
        messages.append(message)
        if not message.get("tool_calls"):
            return
        for call in message["tool_calls"]:
            if not forget_result:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": run_tool(
                    call["function"]["name"], json.loads(call["function"]["arguments"]))})
        if forget_result:
            messages.append({"role": "user", "content": "再查一下物流?"})


def main() -> None:
    out = HERE
    work = Path(tempfile.mkdtemp())
    home = work / "home"
    os.environ["AGENTDBG_HOME"] = str(home)
    agentdbg("run", QUESTION, "--tools", str(TOOLS), "--save", str(out / "run.jsonl"))
    agentdbg("run", QUESTION, "--tools", str(TOOLS), "--model", "gpt-4o-mini", "--base-url",
             "http://127.0.0.1:9/v1", "--api-key", "sk-none", "--save", str(out / "run-model-error.jsonl"))
    step_session(out / "step.jsonl")
    agentdbg("replay", str(out / "step.jsonl"), "--save", str(out / "replay-of-step.jsonl"))
    agentdbg("replay", str(out / "run.jsonl"), "--from", "2", "--tools", str(TOOLS),
             "--save", str(out / "fork.jsonl"))
    proxy_recordings(out)


if __name__ == "__main__":
    main()
