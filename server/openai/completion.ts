import type { ResponseToolCall, TokenLogprob } from "./schemas.ts";

export type FinishReason = "stop" | "length" | "tool_calls";

/** One choice of a finished completion. */
export interface CompletionChoice {
  index: number;
  content: string | null;
  /** The text of a leading `<think>` block (`reasoning_content`), or null. */
  reasoning: string | null;
  toolCalls: ResponseToolCall[];
  finishReason: FinishReason;
  logprobs: TokenLogprob[] | null;
}

/** One finished completion (n choices), before it is written as JSON or as SSE events. */
export interface Completion {
  id: string;
  created: number;
  model: string;
  version: number;
  choices: CompletionChoice[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/**
 * Receives a completion while it is made (streaming). `start` comes once the request is accepted and
 * generation is about to begin; deltas follow as tokens are made. Deltas never take back text: what is
 * sent is a prefix of the final content and reasoning.
 */
export interface CompletionSink {
  start(meta: { id: string; created: number; model: string; version: number }): void;
  content(index: number, delta: string, logprobs: TokenLogprob[] | null): void;
  reasoning(index: number, delta: string): void;
}
