"""Multi-agent runs through the proxy's analysis: handoffs, subagents, teams, history edits
and text protocols, each fed as the frameworks send them (their request bodies, in order)."""

from __future__ import annotations

import json

import pytest

from agentdbg.server.proxy.conversations import Tracker
from agentdbg.server.proxy.lineage import lineage_lines
from agentdbg.server.proxy.reading import judge
from agentdbg.transcript import load_transcript
from agentdbg.wire import codec as codecs
from agentdbg.wire.common import strip_wire


class Proxy:
    """The proxy's analysis without its server: each request judged, recorded, answered."""

    def __init__(self, tmp_path):
        self.tracker = Tracker(tmp_path, "http://upstream/v1", label="run")
        self.seen = []

    def send(self, body: dict, reply: dict, *, wire: str = "chat", client: str = "c1"):
        codec = codecs.get(wire)
        seen = judge(codec, body, self.tracker, client, "openai")
        self.seen.append(seen)
        tools = strip_wire(seen.form.tools) if seen.form is not None else None
        lines = lineage_lines(seen, self.tracker.parent_of)
        self.tracker.record_request(seen.conv, body, seen.findings, seen.messages, wire=wire,
                                    tools=tools)
        self.tracker.record_response(seen.conv, seen.messages, reply, usage={}, finish=None,
                                     latency_ms=1)
        return seen, lines

    def close(self):
        return {load_transcript(p).header.conversation: load_transcript(p) for p in self.tracker.close()}


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def asks(*calls):
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def says(text, **extra):
    return {"role": "assistant", "content": text, **extra}


def result(cid, content):
    return {"role": "tool", "tool_call_id": cid, "content": content}


def fn(name):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}


def rules(seen):
    return [(f.rule, f.index) for f in seen.findings]


TRIAGE = {"role": "system", "content": "You are the triage agent. Hand billing questions to the billing agent."}
BILLING = {"role": "system", "content": "You are the billing agent."}
Q = {"role": "user", "content": "Why was I charged twice?"}
HANDOFF = call("call_h", "transfer_to_billing_agent", {})
HANDED = result("call_h", json.dumps({"assistant": "Billing agent"}))


def test_a_handoff_is_a_child_conversation_named_by_its_target_with_no_finding(tmp_path):
    proxy = Proxy(tmp_path)
    first, _ = proxy.send({"messages": [TRIAGE, Q], "tools": [fn("transfer_to_billing_agent")]},
                          asks(HANDOFF))
    second, lines = proxy.send({"messages": [BILLING, Q, asks(HANDOFF), HANDED],
                                "tools": [fn("lookup_invoice")]},
                               asks(call("call_i", "lookup_invoice", {})))
    assert second.conv is not first.conv and rules(second) == []
    assert lines == ["↳ handed off from conversation 1 (triage agent) to Billing agent "
                     "(call call_h: transfer_to_billing_agent)"]
    third, _ = proxy.send({"messages": [BILLING, Q, asks(HANDOFF), HANDED,
                                        asks(call("call_i", "lookup_invoice", {})),
                                        result("call_i", "two invoices")],
                           "tools": [fn("lookup_invoice")]}, says("A duplicate invoice."))
    assert third.conv is second.conv and rules(third) == []
    t = proxy.close()
    assert (t[1].agent, t[1].header.run) == ("triage agent", "run")
    assert t[2].agent == "Billing agent" and t[2].header.run == "run"
    link = t[2].header.started_by
    assert (link.conversation, link.call_id, link.tool, link.kind) == \
        (1, "call_h", "transfer_to_billing_agent", "handoff")
    assert t[1].stop.detail == "handed off to Billing agent (conversation 2)"


def test_a_real_rewrite_at_a_handoff_is_still_found(tmp_path):
    proxy = Proxy(tmp_path)
    proxy.send({"messages": [TRIAGE, Q]}, asks(HANDOFF))
    edited = {"role": "user", "content": "Why was I charged?"}
    second, _ = proxy.send({"messages": [BILLING, edited, asks(HANDOFF), HANDED]}, says("ok"))
    assert second.conv.started_by is not None and rules(second) == [("history-rewritten", 1)]
    assert second.findings[0].message.startswith("[1] user message changed")


