// The shop loop with the official Node SDKs, as their tool-use docs write it: `openai` (Chat
// Completions) and `@anthropic-ai/sdk` (Messages), each reading its base URL and key from the
// environment (OPENAI_BASE_URL, ANTHROPIC_BASE_URL …). Prints each answer.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const question = process.argv[2];
const orders = { "ORD-2026-001": { status: "shipped", tracking_no: "SF123456" } };
const queryOrder = ({ order_id }) => orders[order_id] ?? { ok: false, error: { type: "not_found" } };
const schema = {
  type: "object",
  properties: { order_id: { type: "string", pattern: "^ORD-\\d{4}-\\d{3}$", description: "订单号" } },
  required: ["order_id"],
};

async function withOpenAI() {
  const client = new OpenAI({ maxRetries: 0 });
  const tools = [{ type: "function", function: { name: "query_order", description: "查询订单状态。", parameters: schema } }];
  const messages = [{ role: "user", content: question }];
  for (let turn = 0; turn < 4; turn++) {
    const completion = await client.chat.completions.create({ model: "gpt-4.1", messages, tools });
    const message = completion.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) {
      const result = queryOrder(JSON.parse(call.function.arguments));
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
}

async function withAnthropic() {
  const client = new Anthropic({ maxRetries: 0 });
  const tools = [{ name: "query_order", description: "查询订单状态。", input_schema: schema }];
  const messages = [{ role: "user", content: question }];
  for (let turn = 0; turn < 4; turn++) {
    const response = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, messages, tools });
    messages.push({ role: "assistant", content: response.content });
    if (response.stop_reason !== "tool_use") return response.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    const results = response.content.filter((b) => b.type === "tool_use").map((b) => (
      { type: "tool_result", tool_use_id: b.id, content: JSON.stringify(queryOrder(b.input)) }));
    messages.push({ role: "user", content: results });
  }
}

console.log(`openai: ${await withOpenAI()}`);
console.log(`anthropic: ${await withAnthropic()}`);
