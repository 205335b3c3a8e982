import type { ResponseToolCall, TokenLogprob } from "./schemas.ts";

/** One finished chat completion, before it is written as JSON or as SSE chunks. */
export interface Completion {
  id: string;
  created: number;
  model: string;
  version: number;
  content: string | null;
  toolCalls: ResponseToolCall[];
  finishReason: "stop" | "length" | "tool_calls";
  logprobs: TokenLogprob[] | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}
