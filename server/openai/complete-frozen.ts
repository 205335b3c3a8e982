import { randomUUID } from "node:crypto";
import { FrozenUpstreamError, type FrozenModel } from "../engines/frozen.ts";
import type { EpisodeStore } from "../episodes/episode-store.ts";
import { canonicalText } from "../tokenizers/canonical-text.ts";
import { newCallId } from "./call-id.ts";
import type { Completion, CompletionChoice, CompletionSink, FinishReason } from "./completion.ts";
import { conflict, HttpError } from "./errors.ts";
import type { GenerationRequest } from "./generation-request.ts";
import type { ResponseToolCall, TokenLogprob } from "./schemas.ts";
import { splitThink } from "./split-text.ts";

export interface FrozenCall {
  store: EpisodeStore;
  model: FrozenModel;
  episodeId: string;
  agentId: string;
  attempt: number;
  request: GenerationRequest;
  rawMessages: unknown[];
  rawTools: unknown[] | null;
  idPrefix?: string;
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

/**
 * The chat body a frozen model's endpoint gets: only the fields a frozen opponent needs, built from the
 * request as the server understood it (never `store`, `metadata`, `logit_bias`, `user` or unknown fields,
 * which would reach the operator's upstream account).
 */
export function toUpstreamBody(req: GenerationRequest): Record<string, unknown> {
  const messages = req.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.toolCalls && m.toolCalls.length > 0) {
      out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
      if (m.content.length === 0) out.content = null;
    }
    if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
    if (m.name !== undefined) out.name = m.name;
    return out;
  });
  const body: Record<string, unknown> = { messages };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({ type: "function", function: t }));
    body.tool_choice = typeof req.toolChoice === "object" ? { type: "function", function: { name: req.toolChoice.name } } : req.toolChoice;
    if (!req.parallelToolCalls) body.parallel_tool_calls = false;
  }
  if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop.length > 0) body.stop = req.stop;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.penalties !== undefined && req.penalties.frequency !== 0) body.frequency_penalty = req.penalties.frequency;
  if (req.penalties !== undefined && req.penalties.presence !== 0) body.presence_penalty = req.penalties.presence;
  if (req.logprobs) {
    body.logprobs = true;
    if (req.topLogprobs > 0) body.top_logprobs = req.topLogprobs;
  }
  if (req.n > 1) body.n = req.n;
  const f = req.responseFormat;
  if (f.type === "json_object") body.response_format = { type: "json_object" };
  if (f.type === "json_schema") {
    const schema: Record<string, unknown> = { name: f.name, schema: f.schema };
    if (f.description !== undefined) schema.description = f.description;
    if (f.strict !== undefined) schema.strict = f.strict;
    body.response_format = { type: "json_schema", json_schema: schema };
  }
  return body;
}

/**
 * Upstream failures answer with our own message: 503 when the endpoint is busy or silent past its
 * timeout (retry later), else 502 (a gateway's answer for an upstream it cannot reach, too). Never the
 * upstream's body or address.
 */
function upstreamError(model: string, err: FrozenUpstreamError): HttpError {
  const [status, what, retry] = upstreamAnswer(err);
  const next = retry ? "retry later" : "this is not a problem with your key or request";
  return new HttpError(status, err.code, `frozen model '${model}' ${what}; ${next}`, { cause: err });
}

/** Our status, our words for how the upstream call failed, and whether a retry may succeed. */
function upstreamAnswer(err: FrozenUpstreamError): [503 | 502, string, boolean] {
  switch (err.failure) {
    case "unreachable":
      return [502, `is unreachable (${err.detail})`, true];
    case "timeout":
      return [503, `did not answer in time (${err.detail})`, true];
    case "malformed":
      return [502, "failed (its endpoint answered with no usable completion)", false];
    case "status":
      return err.status === 429 || err.status === 503 || err.status === 504
        ? [503, `is unavailable (its endpoint answered ${err.status})`, true]
        : [502, `failed (its endpoint answered ${err.status})`, false];
  }
}

