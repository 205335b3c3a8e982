import { ChatCompletionRequestSchema, CompletionRequestSchema, ResponsesRequestSchema } from "./schemas.ts";

/**
 * Bodies that reach every nested schema of the request schemas: zod compiles an object schema's fast path
 * the first time it parses one (5 ms for the chat schema on this machine), and a server's first request
 * of each kind paid that on the event loop, on top of its own work.
 */
const CHAT = {
  model: "m",
  messages: [
    { role: "system", content: "s", name: "n" },
    { role: "developer", content: [{ type: "text", text: "d" }] },
    { role: "user", content: "u" },
    { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }], refusal: null },
    { role: "tool", content: "t", tool_call_id: "c" },
  ],
  tools: [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" }, strict: false } }],
  tool_choice: { type: "function", function: { name: "f" } },
  response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object" }, strict: true } },
  stream: true,
  stream_options: { include_usage: true },
  stop: ["x"],
  logit_bias: { "1": 0 },
  chat_template_kwargs: { enable_thinking: false },
  frequency_penalty: 0,
  logprobs: true,
  top_logprobs: 1,
};

const RESPONSES = {
  model: "m",
  input: [
    { role: "user", content: "u" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "a" }] },
    { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
    { type: "function_call_output", call_id: "c", output: "o" },
    { type: "reasoning", id: "r", summary: [] },
    { type: "item_reference", id: "i" },
  ],
  tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
  tool_choice: { type: "function", name: "f" },
  text: { format: { type: "json_schema", name: "s", schema: { type: "object" } } },
};

const COMPLETION = { model: "m", prompt: "p", stop: "x", stream: false };

/** Parses each warm-up body through its schema; whether each parsed (one that fails stops short of the schemas past its error). */
export function parseWarmBodies(): boolean[] {
  return [
    ChatCompletionRequestSchema.safeParse(CHAT).success,
    ChatCompletionRequestSchema.safeParse({ ...CHAT, tool_choice: "auto", response_format: { type: "json_object" } }).success,
    ResponsesRequestSchema.safeParse(RESPONSES).success,
    CompletionRequestSchema.safeParse(COMPLETION).success,
  ];
}

let warmed = false;

/** Parses each request schema once, at start-up (once per process), so no request pays zod's compile. */
export function warmRequestSchemas(): void {
  if (warmed) return;
  warmed = true;
  parseWarmBodies();
}
