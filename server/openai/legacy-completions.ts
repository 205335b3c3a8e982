import { type Completion, completionChunk, type CompletionHead, type CompletionSink, completionHead } from "./completion.ts";
import type { GenerationRequest } from "./generation-request.ts";
import type { CompletionRequest } from "./schemas.ts";
import { hasBias } from "./sampling-reshapes.ts";
import type { SseWriter } from "./sse-writer.ts";

/** A legacy completion request: the prompt is tokenized as it stands (no chat template). */
export function fromCompletionRequest(body: CompletionRequest): GenerationRequest {
  const prompt = typeof body.prompt === "string" ? body.prompt : body.prompt[0]!;
  const stop = body.stop === undefined || body.stop === null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop;
  return {
    prompt,
    messages: [{ role: "user", content: prompt }],
    tools: [],
    toolChoice: "none",
    parallelToolCalls: true,
    maxTokens: body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: stop.filter((s) => s.length > 0),
    seed: body.seed ?? undefined,
    logprobs: body.logprobs !== undefined && body.logprobs !== null,
    topLogprobs: body.logprobs ?? 0,
    n: body.n ?? 1,
    responseFormat: { type: "text" },
    penalties: { frequency: body.frequency_penalty ?? 0, presence: body.presence_penalty ?? 0 },
    logitBias: hasBias(body.logit_bias),
    templateKwargs: {},
    params: { toolChoice: "tool_choice", responseFormat: "response_format" },
  };
}

function legacyLogprobs(ch: Completion["choices"][number]) {
  if (!ch.logprobs) return null;
  let offset = 0;
  const text_offset = ch.logprobs.map((t) => {
    const at = offset;
    offset += t.token.length;
    return at;
  });
  return {
    tokens: ch.logprobs.map((t) => t.token),
    token_logprobs: ch.logprobs.map((t) => t.logprob),
    top_logprobs: ch.logprobs.map((t) => Object.fromEntries(t.top_logprobs.map((x) => [x.token, x.logprob]))),
    text_offset,
  };
}

export function toTextCompletion(c: Completion) {
  return {
    ...completionHead(c, "text_completion"),
    choices: c.choices.map((ch) => ({ index: ch.index, text: ch.content ?? "", logprobs: legacyLogprobs(ch), finish_reason: ch.finishReason })),
    usage: c.usage,
  };
}

/** Streams a legacy completion: text deltas as they are made, then the finish reason, optional usage, `[DONE]`. */
export function createTextStream(sse: SseWriter, includeUsage: boolean): CompletionSink & { finish(c: Completion): void } {
  let head: CompletionHead | null = null;
  const chunk = (index: number, text: string, finishReason: string | null = null, logprobs: unknown = null) =>
    sse.send(completionChunk(head!, [{ index, text, logprobs, finish_reason: finishReason }]));
  return {
    start(meta) {
      head = completionHead(meta, "text_completion");
    },
    content(index, delta) {
      chunk(index, delta);
    },
    reasoning() {},
    // a prompt string comes with no tools
    toolCallStart() {},
    toolCallArguments() {},
    finish(c) {
      for (const ch of c.choices) chunk(ch.index, "", ch.finishReason, legacyLogprobs(ch));
      if (includeUsage) sse.send(completionChunk(head!, [], c.usage));
      sse.send("[DONE]");
      sse.end();
    },
  };
}
