"""Issue 22's format-specific wrong verdicts, each written where a user met it."""

from fmt_stack import QUESTION, Served, responses_loop

from agentdbg.checker.formats import check_responses


def fc(call_id, item_id, name="get_weather", args='{"city": "北京"}'):
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": args, "status": "completed"}


def out(call_id, output="{}"):
    return {"type": "function_call_output", "call_id": call_id, "output": output}


CODEX = {"reasoning": {"effort": "medium"}, "include": ["reasoning.encrypted_content"]}


def test_codex_sending_back_an_output_that_had_no_reasoning_item_is_clean():
    """Codex CLI asks every request to reason; when the model's output had no reasoning item
    (the proxy saw it), sending that output back unchanged is what the API wants."""
    user = {"role": "user", "content": QUESTION}
    seen = [fc("call_1", "fc_1")]                        # the model's whole output, no reasoning
    body = {**CODEX, "input": [user, *seen, out("call_1")]}
    assert check_responses(body, prior=seen) == []
    # two turns, the second output without reasoning after a first one with it
    first = [{"type": "reasoning", "id": "rs_0", "summary": []}, fc("call_0", "fc_0")]
    seen = [*first, {"type": "agentdbg.output_end"}, fc("call_1", "fc_1")]
    body = {**CODEX, "input": [user, *first, out("call_0"), fc("call_1", "fc_1"), out("call_1")]}
    assert check_responses(body, prior=seen) == []
    # and a reasoning item the output did have is still missed when dropped
    body = {**CODEX, "input": [user, fc("call_0", "fc_0"), out("call_0")]}
    assert [f.rule for f in check_responses(body, prior=first)] == ["reasoning-item-missing"]


def test_serve_does_not_reject_its_own_output_sent_back_without_a_reasoning_item():
    """include=['reasoning.encrypted_content'] (as Codex sends it) with store unset and no
    reasoning asked for: serve's own output has no reasoning item, and the loop that sends it
    back whole gets its answer (it was answered 400 reasoning-item-missing)."""
    served = Served()
    try:
        import openai

        client = openai.OpenAI(base_url=served.url, api_key="sk-test", max_retries=0)
        text, items = responses_loop(client, include=["reasoning.encrypted_content"])
        assert "杭州转运中心" in text
        assert not any(getattr(i, "type", None) == "reasoning" for i in items)
    finally:
        served.stop()


def test_answered_calls_are_not_judged_against_todays_tools_in_any_format():
    """After an @openai/agents handoff the tools change: the answered transfer_to_… call is
    history in every format (as in Chat Completions), an unanswered one still is judged."""
    from agentdbg.checker import check
    from agentdbg.checker.formats import check_anthropic

    tools = [{"type": "function", "name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    user = {"role": "user", "content": QUESTION}
    handoff = fc("call_h", "fc_h", "transfer_to_weather_agent", "{}")
    wrong = fc("call_w", "fc_w", "get_weather", '{"town": 1}')
    body = {"tools": tools, "input": [user, handoff, out("call_h"), wrong, out("call_w")]}
    assert check_responses(body) == []
    body["input"] = [user, handoff, out("call_h"), fc("call_x", "fc_x", "transfer_to_x", "{}")]
    assert [f.rule for f in check_responses(body)] == ["unknown-tool", "missing-tool-response"]

    a_tools = [{"name": "get_weather", "input_schema": tools[0]["parameters"]}]
    use = {"type": "tool_use", "id": "toolu_h", "name": "transfer_to_weather_agent", "input": {}}
    bad = {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {"town": 1}}
    messages = [user, {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_h",
                                              "content": "ok"}]},
                {"role": "assistant", "content": [bad]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_w",
                                              "content": "ok"}]}]
    assert check_anthropic({"tools": a_tools, "messages": messages}) == []
    chat = [user, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_h", "type": "function", "function": {"name": "transfer_to_weather_agent",
                                                          "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_h", "content": "ok"}]
    assert check({"messages": chat, "tools": [{"type": "function", "function": {
        "name": "get_weather", "parameters": tools[0]["parameters"]}}]}) == []


CACHED_MESSAGE = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude",
                  "content": [{"type": "text", "text": "北京更热。"}], "stop_reason": "end_turn",
                  "stop_sequence": None,
                  "usage": {"input_tokens": 3, "cache_creation_input_tokens": 250,
                            "cache_read_input_tokens": 4116, "output_tokens": 12}}


