import { randomUUID } from "node:crypto";
import { FrozenUpstreamError, type FrozenModel } from "../engines/frozen.ts";
import type { EpisodeStore } from "../episodes/episode-store.ts";
import { canonicalText } from "../tokenizers/canonical-text.ts";
import type { Completion } from "./completion.ts";
import { conflict, HttpError } from "./errors.ts";
import type { ResponseToolCall } from "./schemas.ts";

export interface FrozenCall {
  store: EpisodeStore;
  model: FrozenModel;
  episodeId: string;
  agentId: string;
  attempt: number;
  /** The validated request body as received. */
  body: Record<string, unknown>;
  rawMessages: unknown[];
  rawTools: unknown[] | null;
}

function toToolCalls(raw: unknown[] | undefined): ResponseToolCall[] {
  return (raw ?? []).flatMap((c) => {
    const f = (c as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }).function;
    if (!f || typeof f.name !== "string") return [];
    const id = (c as { id?: unknown }).id;
    return [{
      id: typeof id === "string" ? id : `call_${randomUUID().slice(0, 8)}`,
      type: "function" as const,
      function: { name: f.name, arguments: typeof f.arguments === "string" ? f.arguments : JSON.stringify(f.arguments ?? {}) },
    }];
  });
}

/** Forwards a frozen agent's call to its endpoint and records it for logs only (never trained). */
export async function completeWithFrozen(call: FrozenCall): Promise<Completion> {
  const startedAt = Date.now();
  const t0 = performance.now();
  let upstream;
  try {
    upstream = await call.model.complete(call.body);
  } catch (err) {
    if (err instanceof FrozenUpstreamError) {
      const status = err.status >= 400 && err.status < 500 ? err.status : 502;
      throw new HttpError(status, err.code, err.message, { cause: err });
    }
    throw err;
  }
  const choice = upstream.choices[0]!;
  const toolCalls = toToolCalls(choice.message.tool_calls);
  const content = choice.message.content ?? null;
  const finish = choice.finish_reason === "tool_calls" || choice.finish_reason === "length" ? choice.finish_reason : "stop";
  if (!call.store.isCurrent(call.episodeId, call.attempt)) throw conflict(`episode '${call.episodeId}' closed during the call`);
  const seq = call.store.tracker.callsOfAgent(call.episodeId, call.agentId).length;
  const callId = randomUUID();
  call.store.tracker.record({
    callId,
    episodeId: call.episodeId,
    agentId: call.agentId,
    policy: call.model.name,
    trainable: false,
    seq,
    messages: call.rawMessages,
    tools: call.rawTools,
    segments: [],
    headerIds: [],
    outputIds: [],
    outputLogprobs: [],
    outputText: canonicalText({
      content: content ?? "",
      toolCalls: toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
    }),
    finishReason: finish,
    version: 0,
    startedAt,
    latencyMs: performance.now() - t0,
  });
  call.store.touch(call.episodeId);
  const prompt = upstream.usage?.prompt_tokens ?? 0;
  const completion = upstream.usage?.completion_tokens ?? 0;
  return {
    id: `chatcmpl-${callId}`,
    created: Math.floor(startedAt / 1000),
    model: call.model.name,
    version: 0,
    content,
    toolCalls,
    finishReason: finish,
    logprobs: null,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}
