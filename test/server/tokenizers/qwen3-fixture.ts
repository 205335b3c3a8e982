import type { ChatTurnMessage, ToolDefinition } from "../../../server/tokenizers/tokenizer.ts";

/** A multi-turn chat with parallel tool calls and grouped tool responses (the pinned Qwen3 case). */
export const QWEN3_CHAT: ChatTurnMessage[] = [
  { role: "system", content: "You are a calculator." },
  { role: "user", content: "What is 2+3, then times 4?" },
  { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: '{"a": 2, "b": 3}' }] },
  { role: "tool", content: "5", toolCallId: "c1" },
  {
    role: "assistant",
    content: "Now multiply.",
    toolCalls: [
      { id: "c2", name: "mul", arguments: '{"a": 5, "b": 4}' },
      { id: "c3", name: "mul", arguments: '{"a": 1, "b": 1}' },
    ],
  },
  { role: "tool", content: "20", toolCallId: "c2" },
  { role: "tool", content: "1", toolCallId: "c3" },
  { role: "assistant", content: "The answer is 20." },
  { role: "user", content: "Thanks!" },
];

export const QWEN3_TOOLS: ToolDefinition[] = [
  {
    name: "add",
    description: "Adds",
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  },
  { name: "mul", parameters: { type: "object" } },
];
