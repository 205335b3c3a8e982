import { type Completion, type CompletionChoice, type CompletionSink, completionHead } from "./completion.ts";
import type { ChatCompletionResponse } from "./schemas.ts";
import type { SseWriter } from "./sse-writer.ts";

function toMessage(c: CompletionChoice): ChatCompletionResponse["choices"][number]["message"] {
  const message: ChatCompletionResponse["choices"][number]["message"] = { role: "assistant", content: c.content, refusal: null };
  if (c.reasoning !== null) message.reasoning_content = c.reasoning;
  if (c.toolCalls.length > 0) message.tool_calls = c.toolCalls;
  return message;
}

export function toResponse(c: Completion): ChatCompletionResponse {
  return {
    ...completionHead(c, "chat.completion"),
    choices: c.choices.map((ch) => ({
      index: ch.index,
      message: toMessage(ch),
      logprobs: ch.logprobs ? { content: ch.logprobs, refusal: null } : null,
      finish_reason: ch.finishReason,
    })),
    usage: c.usage,
  };
}

/**
 * Streams a chat completion as `chat.completion.chunk` events while it is made: the role, content and
 * reasoning deltas as they come, then per choice its tool calls and finish reason (with the log-probs
 * of all its tokens), optional usage, and `[DONE]`.
 */
export function createChatStream(sse: SseWriter, n: number, includeUsage: boolean): CompletionSink & { finish(c: Completion): void } {
  let head: Record<string, unknown> = {};
  const chunk = (index: number, delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    sse.send({ ...head, choices: [{ index, delta, logprobs: null, finish_reason: null, ...extra }], ...(includeUsage ? { usage: null } : {}) });
  return {
    start(meta) {
      head = completionHead(meta, "chat.completion.chunk");
      for (let i = 0; i < n; i++) chunk(i, { role: "assistant", content: "" });
    },
    content(index, delta) {
      chunk(index, { content: delta });
    },
    reasoning(index, delta) {
      chunk(index, { reasoning_content: delta });
    },
    finish(c) {
      for (const ch of c.choices) {
        if (ch.toolCalls.length > 0) chunk(ch.index, { tool_calls: ch.toolCalls.map((t, index) => ({ index, ...t })) });
        chunk(ch.index, {}, { finish_reason: ch.finishReason, ...(ch.logprobs ? { logprobs: { content: ch.logprobs, refusal: null } } : {}) });
      }
      if (includeUsage) sse.send({ ...head, choices: [], usage: c.usage });
      sse.send("[DONE]");
      sse.end();
    },
  };
}
