import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Completion, CompletionChoice } from "../../../server/openai/completion.ts";
import { toResponseJson } from "../../../server/openai/render-completion.ts";
import type { ChatCompletionResponse } from "../../../server/openai/schemas.ts";

/** The answer as an object, as the route built it before it wrote the JSON itself. */
function responseObject(c: Completion): ChatCompletionResponse {
  return {
    id: c.id,
    object: "chat.completion",
    created: c.created,
    model: c.model,
    system_fingerprint: `agentjet-v${c.version}`,
    choices: c.choices.map((ch) => {
      const message: ChatCompletionResponse["choices"][number]["message"] = { role: "assistant", content: ch.content, refusal: null };
      if (ch.reasoning !== null) message.reasoning_content = ch.reasoning;
      if (ch.toolCalls.length > 0) message.tool_calls = ch.toolCalls;
      return { index: ch.index, message, logprobs: ch.logprobs ? { content: ch.logprobs, refusal: null } : null, finish_reason: ch.finishReason };
    }),
    usage: c.usage,
  };
}

// every code unit, lone surrogates and control characters included
const text = fc.string({ unit: "binary", maxLength: 12 });
const count = fc.nat({ max: 100_000 });
const logprob = fc.record({ token: text, logprob: fc.double({ noNaN: true, noDefaultInfinity: true }), bytes: fc.array(fc.nat({ max: 255 }), { maxLength: 3 }) });
const choice = fc.record({
  content: fc.option(text),
  reasoning: fc.option(text),
  toolCalls: fc.array(fc.record({ id: text, type: fc.constant("function" as const), function: fc.record({ name: text, arguments: text }) }), { maxLength: 2 }),
  finishReason: fc.constantFrom("stop" as const, "length" as const, "tool_calls" as const),
  logprobs: fc.option(fc.array(fc.record({ token: text, logprob: logprob.map((l) => l.logprob), bytes: logprob.map((l) => l.bytes), top_logprobs: fc.array(logprob, { maxLength: 2 }) }), { maxLength: 3 })),
});
const completion = fc.record({
  id: text,
  created: count,
  model: text,
  version: count,
  choices: fc.array(choice, { minLength: 1, maxLength: 3 }).map((cs) => cs.map((c, index): CompletionChoice => ({ index, ...c }))),
  usage: fc.record({ prompt_tokens: count, completion_tokens: count, total_tokens: count }),
});

describe("toResponseJson", () => {
  it("writes the text JSON.stringify makes of the chat.completion object", () => {
    fc.assert(
      fc.property(completion, (c) => {
        expect(toResponseJson(c)).toBe(JSON.stringify(responseObject(c)));
      }),
      { numRuns: 500 },
    );
  });
});