def test_a_responses_handoff_keeps_the_user_item_unflagged(tmp_path):
    proxy = Proxy(tmp_path)
    user = {"role": "user", "content": "Why was I charged twice?"}
    fc = {"type": "function_call", "call_id": "call_h", "name": "transfer_to_billing_agent",
          "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "call_h",
           "output": json.dumps({"assistant": "Billing agent"})}
    proxy.send({"model": "m", "instructions": TRIAGE["content"], "input": [user],
                "tools": [{"type": "function", "name": "transfer_to_billing_agent", "parameters": {}}]},
               asks(HANDOFF), wire="responses")
    second, _ = proxy.send({"model": "m", "instructions": BILLING["content"], "input": [user, fc, out],
                            "tools": [{"type": "function", "name": "lookup_invoice", "parameters": {}}]},
                           says("ok"), wire="responses")
    assert second.conv.agent == "Billing agent" and rules(second) == []


AGENT_CALL = call("toolu_01", "Agent", {"description": "Find the config", "prompt": "Find the file "
                                        "that configures the proxy and say its path.",
                                        "subagent_type": "general-purpose"})


def test_a_subagent_is_the_child_of_the_call_that_started_it_and_its_result_flows_back(tmp_path):
    proxy = Proxy(tmp_path)
    main = [{"role": "system", "content": "You are Claude Code."}, {"role": "user", "content": "where?"}]
    first, _ = proxy.send({"messages": main, "tools": [fn("Agent")]}, asks(AGENT_CALL))
    sub = [{"role": "system", "content": "You are an agent for Claude Code."},
           {"role": "user", "content": [{"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
                                        {"type": "text", "text": "Find the file that configures the "
                                                                 "proxy and say its path."}]}]
    child, lines = proxy.send({"messages": sub}, says("It is proxy.toml"))
    assert child.conv is not first.conv
    assert lines == ["↳ subagent (Find the config) started by call toolu_01 (Agent) in conversation 1 "
                     "(Claude Code)"]
    back, lines = proxy.send({"messages": main + [asks(AGENT_CALL), result("toolu_01", "It is proxy.toml")],
                              "tools": [fn("Agent")]}, says("proxy.toml"))
    assert back.conv is first.conv and rules(back) == []
    assert lines == ["↳ the result of Agent toolu_01 comes from conversation 2 (Find the config)"]
    t = proxy.close()
    assert t[2].header.started_by.call_id == "toolu_01" and t[2].header.started_by.kind == "subagent"


# Codex's collaboration tools, as Codex 0.171.0 sends them (multi_agent_v2): a namespace; the
# task reaches the new agent as an agent_message whose payload the API keeps encrypted
CODEX_TOOLS = [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
               {"type": "namespace", "name": "collaboration", "description": "agents", "tools": [
                   {"type": "function", "name": n, "parameters": {"type": "object"}}
                   for n in ("spawn_agent", "wait_agent")]}]
SPAWN = call("call_spawn1", "spawn_agent", {"task_name": "say_hello", "message": "gAAAAB-sealed-task"})
WAIT = call("call_wait1", "wait_agent", {})


def item_call(c):
    return {"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
            "namespace": "collaboration", "arguments": c["function"]["arguments"]}


def item_out(cid, output):
    return {"type": "function_call_output", "call_id": cid, "output": output}


def agent_said(kind, to, sender, *parts):
    head = f"Message Type: {kind}\nTask name: {to}\nSender: {sender}\nPayload:\n"
    return {"type": "agent_message", "author": sender, "recipient": to,
            "content": [{"type": "input_text", "text": head}, *parts]}


def codex(*items):
    return {"model": "gpt-5.5", "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "use a subagent"}]},
        *items], "tools": CODEX_TOOLS}


NEW_TASK = agent_said("NEW_TASK", "/root/say_hello", "/root",
                      {"type": "encrypted_content", "encrypted_content": "gAAAAB-sealed-task"})
FORK = [item_call(SPAWN), item_out("call_spawn1", "aborted"),
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text":
         "You are now a newly spawned child agent."}]}, NEW_TASK]
SPAWNED = [item_call(SPAWN), item_out("call_spawn1", '{"task_name":"/root/say_hello"}')]


