"""Real servers on 127.0.0.1 for the wire-format tests: `serve`'s app in this process (a real
uvicorn on a real socket), `agentdbg proxy` as its own process, the official clients."""

from __future__ import annotations

import json
import threading
import time

from agentdbg.server.net import bind, url_of

QUESTION = "订单 ORD-2026-001 到哪里了?"
ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": r"^ORD-\d{4}-\d{3}$",
                                                              "description": "订单号"}},
                "required": ["order_id"]}
TRACKING_SCHEMA = {"type": "object", "properties": {"tracking_no": {"type": "string", "pattern": r"^SF\d{6}$",
                                                                    "description": "物流单号"}},
                   "required": ["tracking_no"]}
RESPONSES_TOOLS = [
    {"type": "function", "name": "query_order", "description": "查询订单状态和物流单号。",
     "parameters": ORDER_SCHEMA},
    {"type": "function", "name": "query_logistics", "description": "查询物流位置。",
     "parameters": TRACKING_SCHEMA}]
ANTHROPIC_TOOLS = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                   for t in RESPONSES_TOOLS]
RESULTS = {"query_order": {"status": "shipped", "tracking_no": "SF123456"},
           "query_logistics": {"location": "杭州转运中心"}}
SECRET = "sk-formats-SECRET-0123456789abcdef"


def run_tool(name: str, arguments) -> str:
    return json.dumps(RESULTS[name], ensure_ascii=False)


class Served:
    """`agentdbg serve`'s app (``make_app``) on uvicorn in a thread, stopped cleanly."""

    def __init__(self, provider=None, **options):
        import uvicorn

        from agentdbg.providers.offline import OfflineModel
        from agentdbg.server.serve import make_app

        self.logged: list[str] = []
        self.app = make_app(provider or OfflineModel(), log=self.logged.append, **options)
        self.sock = bind("127.0.0.1", 0)
        self.url = url_of(self.sock)
        self.root = self.url[:-len("/v1")]
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def responses_loop(client, *, stream: bool = False, input_list=None, keep=lambda item: True,
                   answer=True, **kwargs):
    """The function-calling guide's loop: append the output items, run each call, append
    its output, until the model answers. ``keep`` filters what is appended (a misuse)."""
    input_list = input_list if input_list is not None else [{"role": "user", "content": QUESTION}]
    for _ in range(6):
        if stream:
            output, text = [], ""
            for event in client.responses.create(model="gpt-4.1-mini", tools=RESPONSES_TOOLS,
                                                 input=input_list, stream=True, **kwargs):
                if event.type == "response.output_item.done":
                    output.append(event.item)
                elif event.type == "response.output_text.delta":
                    text += event.delta
        else:
            response = client.responses.create(model="gpt-4.1-mini", tools=RESPONSES_TOOLS,
                                               input=input_list, **kwargs)
            output, text = response.output, response.output_text
        input_list += [item for item in output if keep(item)]
        calls = [item for item in output if item.type == "function_call"]
        if not calls:
            return text, input_list
        for call in calls:
            if answer:
                input_list.append({"type": "function_call_output", "call_id": call.call_id,
                                   "output": run_tool(call.name, call.arguments)})
    raise AssertionError("no answer after 6 turns")


def anthropic_loop(client, *, stream: bool = False, **kwargs):
    """The tool-use docs' loop: append the assistant turn, answer every tool_use in one user
    message of tool_result blocks, until the model stops for another reason."""
    messages = [{"role": "user", "content": QUESTION}]
    for _ in range(6):
        if stream:
            with client.messages.stream(model="claude-sonnet-4-6", max_tokens=1024,
                                        tools=ANTHROPIC_TOOLS, messages=messages, **kwargs) as s:
                response = s.get_final_message()
        else:
            response = client.messages.create(model="claude-sonnet-4-6", max_tokens=1024,
                                              tools=ANTHROPIC_TOOLS, messages=messages, **kwargs)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return "".join(b.text for b in response.content if b.type == "text"), messages
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": run_tool(b.name, b.input)}
            for b in response.content if b.type == "tool_use"]})
    raise AssertionError("no answer after 6 turns")