def test_anthropic_prompt_caching_counts_are_recorded_replayed_reported_and_exported(tmp_path):
    """3 + 250 + 4,116 input tokens are 4,369 prompt tokens, with the cache counts kept beside."""
    import json

    import anthropic
    from hardening.proxy_helpers import Proxy, Upstream

    from agentdbg.report.html import render_report
    from agentdbg.report.otel import export_transcript
    from agentdbg.transcript import load_transcript

    upstream = Upstream()
    upstream.reply = lambda handler, body: Upstream.send(handler, 200,
                                                         json.dumps(CACHED_MESSAGE).encode())
    proxy = Proxy(upstream.url, tmp_path)
    try:
        client = anthropic.Anthropic(base_url=proxy.url.removesuffix("/v1"), api_key="sk-ant-x",
                                     max_retries=0)
        client.messages.create(model="claude", max_tokens=100, messages=[{"role": "user",
                                                                          "content": QUESTION}])
    finally:
        proxy.stop()
        upstream.stop()
    path = next((tmp_path / "saved").glob("*.jsonl"))
    response = next(e for e in load_transcript(path).events if e.event_type == "response")
    assert response.usage == {"prompt_tokens": 4369, "completion_tokens": 12,
                                 "total_tokens": 4381, "cache_creation_input_tokens": 250,
                                 "cache_read_input_tokens": 4116, "input_tokens": 3}
    html = render_report(path)
    assert "4369 prompt (3 uncached, 250 written to the cache, 4116 read from the cache)" in html
    export_transcript(path, json_path=tmp_path / "spans.json")
    spans = (tmp_path / "spans.json").read_text(encoding="utf-8")
    chat = next(s for s in (json.loads(line) for line in spans.splitlines())
                for s in _spans(s) if s["name"].startswith("chat"))
    attributes = {a["key"]: a["value"] for a in chat["attributes"]}
    assert attributes["gen_ai.usage.input_tokens"] == {"intValue": "4369"}
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == {"intValue": "4116"}
    assert attributes["gen_ai.usage.cache_creation.input_tokens"] == {"intValue": "250"}


def _spans(doc):
    for resource in doc.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            yield from scope.get("spans", [])


def test_claudes_thinking_is_kept_in_the_transcript_and_shown_in_the_report(tmp_path):
    import anthropic
    from fmt_stack import ANTHROPIC_TOOLS
    from hardening.proxy_helpers import Proxy

    from agentdbg.report.html import render_report
    from agentdbg.transcript import load_transcript

    served = Served()
    proxy = Proxy(served.url, tmp_path)
    try:
        client = anthropic.Anthropic(base_url=proxy.url.removesuffix("/v1"), api_key="sk-ant-x",
                                     max_retries=0)
        message = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=2048, tools=ANTHROPIC_TOOLS,
            thinking={"type": "enabled", "budget_tokens": 1024},
            messages=[{"role": "user", "content": QUESTION}])
    finally:
        proxy.stop()
        served.stop()
    thought = message.content[0].thinking
    assert message.content[0].type == "thinking" and thought
    path = next((tmp_path / "saved").glob("*.jsonl"))
    response = next(e for e in load_transcript(path).events if e.event_type == "response")
    assert response.message["reasoning_content"] == thought
    import html

    assert html.escape(thought[:40]) in render_report(path)


CODEX_TOOLS = [
    {"type": "function", "name": "exec_command", "description": "Run a shell command.",
     "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
    {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.", "tools": [
        {"type": "function", "name": "spawn_agent", "description": "Start a sub-agent.",
         "parameters": {"type": "object", "properties": {"task": {"type": "string"}}}}]},
    {"type": "web_search"},
]


def test_codex_namespaced_and_hosted_tools_are_recorded_reported_and_counted(tmp_path):
    """Codex's tools: a function, a namespace (multi_agent_v1) and a hosted tool (web_search)."""
    import json

    import openai
    from hardening.proxy_helpers import Proxy

    from agentdbg.render.budget import Counter
    from agentdbg.report.budget import budget_of
    from agentdbg.report.html import render_report
    from agentdbg.transcript import load_transcript

    served = Served()
    proxy = Proxy(served.url, tmp_path)
    try:
        client = openai.OpenAI(base_url=proxy.url, api_key="sk-x", max_retries=0)
        client.responses.create(model="gpt-5-codex", tools=CODEX_TOOLS, input=QUESTION)
    finally:
        printed = proxy.stop()
        served.stop()
    assert "tools: exec_command, multi_agent_v1.spawn_agent, web_search (hosted)" in printed
    path = next((tmp_path / "saved").glob("*.jsonl"))
    header = load_transcript(path).header
    assert [d["name"] for d in header.tool_definitions] == [
        "exec_command", "multi_agent_v1.spawn_agent", "web_search"]
    assert "exec_command, multi_agent_v1.spawn_agent, web_search (hosted)" in render_report(path)
    counted = next(p for p in budget_of(path).parts if p.kind == "tools").tokens
    chat_tools_only = Counter("gpt-5-codex").count(json.dumps(header.tools, ensure_ascii=False))
    assert counted > chat_tools_only        # the namespace and web_search are sent too