@pytest.mark.parametrize("first", ["subagent", "parent"])
def test_codex_s_forked_subagent_is_the_child_of_its_spawn_agent_call_whoever_goes_on_first(tmp_path, first):
    """Codex starts the agent with a copy of its parent's history through the spawn call; the
    parent goes on at the same time, so either request may come first."""
    proxy = Proxy(tmp_path)
    main, _ = proxy.send(codex(), asks(SPAWN), wire="responses")
    exec_call = call("call_sub1", "exec_command", {"cmd": "echo sub-hello"})
    sends = {"subagent": lambda: proxy.send(codex(*FORK), asks(exec_call), wire="responses"),
             "parent": lambda: proxy.send(codex(*SPAWNED), asks(WAIT), wire="responses")}
    order = [first, "parent" if first == "subagent" else "subagent"]
    seen = {who: sends[who]() for who in order}
    child, lines = seen["subagent"]
    assert child.conv is not main.conv and seen["parent"][0].conv is main.conv
    assert lines == ["↳ subagent (say_hello) started by call call_spawn1 (spawn_agent) in conversation 1 (Codex)"]
    sub2, _ = proxy.send(codex(*FORK, item_call(exec_call), item_out("call_sub1", "sub-hello")),
                         says("The shell printed sub-hello."), wire="responses")
    answer = agent_said("FINAL_ANSWER", "/root", "/root/say_hello",
                        {"type": "input_text", "text": "The shell printed sub-hello."})
    back, lines = proxy.send(codex(*SPAWNED, item_call(WAIT), item_out("call_wait1", '{"timed_out":false}'),
                                   answer), says("done"), wire="responses")
    assert sub2.conv is child.conv and back.conv is main.conv
    assert lines == ["↳ the answer of conversation 2 (say_hello) to spawn_agent call_spawn1 comes as a message"]
    assert [rules(s) for s in proxy.seen] == [[]] * 5
    t = proxy.close()
    assert (t[2].header.agent, t[2].header.started_by.call_id, t[2].header.started_by.kind) == \
        ("say_hello", "call_spawn1", "subagent")


def test_codex_s_subagent_without_its_parent_s_history_is_linked_by_its_new_task_message(tmp_path):
    """spawn_agent with fork_turns "none": a fresh request whose task (encrypted) comes in
    Codex's NEW_TASK message to the agent the call named."""
    proxy = Proxy(tmp_path)
    main, _ = proxy.send(codex(), asks(SPAWN), wire="responses")
    other, _ = proxy.send({"model": "gpt-5.5", "input": [agent_said(
        "NEW_TASK", "/root/someone_else", "/root", {"type": "input_text", "text": "hi"})]}, says("hi"),
        wire="responses")
    assert other.conv.started_by is None       # a task for an agent no call started: not linked
    child, lines = proxy.send({"model": "gpt-5.5", "input": [NEW_TASK], "tools": CODEX_TOOLS},
                              says("hello"), wire="responses")
    assert child.conv is not main.conv and child.conv.started_by.call_id == "call_spawn1"
    assert lines == ["↳ subagent (say_hello) started by call call_spawn1 (spawn_agent) in conversation 1 (Codex)"]


def test_a_main_agent_that_repeats_its_subagent_s_task_goes_on_in_its_own_conversation(tmp_path):
    """Only a call that forks its caller's history (Codex's spawn_agent) starts an agent with a
    copy of it: Claude Code's main agent quoting its Agent call's task later is still itself."""
    proxy = Proxy(tmp_path)
    main = [{"role": "system", "content": "You are Claude Code."}, {"role": "user", "content": "where?"}]
    first, _ = proxy.send({"messages": main, "tools": [fn("Agent")]}, asks(AGENT_CALL))
    again = {"role": "user", "content": "Again: Find the file that configures the proxy and say its path."}
    later, _ = proxy.send({"messages": main + [asks(AGENT_CALL), result("toolu_01", "no idea"), again],
                           "tools": [fn("Agent")]}, says("proxy.toml"))
    assert later.conv is first.conv and later.conv.started_by is None


def test_a_team_leader_that_delegates_is_named_by_its_role(tmp_path):
    """agno's Team: the leader's instructions name no one; it delegates with
    ``delegate_task_to_member``, which makes it the team's leader."""
    proxy = Proxy(tmp_path)
    lead = [{"role": "developer", "content": "Delegate questions about orders.\n<team_members>…"}, Q]
    delegate = call("call_d1", "delegate_task_to_member", {"member_id": "order-agent", "task": "Find ORD-1."})
    proxy.send({"messages": lead, "tools": [fn("delegate_task_to_member")]}, asks(delegate))
    member = [{"role": "developer", "content": "<your_role>Look orders up</your_role>"},
              {"role": "user", "content": "Find ORD-1."}]
    _, lines = proxy.send({"messages": member}, says("shipped"))
    assert lines == ["↳ subagent (order-agent) started by call call_d1 (delegate_task_to_member) in "
                     "conversation 1 (team leader)"]
    proxy.send({"messages": lead + [asks(delegate), result("call_d1", "shipped")]}, says("Shipped."))
    t = proxy.close()
    from agentdbg.transcript.tree import named

    assert [named(t[n].header, t[n].events).agent for n in (1, 2)] == ["team leader", "order-agent"]


