import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChatCompletionRequestSchema } from "../../../server/openai/schemas.ts";
import { simpleChatRequest } from "../../../server/openai/simple-chat-request.ts";
import { fromChatRequest } from "../../../server/openai/to-turn-messages.ts";

/** Values a field may take in a request: valid ones, near misses, and wrong types. */
const anyValue = fc.oneof(
  fc.constantFrom(undefined, null, true, false, 0, -0, 1, 2, 16, 17, 20, 21, -1, 0.5, 1.5, 2.5, 2 ** 53, "", "x", "function", [], {}, [{ type: "text", text: "hi" }]),
  fc.string({ maxLength: 4 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const ROOT_FIELDS = ["model", "messages", "stream", "parallel_tool_calls", "logprobs", "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "top_logprobs", "n", "user", "stop", "tools", "tool_choice", "stream_options", "frequency_penalty", "presence_penalty", "logit_bias", "unknown"];
const MESSAGE_FIELDS = ["role", "content", "name", "tool_call_id", "tool_calls", "refusal", "unknown"];
const CALL_FIELDS = ["id", "type", "function", "unknown"];

/** A valid request of every message shape, then a few fields (of the body, a message, a tool call) set to any value or removed. */
function validBody(): Record<string, unknown> {
  return {
    model: "main",
    messages: [
      { role: "system", content: "s" },
      { role: "developer", content: "d", name: "n" },
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }], refusal: null },
      { role: "tool", content: "r", tool_call_id: "c1" },
    ],
  };
}
const mutation = fc.record({
  where: fc.constantFrom("root", "message", "call", "function"),
  message: fc.integer({ min: 0, max: 4 }),
  field: fc.integer({ min: 0, max: 100 }),
  value: anyValue,
  remove: fc.boolean(),
});
const body = fc.array(mutation, { maxLength: 3 }).map((mutations) => {
  const b = validBody();
  const messages = b.messages as Array<Record<string, unknown>>;
  for (const m of mutations) {
    let target: Record<string, unknown> | undefined;
    let fields: readonly string[];
    if (m.where === "root") [target, fields] = [b, ROOT_FIELDS];
    else if (m.where === "message") [target, fields] = [Array.isArray(b.messages) ? messages[m.message] : undefined, MESSAGE_FIELDS];
    else if (m.where === "call") [target, fields] = [Array.isArray(b.messages) && Array.isArray(messages[3]?.tool_calls) ? (messages[3]!.tool_calls as Array<Record<string, unknown>>)[0] : undefined, CALL_FIELDS];
    else [target, fields] = [Array.isArray(b.messages) && Array.isArray(messages[3]?.tool_calls) ? ((messages[3]!.tool_calls as Array<Record<string, unknown>>)[0]?.function as Record<string, unknown>) : undefined, ["name", "arguments"]];
    if (typeof target !== "object" || target === null) continue;
    const field = fields[m.field % fields.length]!;
    if (m.remove) delete target[field];
    else target[field] = m.value;
  }
  return b;
});

/** The request as the server reads it, or the 400 it answers. */
function read(body: Parameters<typeof fromChatRequest>[0]): unknown {
  try {
    return fromChatRequest(body);
  } catch (err) {
    return { error: String(err) };
  }
}

describe("simple chat requests: recognised without zod, read exactly as zod's output", () => {
  it("accepts only what the schema accepts, and the server reads the same request from either", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(body, (b) => {
        const fast = simpleChatRequest(b);
        if (fast === null) {
          refused++;
          return;
        }
        accepted++;
        const zod = ChatCompletionRequestSchema.safeParse(b);
        expect(zod.success).toBe(true);
        if (!zod.success) return;
        expect(read(fast)).toEqual(read(zod.data));
        expect(fast.stream ?? null).toEqual(zod.data.stream ?? null);
        expect(fast.stream_options ?? null).toEqual(zod.data.stream_options ?? null);
      }),
      { numRuns: 20_000 },
    );
    // the generator reaches the accepted shape, not only refusals
    expect(accepted).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });

  it("recognises the plain request agents send, and leaves structured ones to the schema", () => {
    const plain = { model: "main", messages: [{ role: "system", content: "s" }, { role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", content: "r", tool_call_id: "c1" }], temperature: 0.7, max_tokens: 64, stream: false };
    expect(simpleChatRequest(plain)).toBe(plain);
    expect(simpleChatRequest({ ...plain, tools: [{ type: "function", function: { name: "f" } }] })).toBeNull();
    expect(simpleChatRequest({ ...plain, messages: [{ role: "user", content: [{ type: "text", text: "q" }] }] })).toBeNull();
    expect(simpleChatRequest({ ...plain, messages: [] })).toBeNull();
    expect(simpleChatRequest({ ...plain, n: 17 })).toBeNull();
  });
});