def test_a_call_to_a_namespaced_tool_is_not_an_unknown_tool():
    body = {"tools": CODEX_TOOLS, "input": [{"role": "user", "content": QUESTION},
                                            fc("call_s", "fc_s", "spawn_agent", '{"task": "x"}')]}
    assert [f.rule for f in check_responses(body)] == ["missing-tool-response"]


def test_an_upstream_400_is_recorded_as_the_model_error_it_is_and_replays(tmp_path):
    import contextlib
    import json
    import subprocess
    import sys

    import openai
    from hardening.proxy_helpers import Proxy, Upstream

    from agentdbg.transcript import load_transcript

    error = {"error": {"message": "Invalid 'messages[1].tool_calls[0].function.name': empty string.",
                       "type": "invalid_request_error", "param": None, "code": None}}
    upstream = Upstream()
    upstream.reply = lambda handler, body: Upstream.send(handler, 400, json.dumps(error).encode())
    proxy = Proxy(upstream.url, tmp_path)
    try:
        client = openai.OpenAI(base_url=proxy.url, api_key="sk-x", max_retries=0)
        with contextlib.suppress(openai.BadRequestError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}])
    finally:
        proxy.stop()
        upstream.stop()
    path = next((tmp_path / "saved").glob("*.jsonl"))
    stop = next(e for e in load_transcript(path).events if e.event_type == "stop")
    assert stop.reason == "model_error" and "HTTP 400" in stop.detail
    replay = subprocess.run([sys.executable, "-m", "agentdbg", "replay", str(path), "--json"],
                            capture_output=True, text=True)
    doc = json.loads(replay.stdout)
    assert doc["stop_reason"] == "model_error"
    assert "replay stop reason" not in replay.stderr, replay.stderr    # no false divergence
    assert replay.returncode == 7                                      # ExitStatus.MODEL_ERROR


def test_block_invalid_recording_is_judged_stopped_and_replayed_honestly(tmp_path):
    """An app that keeps sending a broken request gets --block-invalid's 400 each time and gives
    up: no false response-not-appended, check reports the blocked requests' findings (once),
    the stop is not 'completed', replay works."""
    import json
    import subprocess
    import sys

    import openai
    from hardening.proxy_helpers import Proxy

    served = Served()
    proxy = Proxy(served.url, tmp_path, "--block-invalid")
    from fmt_stack import RESPONSES_TOOLS

    tools = [{"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters")}}
             for t in RESPONSES_TOOLS]
    try:
        client = openai.OpenAI(base_url=proxy.url, api_key="sk-x", max_retries=0)
        messages = [{"role": "user", "content": QUESTION}]
        reply = client.chat.completions.create(model="m", messages=messages, tools=tools)
        call = reply.choices[0].message.tool_calls[0]
        messages.append(reply.choices[0].message.model_dump(exclude_none=True))
        blocked = 0
        for _ in range(2):       # the app forgets the result, and is blocked each time
            try:
                client.chat.completions.create(model="m", messages=[*messages, {
                    "role": "user", "content": "继续"}], tools=tools)
            except openai.BadRequestError:
                blocked += 1
        assert call.id
    finally:
        printed = proxy.stop()
        served.stop()
    assert blocked == 2
    assert "response-not-appended" not in printed, printed[-2000:]
    path = next((tmp_path / "saved").glob("*.jsonl"))
    check = subprocess.run([sys.executable, "-m", "agentdbg", "check", str(path), "--json"],
                           capture_output=True, text=True)
    rules = [f["rule"] for f in json.loads(check.stdout)["findings"]]
    assert rules == ["missing-tool-response"] and check.returncode == 1, check.stdout
    from agentdbg.transcript import load_transcript

    stop = next(e for e in load_transcript(path).events if e.event_type == "stop")
    assert stop.reason == "invalid_request" and "blocked" in stop.detail, stop
    replay = subprocess.run([sys.executable, "-m", "agentdbg", "replay", str(path), "--json"],
                            capture_output=True, text=True)
    assert replay.returncode in (0, 8), replay.stderr[-1000:]
    assert "diverged" not in replay.stderr and "error" not in replay.stderr, replay.stderr[-1000:]
