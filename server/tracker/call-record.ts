import type { PromptSegment } from "../tokenizers/tokenizer.ts";

/** Everything the server keeps about one chat completion of one (episode, agent). */
export interface CallRecord {
  callId: string;
  episodeId: string;
  agentId: string;
  policy: string;
  /** Order of this call within its (episode, agent), from 0. */
  seq: number;
  /** The request's messages as received (OpenAI JSON). */
  messages: unknown[];
  /** Tool definitions as received, or null. */
  tools: unknown[] | null;
  /** The prompt message by message; prompt ids = concat(segments ids) + headerIds. */
  segments: PromptSegment[];
  headerIds: number[];
  /** Generated ids, including the end-of-turn id when the model produced it. */
  outputIds: number[];
  outputLogprobs: number[];
  /** The assistant message text as the next call's context will carry it. */
  outputText: string;
  finishReason: "stop" | "length" | "tool_calls" | "overflow";
  /** Weight version that served this call. */
  version: number;
  startedAt: number;
  latencyMs: number;
}

/** A recorded call as the tracker keeps it. */
export interface TrackedCall extends CallRecord {
  /** False for frozen-model calls: kept for logs, never trained. */
  trainable: boolean;
}
