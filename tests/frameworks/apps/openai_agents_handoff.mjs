// A handoff with the OpenAI Agents SDK for JavaScript (`@openai/agents`, with `zod`), as its
// docs write one: a triage agent whose `handoffs: [...]` names the specialist, `run()`. The
// default client reads OPENAI_BASE_URL / OPENAI_API_KEY from the environment. The Python
// twin is openai_agents_handoff.py; the data is shop.py's.
//
//     --chat-completions  setOpenAIAPI('chat_completions') (default: the Responses API)
//     --stream            run(..., { stream: true }) and iterate the events
//     --trim              misuse: a callModelInputFilter that keeps the last 3 input items,
//                         cutting the handoff's call from its output once the order agent works
import { Agent, run, setOpenAIAPI, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";

const QUESTION = "订单 ORD-2026-001 到哪里了?";
const ORDERS = { "ORD-2026-001": { status: "shipped", tracking_no: "SF123456" } };
const SHIPMENTS = { SF123456: { location: "杭州转运中心" } };
const NOT_FOUND = { ok: false, error: { type: "not_found" } };

const flags = new Set(process.argv.slice(2));
setTracingDisabled(true); // no trace export: this endpoint is not OpenAI's
if (flags.has("--chat-completions")) setOpenAIAPI("chat_completions");

const queryOrder = tool({
  name: "query_order",
  description: "查询订单状态和物流单号。当用户询问某个订单时使用。",
  parameters: z.object({ order_id: z.string().regex(/^ORD-\d{4}-\d{3}$/).describe("订单号，例如 ORD-2026-001") }),
  execute: async ({ order_id }) => JSON.stringify(ORDERS[order_id] ?? NOT_FOUND),
});
const queryLogistics = tool({
  name: "query_logistics",
  description: "用物流单号查询运输进度（当前位置）。已知物流单号时使用。",
  parameters: z.object({ tracking_no: z.string().regex(/^[A-Z]{2}\d{6}$/).describe("物流单号，例如 SF123456") }),
  execute: async ({ tracking_no }) => JSON.stringify(SHIPMENTS[tracking_no] ?? NOT_FOUND),
});

const model = flags.has("--chat-completions") ? "gpt-4o-mini" : "gpt-4.1-mini";
const orderAgent = new Agent({
  name: "Order agent",
  handoffDescription: "Answers questions about orders and parcels.",
  instructions: "You are the order agent. Look orders and parcels up with your tools.",
  model,
  tools: [queryOrder, queryLogistics],
});
const triageAgent = Agent.create({
  name: "Triage agent",
  instructions: "You are the triage agent. Hand order questions to the order agent.",
  model,
  handoffs: [orderAgent],
});

const keepLastThree = ({ modelData }) => ({ instructions: modelData.instructions, input: modelData.input.slice(-3) });
const options = flags.has("--trim") ? { callModelInputFilter: keepLastThree } : {};

if (flags.has("--stream")) {
  const result = await run(triageAgent, QUESTION, { ...options, stream: true });
  for await (const _event of result) {
    // each event as it comes; the answer is read once the stream completed
  }
  await result.completed;
  console.log(result.finalOutput);
} else {
  const result = await run(triageAgent, QUESTION, options);
  console.log(result.finalOutput);
}
