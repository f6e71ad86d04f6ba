"""A handoff, as the OpenAI Agents SDK does one, written with the official `openai` client:
the triage agent hands the conversation to the billing agent, which answers.

    agentdbg proxy --script examples/handoff.yaml -- python examples/handoff_app.py
"""

import json
import os

from openai import OpenAI

TRIAGE = "You are the triage agent. Hand billing questions to the billing agent."
BILLING = "You are the billing agent. Answer questions about charges."
HANDOFF = {"type": "function", "function": {
    "name": "transfer_to_billing_agent", "description": "Hand off to the billing agent.",
    "parameters": {"type": "object", "properties": {}}}}
INVOICES = {"type": "function", "function": {
    "name": "list_invoices", "description": "The customer's invoices of a month.",
    "parameters": {"type": "object", "required": ["month"],
                   "properties": {"month": {"type": "string"}}}}}


def main() -> None:
    client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    model = os.environ.get("AGENT_MODEL", "demo")
    question = {"role": "user", "content": "Why was I charged twice?"}
    reply = client.chat.completions.create(
        model=model, messages=[{"role": "system", "content": TRIAGE}, question], tools=[HANDOFF])
    asked = reply.choices[0].message.model_dump(exclude_none=True)
    call = asked["tool_calls"][0]
    handed = {"role": "tool", "tool_call_id": call["id"],
              "content": json.dumps({"assistant": "Billing agent"})}
    history = [question, asked, handed]
    while True:  # the billing agent's own loop, under its own instructions
        reply = client.chat.completions.create(
            model=model, messages=[{"role": "system", "content": BILLING}, *history],
            tools=[INVOICES])
        message = reply.choices[0].message.model_dump(exclude_none=True)
        history.append(message)
        if not message.get("tool_calls"):
            print(message["content"])
            return
        for c in message["tool_calls"]:
            history.append({"role": "tool", "tool_call_id": c["id"],
                            "content": json.dumps([{"id": "INV-1", "amount": 20},
                                                   {"id": "INV-2", "amount": 20}])})


if __name__ == "__main__":
    main()
