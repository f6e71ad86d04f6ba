"""Engine overhead: a 20-turn run against a local OpenAI-compatible server, agentdbg vs a
bare loop written with the `openai` client as in the seed article. Same server, same
scripted responses (19 tool-call turns, then an answer).

agentdbg does more per turn by design: the pre-send protocol check of the whole request,
JSON Schema validation, the tool executor and the transcript written to disk.
Target: at most 10% extra wall time, or 2 ms per turn, whichever is larger.

    python bench/engine_overhead.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _util import machine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # sample_tools/, the sample's handlers

TURNS = 20
REPEAT = 15
TOOLS_YAML = """
version: 1
tools:
  - name: get_weather
    description: 查询指定城市的实时天气。当用户询问天气时使用。
    parameters:
      type: object
      properties: {city: {type: string, description: 城市名}}
      required: [city]
    handler: {python: "sample_tools.weather:get_weather"}
"""
CITIES = ["北京", "上海", "杭州", "广州", "成都"]


SERVER = """
import sys
from agentdbg.providers.scripted import ScriptedModel, parse_turns
from agentdbg.testing.server import ModelServer
runs, turns_per_run = int(sys.argv[1]), int(sys.argv[2])
cities = ["北京", "上海", "杭州", "广州", "成都"]
turns = []
for _ in range(runs):
    turns += [{"tool_calls": [{"name": "get_weather", "id": f"call_{i}",
                               "arguments": {"city": cities[i % 5]}}]} for i in range(turns_per_run - 1)]
    turns.append({"content": "done"})
server = ModelServer(ScriptedModel(parse_turns(turns, "bench"), "bench"))
print(server.base_url, flush=True)
server.serve_forever()
"""


def start_server(runs: int):
    """The model server in its own process: it must not share the GIL with the loops."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(runs), str(TURNS)],
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def make_client(base_url: str, nodelay: bool = False):
    """Created once, as in the seed article (``client = OpenAI()`` at module level)."""
    from openai import OpenAI

    from agentdbg.providers.openai_compat import _nodelay_client

    return OpenAI(base_url=base_url, api_key="x", max_retries=0,
                  http_client=_nodelay_client(60) if nodelay else None)


def bare_loop(client, tools: list) -> None:
    """The seed article's loop: create, append the assistant message, run, append results."""
    from sample_tools.weather import get_weather

    messages = [{"role": "user", "content": "哪个城市最热?"}]
    for _ in range(TURNS + 1):
        msg = client.chat.completions.create(model="m", messages=messages, tools=tools).choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        if not msg.tool_calls:
            break
        for tc in msg.tool_calls:
            result = get_weather(**json.loads(tc.function.arguments))
            messages.append({"role": "tool", "tool_call_id": tc.id,
                             "content": json.dumps(result, ensure_ascii=False)})


def agentdbg_loop(provider, toolset, folder: Path) -> None:
    from agentdbg.checker import check_model_request
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.transcript import start_transcript

    base_url = provider.base_url
    s = Session.for_question(provider, toolset, "哪个城市最热?",
                             RunConfig(max_turns=TURNS + 1, repeat_limit=99),
                             precheck=check_model_request)
    writer = start_transcript(s, folder / "t.jsonl", model="m", provider="openai",
                              base_url=base_url, question="q")
    list(s.run())
    writer.close()
    assert s.stop_reason.value == "completed" and len(s.turns) == TURNS


def main() -> None:
    from agentdbg.providers.openai_compat import OpenAICompatible
    from agentdbg.toolspec import load_tools

    folder = Path(tempfile.mkdtemp())
    (folder / "tools.yaml").write_text(TOOLS_YAML)
    toolset = load_tools(folder / "tools.yaml")
    proc, base_url = start_server(3 * (REPEAT + 1))  # every run gets the same 20 responses
    try:
        def timed(fn) -> float:
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start

        tools = toolset.openai_tools()
        default_client = make_client(base_url)
        nodelay_client = make_client(base_url, nodelay=True)
        provider = OpenAICompatible("m", base_url)
        runs = {"bare": lambda: bare_loop(default_client, tools),
                "same_http": lambda: bare_loop(nodelay_client, tools),
                "ours": lambda: agentdbg_loop(provider, toolset, folder)}
        for fn in runs.values():
            timed(fn)  # warm-up
        times = {k: [] for k in runs}
        for _ in range(REPEAT):  # interleaved, so drift hits all three alike
            for k, fn in runs.items():
                times[k].append(timed(fn))
        bare, same_http, ours = times["bare"], times["same_http"], times["ours"]
    finally:
        proc.kill()
    b, h, a = statistics.median(bare), statistics.median(same_http), statistics.median(ours)
    print(f"machine: {machine()}")
    print(f"{TURNS}-turn run, median of {REPEAT}")
    print(f"bare openai loop, default client (baseline) {b * 1000:7.1f} ms  {b / TURNS * 1000:.2f} ms/turn")
    print(f"bare openai loop, agentdbg's TCP_NODELAY client {h * 1000:5.1f} ms  {h / TURNS * 1000:.2f} ms/turn")
    print(f"agentdbg Session (check + schema + executor + transcript) {a * 1000:5.1f} ms  "
          f"{a / TURNS * 1000:.2f} ms/turn")
    for label, base in (("vs the baseline", b), ("vs the same HTTP client", h)):
        allowed = max(0.10 * base, 0.002 * TURNS)
        print(f"overhead {label:24s} {(a - base) * 1000:+7.1f} ms  {(a - base) / base * 100:+.1f}%  "
              f"{(a - base) / TURNS * 1000:+.2f} ms/turn  (allowed {allowed * 1000:.1f} ms)")
    sys.exit(0)


if __name__ == "__main__":
    main()