SK_CALL = call("call_w", "get_weather", {"city": "Paris"})


def test_a_name_added_to_a_stored_message_is_a_note_in_the_same_conversation(tmp_path):
    """Semantic Kernel's follow-up: "name" added to the stored assistant messages, from a new
    connection."""
    proxy = Proxy(tmp_path)
    system = {"role": "system", "content": "Answer weather questions."}
    first, _ = proxy.send({"messages": [system, {"role": "user", "content": "Paris?"}]}, asks(SK_CALL))
    proxy.send({"messages": [system, {"role": "user", "content": "Paris?"}, asks(SK_CALL),
                             result("call_w", "20C")]}, says("20C in Paris."))
    follow = [system, {"role": "user", "content": "Paris?"}, {**asks(SK_CALL), "name": "WeatherAgent"},
              result("call_w", "20C"), says("20C in Paris.", name="WeatherAgent"),
              {"role": "user", "content": "And London?"}]
    third, _ = proxy.send({"messages": follow}, says("15C"), client="c2")
    assert third.conv is first.conv and rules(third) == []
    assert [e.text for e in third.edits] == ['name "WeatherAgent" added to [2]']
    assert not any(e.lost for e in third.edits)
    t = proxy.close()
    assert t[1].agent == "WeatherAgent" and len(t) == 1


def test_two_conversations_whose_model_said_the_same_words_stay_two_with_no_finding(tmp_path):
    """A model's short text reply ("hello") is not unique: a request that starts from another
    question and holds the same words is a new conversation, not an edited one (the merge of
    multi-agent runs called it history-rewritten@0 on the most recent conversation)."""
    proxy = Proxy(tmp_path)
    first, _ = proxy.send({"messages": [{"role": "user", "content": "Hi from app A"}]}, says("hello"))
    second, _ = proxy.send({"messages": [{"role": "user", "content": "Hi from app B"}]}, says("hello"))
    again, _ = proxy.send({"messages": [{"role": "user", "content": "Hi from app C"}, says("hello"),
                                        {"role": "user", "content": "and then?"}]}, says("ok"))
    assert again.conv is not first.conv and again.conv is not second.conv
    assert rules(again) == [] and again.edits == []


def test_trimming_a_past_turn_is_a_note_and_removing_work_in_progress_is_a_warning(tmp_path):
    """agno's max_tool_calls_from_history drops an old call and its result (the answer that
    used it stays); the same cut while the model is still working on them is a warning."""
    proxy = Proxy(tmp_path)
    u1, u2 = {"role": "user", "content": "Paris?"}, {"role": "user", "content": "London?"}
    history = [u1, asks(SK_CALL), result("call_w", "20C"), says("20C in Paris."), u2]
    proxy.send({"messages": history}, asks(call("call_l", "get_weather", {"city": "London"})))
    trimmed = [u1, says("20C in Paris."), u2, asks(call("call_l", "get_weather", {"city": "London"})),
               result("call_l", "15C")]
    seen, _ = proxy.send({"messages": trimmed}, says("15C"))
    assert rules(seen) == [] and [(e.text, e.lost) for e in seen.edits] == \
        [("2 messages removed (call A and its result)", False)]

    proxy = Proxy(tmp_path / "b")
    proxy.send({"messages": [u1]}, asks(SK_CALL))
    proxy.send({"messages": [u1, asks(SK_CALL), result("call_w", "20C")]},
               asks(call("call_x", "get_weather", {"city": "Lyon"})))
    cut, _ = proxy.send({"messages": [u1, asks(call("call_x", "get_weather", {"city": "Lyon"})),
                                      result("call_x", "22C")]}, says("ok"))
    assert rules(cut) == [("history-rewritten", 1)]
    assert cut.findings[0].message.startswith("2 messages removed (call A and its result): the "
                                              "model loses work")


def test_the_question_removed_is_said_plainly(tmp_path):
    """AutoGen's BufferedChatCompletionContext drops the oldest messages: the question too."""
    proxy = Proxy(tmp_path)
    system = {"role": "system", "content": "You are a helpful AI assistant."}
    u = {"role": "user", "content": "Paris?", "name": "user"}
    proxy.send({"messages": [system, u]}, asks(SK_CALL))
    proxy.send({"messages": [system, u, asks(SK_CALL), result("call_w", "20C")]},
               asks(call("call_y", "get_weather", {"city": "Nice"})))
    seen, _ = proxy.send({"messages": [system, asks(SK_CALL), result("call_w", "20C"),
                                       asks(call("call_y", "get_weather", {"city": "Nice"})),
                                       result("call_y", "21C")]}, says("ok"))
    assert rules(seen) == [("history-rewritten", 1)]
    assert seen.findings[0].message.startswith("[1] user question removed")


