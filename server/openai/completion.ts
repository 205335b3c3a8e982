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

/** What identifies a completion: its id, creation time, model and the policy version that made it. */
export type CompletionMeta = Pick<Completion, "id" | "created" | "model" | "version">;

/** The `system_fingerprint` of a completion: the policy version that made it. */
export const systemFingerprint = (version: number): string => `agentjet-v${version}`;

/** The fields every completion object and stream chunk starts with. */
export interface CompletionHead<O extends string = string> {
  id: string;
  object: O;
  created: number;
  model: string;
  system_fingerprint: string;
}

/** The fields every completion object and stream chunk starts with; `object` names which (`chat.completion`, `text_completion`, ...). */
export function completionHead<O extends string>(meta: CompletionMeta, object: O): CompletionHead<O> {
  return { id: meta.id, object, created: meta.created, model: meta.model, system_fingerprint: systemFingerprint(meta.version) };
}

/**
 * A stream chunk: the head's fields, `choices`, then `usage` unless it is undefined, in that order. One
 * literal, not `{ ...head, choices }`: a spread followed by more properties took V8's slow path, about
 * 2 us a token.
 */
export function completionChunk(head: CompletionHead, choices: unknown[], usage?: unknown): Record<string, unknown> {
  const chunk: Record<string, unknown> = { id: head.id, object: head.object, created: head.created, model: head.model, system_fingerprint: head.system_fingerprint, choices };
  if (usage !== undefined) chunk.usage = usage;
  return chunk;
}

/** What a finished tool call's arguments add to what a stream sent of them ("" when they do not go on from it). */
export function argumentsLeft(finished: string, sent: string): string {
  return finished.length > sent.length && finished.startsWith(sent) ? finished.slice(sent.length) : "";
}

/**
 * Receives a completion while it is made (streaming). `start` comes once the request is accepted and
 * generation is about to begin; deltas follow as tokens are made. Deltas never take back text: what is
 * sent is a prefix of the final content and reasoning, and of a streamed tool call's arguments.
 */
export interface CompletionSink {
  start(meta: CompletionMeta): void;
  content(index: number, delta: string, logprobs: TokenLogprob[] | null): void;
  reasoning(index: number, delta: string): void;
  /** A tool call of choice `index` begins: `position` is its place among the choice's streamed calls; `id` the finished call's id. */
  toolCallStart(index: number, position: number, id: string, name: string): void;
  /** More of the arguments of the choice's streamed call at `position`. */
  toolCallArguments(index: number, position: number, delta: string): void;
}
