import { randomUUID } from "node:crypto";
import type { PolicyRuntime, SamplingDefaults } from "../app/server-context.ts";
import type { SamplingParams } from "../engines/engine.ts";
import type { EpisodeStore } from "../episodes/episode-store.ts";
import { canonicalText } from "../tokenizers/canonical-text.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import type { Completion } from "./completion.ts";
import { cutAtStop } from "./cut-at-stop.ts";
import { conflict } from "./errors.ts";
import type { ChatCompletionRequest, ResponseToolCall, TokenLogprob } from "./schemas.ts";
import { toToolDefinitions, toTurnMessages } from "./to-turn-messages.ts";

export interface PolicyCall {
  store: EpisodeStore;
  policy: PolicyRuntime;
  sampling: SamplingDefaults;
  episodeId: string;
  agentId: string;
  attempt: number;
  request: ChatCompletionRequest;
  /** The request's messages exactly as received, for the record. */
  rawMessages: unknown[];
  rawTools: unknown[] | null;
}

function tokenLogprobs(
  tokenizer: Tokenizer,
  ids: readonly number[],
  logprobs: readonly number[],
  top: ReadonlyArray<ReadonlyArray<{ id: number; logprob: number }>> | undefined,
): TokenLogprob[] {
  const entry = (id: number, logprob: number) => {
    const token = tokenizer.decode([id]);
    return { token, logprob, bytes: [...Buffer.from(token, "utf8")] };
  };
  return ids.map((id, i) => ({
    ...entry(id, logprobs[i] ?? 0),
    top_logprobs: (top?.[i] ?? []).map((t) => entry(t.id, t.logprob)),
  }));
}

/**
 * Serves one chat call of a policy agent: renders and tokenizes once (splicing the agent's earlier
 * generations), generates, records the call, and returns the completion.
 */
export async function completeWithPolicy(call: PolicyCall): Promise<Completion> {
  const { store, policy, request } = call;
  const { tokenizer, engine } = policy;
  const startedAt = Date.now();
  const t0 = performance.now();
  const callId = randomUUID();

  const generated = store.tracker.generationsOf(call.episodeId, call.agentId);
  const tools = toToolDefinitions(request.tools);
  const rendered = tokenizer.renderChat(toTurnMessages(request.messages), { tools, generated });
  const promptIds = rendered.segments.flatMap((s) => s.ids).concat(rendered.headerIds);
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? call.sampling.maxTokens;
  const base = { id: `chatcmpl-${callId}`, created: Math.floor(startedAt / 1000), model: policy.name };

  const record = (r: {
    outputIds: number[];
    logprobs: number[];
    outputText: string;
    finishReason: "stop" | "length" | "tool_calls" | "overflow";
    version: number;
  }): void => {
    // The episode may have ended or been reclaimed while the engine ran: then nothing is recorded.
    if (!store.isCurrent(call.episodeId, call.attempt)) throw conflict(`episode '${call.episodeId}' closed during the call`);
    store.tracker.record({
      callId,
      episodeId: call.episodeId,
      agentId: call.agentId,
      policy: policy.name,
      trainable: true,
      seq: store.tracker.callsOfAgent(call.episodeId, call.agentId).length,
      messages: call.rawMessages,
      tools: call.rawTools,
      segments: rendered.segments,
      headerIds: rendered.headerIds,
      outputIds: r.outputIds,
      outputLogprobs: r.logprobs,
      outputText: r.outputText,
      finishReason: r.finishReason,
      version: r.version,
      startedAt,
      latencyMs: performance.now() - t0,
    });
    store.touch(call.episodeId);
  };

  if (promptIds.length + maxTokens > engine.maxContext) {
    const version = engine.version();
    record({ outputIds: [], logprobs: [], outputText: "", finishReason: "overflow", version });
    return {
      ...base,
      version,
      content: "",
      toolCalls: [],
      finishReason: "length",
      logprobs: request.logprobs ? [] : null,
      usage: { prompt_tokens: promptIds.length, completion_tokens: 0, total_tokens: promptIds.length },
    };
  }

  const params: SamplingParams = {
    maxTokens,
    temperature: request.temperature ?? call.sampling.temperature,
    topP: request.top_p ?? call.sampling.topP,
    stopIds: tokenizer.stopIds,
    topLogprobs: request.logprobs ? (request.top_logprobs ?? 0) : 0,
  };
  if (request.seed !== undefined && request.seed !== null) params.seed = request.seed;
  const result = await engine.generate(promptIds, params);

  let outputIds = result.outputIds;
  let logprobs = result.logprobs;
  let finishReason: "stop" | "length" = result.finishReason;
  const endsWithStopId = outputIds.length > 0 && tokenizer.stopIds.includes(outputIds[outputIds.length - 1]!);
  let textIds = endsWithStopId ? outputIds.slice(0, -1) : outputIds;
  let text = tokenizer.decode(textIds);
  const stops = request.stop === undefined || request.stop === null ? [] : typeof request.stop === "string" ? [request.stop] : request.stop;
  const cut = cutAtStop(textIds, tokenizer.decode, stops);
  if (cut) {
    outputIds = textIds.slice(0, cut.keep);
    logprobs = logprobs.slice(0, cut.keep);
    textIds = outputIds;
    text = cut.text;
    finishReason = "stop";
  }

  const parseTools = tools.length > 0 && request.tool_choice !== "none";
  const parsed = parseTools ? tokenizer.parseAssistant(text) : { content: text, toolCalls: [] };
  const toolCalls: ResponseToolCall[] = parsed.toolCalls.map((c) => ({
    id: `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  const outputText = canonicalText({
    content: parsed.content,
    toolCalls: toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
  });
  const reported = toolCalls.length > 0 ? "tool_calls" : finishReason;
  record({ outputIds, logprobs, outputText, finishReason: reported, version: result.version });

  return {
    ...base,
    version: result.version,
    content: toolCalls.length > 0 && parsed.content.length === 0 ? null : parsed.content,
    toolCalls,
    finishReason: reported,
    logprobs: request.logprobs
      ? tokenLogprobs(tokenizer, textIds, logprobs, params.topLogprobs ? result.topLogprobs : undefined)
      : null,
    usage: { prompt_tokens: promptIds.length, completion_tokens: outputIds.length, total_tokens: promptIds.length + outputIds.length },
  };
}