def test_a_trim_that_leaves_an_orphan_result_is_one_finding(tmp_path):
    """openai-node's follow-up from runner.messages.slice(-3): the API rejects the orphan
    result; that is the defect, said once."""
    proxy = Proxy(tmp_path)
    two = asks(call("call_a", "f", {}), call("call_b", "f", {}))
    proxy.send({"messages": [Q], "tools": [fn("f")]}, two)
    proxy.send({"messages": [Q, two, result("call_a", "1"), result("call_b", "2")], "tools": [fn("f")]},
               says("done"))
    seen, _ = proxy.send({"messages": [result("call_a", "1"), result("call_b", "2"), says("done"),
                                       {"role": "user", "content": "and?"}], "tools": [fn("f")]},
                         says("more"))
    assert rules(seen) == [("orphan-tool-message", 0)]


def dspy(question: str, steps: int) -> dict:
    traj = "".join(f"[[ ## thought_{n} ## ]]\nlook it up\n\n[[ ## tool_name_{n} ## ]]\nquery_order\n\n"
                   f"[[ ## tool_args_{n} ## ]]\n{{\"order_id\": \"ORD-{n}\"}}\n\n"
                   f"[[ ## observation_{n} ## ]]\n{{\"status\": \"shipped\"}}\n\n" for n in range(steps))
    user = (f"[[ ## question ## ]]\n{question}\n\n[[ ## trajectory ## ]]\n{traj}\n"
            "Respond with the corresponding output fields, starting with the field `[[ ## next_thought ## ]]`.")
    return {"messages": [{"role": "system", "content": "Your input fields are: question, trajectory."},
                         {"role": "user", "content": user}]}


def test_a_text_protocols_steps_stay_one_conversation_with_their_calls_shown(tmp_path):
    proxy = Proxy(tmp_path)
    reply = says("[[ ## next_thought ## ]]\nx\n\n[[ ## next_tool_name ## ]]\nquery_order")
    first, _ = proxy.send(dspy("Where is ORD-1?", 0), reply)
    second, lines = proxy.send(dspy("Where is ORD-1?", 1), reply)
    third, lines = proxy.send(dspy("Where is ORD-1?", 2), says("done"))
    assert first.conv is second.conv is third.conv
    assert rules(second) == rules(third) == []
    assert lines == ['  text step 0: query_order({"order_id": "ORD-0"}) → {"status": "shipped"}',
                     '  text step 1: query_order({"order_id": "ORD-1"}) → {"status": "shipped"}']
    again, _ = proxy.send(dspy("Where is ORD-1?", 0), reply)   # the same program run again
    assert again.conv is not first.conv


def test_a_dspy_run_s_extract_step_stays_in_its_conversation_and_lost_steps_are_found(tmp_path):
    """The closing extract step (another signature: its own system text and output fields)
    goes on from the same question with the whole trajectory: the same conversation. A step
    whose prompt no longer shows an earlier step is history-rewritten, said as the step lost."""
    proxy = Proxy(tmp_path)
    reply = says("[[ ## next_thought ## ]]\nx\n\n[[ ## next_tool_name ## ]]\nquery_order")
    first, _ = proxy.send(dspy("Where is ORD-1?", 0), reply)
    proxy.send(dspy("Where is ORD-1?", 1), reply)
    extract = dspy("Where is ORD-1?", 2)
    extract["messages"][0]["content"] = "Your input fields are: question, trajectory. Your output fields: reasoning, answer."
    extract["messages"][1]["content"] = extract["messages"][1]["content"].replace("next_thought", "reasoning")
    last, _ = proxy.send(extract, says("[[ ## reasoning ## ]]\nok\n\n[[ ## answer ## ]]\nshipped"))
    assert last.conv is first.conv and rules(last) == []

    proxy = Proxy(tmp_path / "forgetful")
    first, _ = proxy.send(dspy("Where is ORD-1?", 1), reply)
    forgot = dspy("Where is ORD-1?", 2)
    step_0 = forgot["messages"][1]["content"].index("[[ ## thought_0 ## ]]")
    step_1 = forgot["messages"][1]["content"].index("[[ ## thought_1 ## ]]")
    content = forgot["messages"][1]["content"]
    forgot["messages"][1]["content"] = content[:step_0] + content[step_1:]      # step 0 cut out
    seen, _ = proxy.send(forgot, reply)
    assert seen.conv is first.conv
    assert rules(seen) == [("history-rewritten", 1)]
    assert [e.text for e in seen.conv.rules.edits] == ["text step 0 removed (query_order and its observation)"]


