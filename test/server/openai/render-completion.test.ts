import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Completion, type CompletionChoice, type CompletionSink, completionHead } from "../../../server/openai/completion.ts";
import { createTextStream } from "../../../server/openai/legacy-completions.ts";
import { createChatStream, toResponseJson } from "../../../server/openai/render-completion.ts";
import type { SseWriter } from "../../../server/openai/sse-writer.ts";
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

/** An SSE writer that keeps each event's data as the real one writes it. */
function recordingSse(): { sse: SseWriter; events: string[] } {
  const events: string[] = [];
  const sse = { send: (data: unknown) => void events.push(typeof data === "string" ? data : JSON.stringify(data)), end: () => {} };
  return { sse: sse as unknown as SseWriter, events };
}

/** The chat stream's chunks as it built them before (spreads of the head and of each choice's extra fields). */
function chatChunksBefore(c: Completion, includeUsage: boolean, deltas: string[]): string[] {
  const head = completionHead(c, "chat.completion.chunk");
  const out: string[] = [];
  const chunk = (index: number, delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    out.push(JSON.stringify({ ...head, choices: [{ index, delta, logprobs: null, finish_reason: null, ...extra }], ...(includeUsage ? { usage: null } : {}) }));
  for (let i = 0; i < c.choices.length; i++) chunk(i, { role: "assistant", content: "" });
  for (const d of deltas) {
    chunk(0, { content: d });
    chunk(0, { reasoning_content: d });
  }
  for (const ch of c.choices) {
    if (ch.toolCalls.length > 0) chunk(ch.index, { tool_calls: ch.toolCalls.map((t, index) => ({ index, ...t })) });
    chunk(ch.index, {}, { finish_reason: ch.finishReason, ...(ch.logprobs ? { logprobs: { content: ch.logprobs, refusal: null } } : {}) });
  }
  if (includeUsage) out.push(JSON.stringify({ ...head, choices: [], usage: c.usage }));
  out.push("[DONE]");
  return out;
}

/** Drives a stream's sink as a completion would: start, deltas for choice 0, finish. */
function drive(stream: CompletionSink & { finish(c: Completion): void }, c: Completion, deltas: string[]): void {
  stream.start(c);
  for (const d of deltas) {
    stream.content(0, d, null);
    stream.reasoning(0, d);
  }
  stream.finish(c);
}

describe("createChatStream", () => {
  it("writes the chunks the head and choice spreads made, key for key", () => {
    fc.assert(
      fc.property(completion, fc.boolean(), fc.array(text, { maxLength: 3 }), (c, includeUsage, deltas) => {
        const { sse, events } = recordingSse();
        drive(createChatStream(sse, c.choices.length, includeUsage), c, deltas);
        expect(events).toEqual(chatChunksBefore(c, includeUsage, deltas));
      }),
      { numRuns: 200 },
    );
  });
});

describe("createTextStream", () => {
  it("writes the chunks the head and choice spreads made, key for key", () => {
    fc.assert(
      fc.property(completion, fc.boolean(), fc.array(text, { maxLength: 3 }), (c, includeUsage, deltas) => {
        const { sse, events } = recordingSse();
        drive(createTextStream(sse, includeUsage), c, deltas);
        const head = completionHead(c, "text_completion");
        const before: string[] = deltas.map((d) => JSON.stringify({ ...head, choices: [{ index: 0, text: d, logprobs: null, finish_reason: null }] }));
        for (const ch of c.choices) {
          // the legacy log-probs are the stream's own (legacyLogprobs, unchanged); the chunk around them is what is checked
          const written = JSON.parse(events[before.length]!) as { choices: Array<{ logprobs: unknown }> };
          const extra: Record<string, unknown> = { finish_reason: ch.finishReason, logprobs: written.choices[0]!.logprobs };
          before.push(JSON.stringify({ ...head, choices: [{ index: ch.index, text: "", logprobs: null, finish_reason: null, ...extra }] }));
        }
        if (includeUsage) before.push(JSON.stringify({ ...head, choices: [], usage: c.usage }));
        before.push("[DONE]");
        expect(events).toEqual(before);
      }),
      { numRuns: 200 },
    );
  });
});