function readLogprobs(raw: unknown): TokenLogprob[] | null {
  const content = (raw as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content)) return null;
  return content.map((t) => {
    const e = t as { token?: unknown; logprob?: unknown; bytes?: unknown; top_logprobs?: unknown };
    const token = typeof e.token === "string" ? e.token : "";
    return {
      token,
      logprob: typeof e.logprob === "number" ? e.logprob : 0,
      bytes: Array.isArray(e.bytes) ? (e.bytes as number[]) : [...Buffer.from(token, "utf8")],
      top_logprobs: Array.isArray(e.top_logprobs)
        ? (e.top_logprobs as Array<{ token: string; logprob: number; bytes?: number[] }>).map((x) => ({
            token: String(x.token),
            logprob: Number(x.logprob),
            bytes: Array.isArray(x.bytes) ? x.bytes : [...Buffer.from(String(x.token), "utf8")],
          }))
        : [],
    };
  });
}

/** Forwards a frozen agent's call to its endpoint and records it for logs only (never trained). */
export async function completeWithFrozen(call: FrozenCall, sink?: CompletionSink): Promise<Completion> {
  const startedAt = Date.now();
  const t0 = performance.now();
  let upstream;
  try {
    upstream = await call.model.complete(toUpstreamBody(call.request));
  } catch (err) {
    if (err instanceof FrozenUpstreamError) throw upstreamError(call.model.name, err);
    throw err;
  }
  if (!call.store.isCurrent(call.episodeId, call.attempt)) throw conflict(`episode '${call.episodeId}' closed during the call`);
  const callId = newCallId(startedAt);
  const choices = upstream.choices.slice(0, call.request.n).map((raw, index): CompletionChoice => {
    const toolCalls = toToolCalls(raw.message.tool_calls);
    const split = splitThink(raw.message.content ?? "");
    const reasoning = (raw.message as { reasoning_content?: unknown }).reasoning_content;
    const finish: FinishReason = raw.finish_reason === "tool_calls" || raw.finish_reason === "length" ? raw.finish_reason : "stop";
    let logprobs: TokenLogprob[] | null = null;
    if (call.request.logprobs) logprobs = readLogprobs((raw as { logprobs?: unknown }).logprobs) ?? [];
    return {
      index,
      content: raw.message.content === null || raw.message.content === undefined ? null : split.rest,
      reasoning: typeof reasoning === "string" ? reasoning : split.reasoning,
      toolCalls,
      finishReason: toolCalls.length > 0 ? "tool_calls" : finish,
      logprobs,
    };
  });
  for (const ch of choices) {
    call.store.tracker.record({
      callId: ch.index === 0 ? callId : newCallId(startedAt),
      episodeId: call.episodeId,
      agentId: call.agentId,
      policy: call.model.name,
      trainable: false,
      seq: call.store.tracker.callsOfAgent(call.episodeId, call.agentId).length,
      messages: call.rawMessages,
      tools: call.rawTools,
      segments: [],
      headerIds: [],
      outputIds: [],
      outputLogprobs: [],
      outputText: canonicalText({
        content: ch.content ?? "",
        toolCalls: ch.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      }),
      finishReason: ch.finishReason,
      version: 0,
      startedAt,
      latencyMs: performance.now() - t0,
    });
  }
  call.store.touch(call.episodeId);
  const head = { id: `${call.idPrefix ?? "chatcmpl"}-${callId}`, created: Math.floor(startedAt / 1000), model: call.model.name, version: 0 };
  if (sink) {
    sink.start(head);
    for (const ch of choices) {
      if (ch.reasoning) sink.reasoning(ch.index, ch.reasoning);
      if (ch.content) sink.content(ch.index, ch.content, null);
    }
  }
  const prompt = upstream.usage?.prompt_tokens ?? 0;
  const completion = upstream.usage?.completion_tokens ?? 0;
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  return { id: head.id, created: head.created, model: head.model, version: head.version, choices, usage };
}