@pytest.mark.parametrize("text,name", [
    ("You are the triage agent. Route questions.", "triage agent"),
    ("You are a helpful assistant.", None),
    ("You are WeatherAgent, who answers weather questions.", "WeatherAgent"),
    ("你是订单客服，用工具查询订单和物流。", "订单客服"),
    ("Answer briefly.", None),
    ("You are the critic. Check the order agent's answer.", "critic"),   # AutoGen's teams tutorial
    ("You are an agent.", None),
    ("You are the best.", None),
    ("You are a team supervisor managing an order expert.", "team supervisor"),  # langgraph-supervisor
    ("You are an order expert. Always use one tool at a time.", "order expert"),
])
def test_the_instructions_name_the_agent_only_when_they_say_it(text, name):
    from agentdbg.agents import identity

    assert identity(text) == name


def handoff_run(folder, found="two"):
    """A triage agent hands off to the billing agent, which starts a subagent (that finds
    ``found`` invoices): three conversations of one run, saved in ``folder``."""
    proxy = Proxy(folder)
    proxy.send({"messages": [TRIAGE, Q]}, asks(HANDOFF))
    spawn = call("toolu_9", "Agent", {"description": "Read invoices", "prompt": "List the invoices of May."})
    history = [BILLING, Q, asks(HANDOFF), HANDED]
    proxy.send({"messages": history}, asks(spawn))
    proxy.send({"messages": [{"role": "system", "content": "Sub."},
                             {"role": "user", "content": "List the invoices of May."}]}, says(found))
    proxy.send({"messages": history + [asks(spawn), result("toolu_9", found)]}, says("A duplicate."))
    return proxy.close()


