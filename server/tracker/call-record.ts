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

/**
 * A tracked call as an episode's listeners get it (without `trainable`), as one literal: a rest spread,
 * `({ trainable, ...call }) => call`, took V8's slow path for each call of every ended episode.
 */
export function toCallRecord(c: TrackedCall): CallRecord {
  return {
    callId: c.callId,
    episodeId: c.episodeId,
    agentId: c.agentId,
    policy: c.policy,
    seq: c.seq,
    messages: c.messages,
    tools: c.tools,
    segments: c.segments,
    headerIds: c.headerIds,
    outputIds: c.outputIds,
    outputLogprobs: c.outputLogprobs,
    outputText: c.outputText,
    finishReason: c.finishReason,
    version: c.version,
    startedAt: c.startedAt,
    latencyMs: c.latencyMs,
  };
}