def test_runs_lists_a_run_as_a_tree_under_the_calls_that_started_it(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app
    from agentdbg.transcript.runs import runs_dir

    handoff_run(runs_dir())
    r = CliRunner().invoke(app, ["runs"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    rows = [line.rstrip() for line in r.output.splitlines() if line.lstrip()[:1].isdigit()]
    assert [row[:1] for row in rows] == ["1", "2", "3"], r.output
    assert rows[0].endswith("    1  [triage agent] Why was I charged twice?"), r.output
    assert rows[1].endswith("    2  └─ Billing agent ← handoff from #1 (call call_h)"), r.output
    assert rows[2].endswith("    1    └─ Read invoices ← subagent from #2 (call toolu_9)"), r.output


def test_report_of_one_conversation_writes_the_whole_run_as_a_tree(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    t = handoff_run(tmp_path / "saved")
    out = tmp_path / "run.html"
    r = CliRunner().invoke(app, ["report", str(t[2].path), "-o", str(out)])
    assert r.exit_code == 0 and "a run of 3 conversations" in r.output, r.output
    html = out.read_text(encoding="utf-8")
    assert html.count('class="agent a') == 6 and 'data-conversation="3"' in html
    assert "handed off by call call_h (transfer_to_billing_agent) in conversation 1" in html


@pytest.mark.browser
@pytest.mark.slow
def test_the_report_draws_the_tree_collapsible_with_a_colour_per_agent(tmp_path):
    import provision
    from playwright.sync_api import sync_playwright

    from agentdbg.report.runpage import render_run_report

    t = handoff_run(tmp_path / "saved")
    out = tmp_path / "run.html"
    out.write_text(render_run_report([t[n].path for n in (1, 2, 3)], "run"), encoding="utf-8")
    flags = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=provision.chromium_path(), args=flags)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(out.resolve().as_uri())
        tree = page.locator("nav.tree")
        assert tree.locator("summary").first.inner_text().startswith("conversation 1 (triage agent)")
        sub = tree.locator('.leaf[data-conversation="3"]')
        assert sub.is_visible() and "started by call toolu_9 (Agent)" in sub.inner_text()
        colours = {tree.locator(".agent").nth(k).evaluate("e => getComputedStyle(e).backgroundColor")
                   for k in range(3)}
        assert len(colours) == 3                      # each agent its own colour
        tree.locator('details[data-conversation="2"] > summary').click()
        assert not sub.is_visible()                   # collapsed with its parent
        tree.locator('details[data-conversation="1"] > summary a').click()
        assert page.evaluate("location.hash") == "#c1"
        browser.close()


def test_the_proxy_command_s_summary_draws_the_run_as_a_tree(tmp_path):
    from agentdbg.report.runpage import summarize
    from agentdbg.server.launch.summary import summary_lines

    t = handoff_run(tmp_path)
    paths = [t[n].path for n in (1, 2, 3)]
    lines = summary_lines("app exited with status 0 after 1.0 s", summarize(paths), None,
                          tmp_path / "log", [], 0)
    convs = [line for line in lines if "conversation " in line and "request" in line]
    assert [line.split(":")[0] for line in convs] == [
        "  conversation 1 (triage agent)",
        "  └─ conversation 2 (Billing agent) ← handoff from conversation 1 (call call_h)",
        "     └─ conversation 3 (Read invoices) ← subagent from conversation 2 (call toolu_9)"]
    assert convs[1].split(": ")[1].startswith("2 requests ✓"), convs


def test_export_of_one_conversation_sends_the_run_as_one_trace_of_agents(tmp_path):
    """OTel: each conversation an invoke_agent span named by its agent, the subagent's under
    the execute_tool span of the Agent call that started it, the handoff's under its starter."""
    from report.otlp_receiver import Receiver, attributes
    from typer.testing import CliRunner

    from agentdbg.cli import app

    t = handoff_run(tmp_path / "saved")
    with Receiver() as receiver:
        r = CliRunner().invoke(app, ["export", str(t[1].path), "--otlp", receiver.url])
    assert r.exit_code == 0 and "(a run of 3 conversations)" in r.output, r.output
    spans = receiver.spans()
    assert len({s.trace_id for s in spans}) == 1
    agents = {attributes(s).get("gen_ai.agent.name"): s for s in spans
              if attributes(s).get("gen_ai.operation.name") == "invoke_agent"}
    assert sorted(agents) == ["Billing agent", "Read invoices", "triage agent"]
    assert agents["Billing agent"].name == "invoke_agent Billing agent"
    assert agents["triage agent"].parent_span_id == b""
    assert agents["Billing agent"].parent_span_id == agents["triage agent"].span_id
    (spawn,) = [s for s in spans if attributes(s).get("gen_ai.tool.call.id") == "toolu_9"]
    assert spawn.name == "execute_tool Agent" and spawn.parent_span_id == agents["Billing agent"].span_id
    assert agents["Read invoices"].parent_span_id == spawn.span_id


def test_diff_of_two_runs_aligns_them_agent_by_agent(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    a, b = handoff_run(tmp_path / "a"), handoff_run(tmp_path / "b", found="three")
    r = CliRunner().invoke(app, ["diff", str(a[1].path), str(b[1].path)], env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output
    heads = [line for line in r.output.splitlines() if line.startswith("agent ")]
    assert heads == ["agent triage agent: same",
                     "agent triage agent › Billing agent: differs",
                     "agent triage agent › Billing agent › Read invoices: differs"], r.output
    assert "1 of 3 agent(s) match" in r.output
    same = CliRunner().invoke(app, ["diff", str(a[2].path), str(handoff_run(tmp_path / "c")[3].path)])
    assert same.exit_code == 0 and "3 of 3 agent(s) match" in same.output, same.output


def test_replay_of_one_conversation_replays_the_whole_tree(tmp_path):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    t = handoff_run(tmp_path / "saved")
    r = CliRunner().invoke(app, ["replay", str(t[3].path)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    heads = [line for line in r.output.splitlines() if "── conversation" in line]
    assert heads == ["── conversation 1 (triage agent)",
                     "  ── conversation 2 (Billing agent) ← handed off by call call_h "
                     "(transfer_to_billing_agent) in conversation 1",
                     "    ── conversation 3 (Read invoices) ← started by call toolu_9 (Agent) in "
                     "conversation 2"], r.output
    assert "replayed a run of 3 conversations: all replayed" in r.output


@pytest.mark.parametrize("command", ["replay", "report", "diff", "export"])
def test_a_damaged_conversation_of_the_run_is_named_in_one_line(tmp_path, command):
    from typer.testing import CliRunner

    from agentdbg.cli import app

    t = handoff_run(tmp_path / "saved")
    t[2].path.write_text('{"type": "header", "format": "agentdbg-transcript", "version": 2}\nnot json\n',
                         encoding="utf-8")
    args = {"replay": [str(t[1].path)], "report": [str(t[1].path), "-o", str(tmp_path / "r.html")],
            "diff": [str(t[1].path), str(t[3].path)],
            "export": [str(t[1].path), "--format", "otlp-json", "-o", str(tmp_path / "s.json")]}[command]
    r = CliRunner().invoke(app, [command, *args])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines()[-1] == \
        f"agentdbg: error: {t[2].path}:2:1: invalid JSON: Expecting value", r.output


def test_assert_run_replays_replays_every_agent_and_names_the_one_that_did_not(tmp_path):
    from agentdbg.testing import ReplayMismatch, assert_run_replays

    t = handoff_run(tmp_path / "saved")
    assert list(assert_run_replays(t[2].path)) == [
        "conversation 1 (triage agent)", "conversation 2 (Billing agent)", "conversation 3 (Read invoices)"]
    sub = t[3].path
    sub.write_text(sub.read_text(encoding="utf-8").replace('"reason": "completed"', '"reason": "max_turns"'),
                   encoding="utf-8")
    with pytest.raises(ReplayMismatch) as caught:
        assert_run_replays(t[1].path)
    assert str(caught.value) == (f"{t[1].path}: 1 of 3 conversation(s) did not replay:\n"
                                 f"  conversation 3 (Read invoices) ({sub.name}):\n"
                                 "    stop reason: recorded max_turns, replayed completed")


def test_the_pytest_plugin_labels_each_conversation_of_a_run_by_its_agent(pytester):
    """`pytest --agentdbg-replay`: one item per conversation, its id naming the agent; the
    failing one says which agent it was; a Claude Code session with a subagent is two items."""
    from pathlib import Path

    t = handoff_run(pytester.path / "runs")
    claude = Path(__file__).parent / "fixtures" / "traces" / "claude-code"
    session = pytester.path / "session"
    session.mkdir()
    (session / "s.jsonl").write_bytes((claude / "0542af78-77da-41c1-9127-3d76f8fd6efd.jsonl").read_bytes())
    subagents = session / "s" / "subagents"
    subagents.mkdir(parents=True)
    for f in (claude / "0542af78-77da-41c1-9127-3d76f8fd6efd" / "subagents").iterdir():
        (subagents / f.name).write_bytes(f.read_bytes())
    sub = t[3].path
    sub.write_text(sub.read_text(encoding="utf-8").replace('"reason": "completed"', '"reason": "max_turns"'),
                   encoding="utf-8")
    result = pytester.runpytest("--agentdbg-replay", "runs", "session", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines_random([
        f"runs/{t[1].path.name}::replay[[]triage agent[]] PASSED*",
        f"runs/{t[2].path.name}::replay[[]Billing agent[]] PASSED*",
        f"runs/{sub.name}::replay[[]Read invoices[]] FAILED*",
        "session/s.jsonl::replay[[]main[]] PASSED*",
        "session/s.jsonl::replay[[]general-purpose[]] PASSED*",
        "FAILED runs/*::replay[[]Read invoices[]]*"])


def test_the_lineage_lines_in_chinese(tmp_path):
    """`proxy --lang zh`: who started a conversation and where a call's result came from, said
    in Chinese (ids, tools and agents' names verbatim); English unchanged above."""
    from agentdbg import i18n

    proxy = Proxy(tmp_path)
    main = [{"role": "system", "content": "You are Claude Code."}, {"role": "user", "content": "where?"}]
    sub = [{"role": "system", "content": "You are an agent for Claude Code."},
           {"role": "user", "content": "Find the file that configures the proxy and say its path."}]
    try:
        i18n.use("zh")
        proxy.send({"messages": main, "tools": [fn("Agent")]}, asks(AGENT_CALL))
        _, started = proxy.send({"messages": sub}, says("It is proxy.toml"))
        _, back = proxy.send({"messages": main + [asks(AGENT_CALL), result("toolu_01", "It is proxy.toml")],
                              "tools": [fn("Agent")]}, says("proxy.toml"))
        proxy.send({"messages": [TRIAGE, Q], "tools": [fn("transfer_to_billing_agent")]}, asks(HANDOFF))
        _, handed = proxy.send({"messages": [BILLING, Q, asks(HANDOFF), HANDED]}, says("ok"))
    finally:
        i18n.use("en")
    assert started == ["↳ 子代理（Find the config）由对话 1（Claude Code）中的调用 toolu_01（Agent）启动"]
    assert back == ["↳ Agent toolu_01 的结果来自对话 2（Find the config）"]
    assert handed == ["↳ 由对话 3（triage agent）移交给 Billing agent（调用 call_h：transfer_to_billing_agent）"]
