import { randomUUID } from "node:crypto";
import type { PolicyRuntime, SamplingDefaults } from "../app/server-context.ts";
import type { GenerateResult, SamplingParams } from "../engines/engine.ts";
import type { EpisodeStore } from "../episodes/episode-store.ts";
import { callSamplingSeed } from "../episodes/sampling-seed.ts";
import { canonicalText } from "../tokenizers/canonical-text.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import type { Completion, CompletionChoice, CompletionSink, FinishReason } from "./completion.ts";
import { constrainDecoding } from "./constrain-decoding.ts";
import { cutAtStop } from "./cut-at-stop.ts";
import { conflict, HttpError } from "./errors.ts";
import type { GenerationRequest } from "./generation-request.ts";
import type { ResponseToolCall, TokenLogprob } from "./schemas.ts";
import { splitThink, visibleText } from "./split-text.ts";

export interface PolicyCall {
  store: EpisodeStore;
  policy: PolicyRuntime;
  sampling: SamplingDefaults;
  episodeId: string;
  agentId: string;
  attempt: number;
  /** The episode's sampling seed (deterministic mode), as the key's authorization read it; null otherwise. */
  samplingSeed: number | null;
  request: GenerationRequest;
  /** The request's messages exactly as received, for the record. */
  rawMessages: unknown[];
  rawTools: unknown[] | null;
  /** Prefix of the completion id (`chatcmpl`, `resp`, `cmpl`). */
  idPrefix?: string;
}

export function tokenLogprobs(
  tokenizer: Tokenizer,
  ids: readonly number[],
  logprobs: readonly number[],
  top: ReadonlyArray<ReadonlyArray<{ id: number; logprob: number }>> | undefined,
): TokenLogprob[] {
  const entry = (id: number, logprob: number) => {
    const token = tokenizer.decode([id]);
    return { token, logprob, bytes: tokenizer.tokenBytes?.(id) ?? [...Buffer.from(token, "utf8")] };
  };
  return ids.map((id, i) => ({
    ...entry(id, logprobs[i] ?? 0),
    top_logprobs: (top?.[i] ?? []).map((t) => entry(t.id, t.logprob)),
  }));
}

/**
 * Decodes a generation token by token (ids that end inside a UTF-8 character wait for the rest), notices
 * stop strings as soon as they appear, and streams what can be shown.
 */
class TextFollower {
  text = "";
  private pending: number[] = [];
  private shown = { reasoning: "", content: "" };
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly opts: { stops: readonly string[]; toolSyntax: boolean },
    private readonly index: number,
    private readonly sink: CompletionSink | undefined,
  ) {}

  /** Takes one token; true when a stop string has appeared (generation may end). */
  push(id: number): boolean {
    if (this.tokenizer.stopIds.includes(id)) return false;
    this.pending.push(id);
    const piece = this.tokenizer.decode(this.pending);
    if (piece.endsWith("\uFFFD") && this.pending.length < 4) return false;
    const before = this.text.length;
    this.text += piece;
    this.pending = [];
    if (this.sink) this.show(visibleText(this.text, this.opts));
    const longest = this.opts.stops.reduce((m, s) => Math.max(m, s.length), 0);
    const from = Math.max(0, before - longest);
    return this.opts.stops.some((s) => s.length > 0 && this.text.indexOf(s, from) !== -1);
  }

  /** Sends what the final choice adds to what was shown. */
  finish(choice: { content: string | null; reasoning: string | null }): void {
    if (!this.sink) return;
    this.show({ reasoning: choice.reasoning ?? "", content: choice.content ?? "" });
  }

  private show(v: { reasoning: string; content: string }): void {
    if (v.reasoning.length > this.shown.reasoning.length && v.reasoning.startsWith(this.shown.reasoning)) {
      this.sink!.reasoning(this.index, v.reasoning.slice(this.shown.reasoning.length));
      this.shown.reasoning = v.reasoning;
    }
    if (v.content.length > this.shown.content.length && v.content.startsWith(this.shown.content)) {
      this.sink!.content(this.index, v.content.slice(this.shown.content.length), null);
      this.shown.content = v.content;
    }
  }
}

interface ChoiceOutput {
  choice: CompletionChoice;
  outputIds: number[];
  logprobs: number[];
  outputText: string;
  finishReason: FinishReason;
  version: number;
}

/**
 * Serves one call of a policy agent: renders and tokenizes once (splicing the agent's earlier
 * generations), generates `n` choices, records each as a call on the same prompt, and returns the
 * completion. With a sink, text is streamed as the engine makes it.
 */
export async function completeWithPolicy(call: PolicyCall, sink?: CompletionSink): Promise<Completion> {
  const { store, policy, request } = call;
  const { tokenizer, engine } = policy;
  const startedAt = Date.now();
  const t0 = performance.now();
  const callId = randomUUID();

  const generated = store.tracker.generationsOf(call.episodeId, call.agentId);
  const rendered =
    request.prompt !== undefined
      ? { segments: [{ role: "user" as const, text: request.prompt, ids: tokenizer.encodeAsync ? await tokenizer.encodeAsync(request.prompt) : tokenizer.encode(request.prompt) }], headerIds: [] }
      : tokenizer.renderChatAsync
        ? await tokenizer.renderChatAsync(request.messages, { tools: request.tools, generated, templateKwargs: request.templateKwargs })
        : tokenizer.renderChat(request.messages, { tools: request.tools, generated, templateKwargs: request.templateKwargs });
  // concat copies packed arrays whole (flatMap goes element by element: seconds for a 4 MB message)
  const promptIds = ([] as number[]).concat(...rendered.segments.map((s) => s.ids), rendered.headerIds);
  const room = engine.maxContext - promptIds.length;
  const head = { id: `${call.idPrefix ?? "chatcmpl"}-${callId}`, created: Math.floor(startedAt / 1000), model: policy.name };

  const record = (r: { outputIds: number[]; logprobs: number[]; outputText: string; finishReason: FinishReason | "overflow"; version: number }, id: string): void => {
    // The episode may have ended or been reclaimed while the engine ran: then nothing is recorded.
    if (!store.isCurrent(call.episodeId, call.attempt)) throw conflict(`episode '${call.episodeId}' closed during the call`);
    store.tracker.record({
      callId: id,
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

  const constraint = constrainDecoding(request, policy);
  // A context with no room for the shortest answer the constraint allows overflows like a full one.
  if (room < Math.max(1, constraint?.minTokens ?? 1)) {
    if (call.sampling.overflow === "error") {
      throw new HttpError(
        400,
        "context_length_exceeded",
        `This model's maximum context length is ${engine.maxContext} tokens. However, your messages resulted in ${promptIds.length} tokens.`,
        { param: "messages" },
      );
    }
    const version = engine.version();
    record({ outputIds: [], logprobs: [], outputText: "", finishReason: "overflow", version }, callId);
    sink?.start({ ...head, version });
    const choices = Array.from({ length: request.n }, (_, index): CompletionChoice => ({
      index,
      content: "",
      reasoning: null,
      toolCalls: [],
      finishReason: "length",
      logprobs: request.logprobs ? [] : null,
    }));
    return { ...head, version, choices, usage: { prompt_tokens: promptIds.length, completion_tokens: 0, total_tokens: promptIds.length } };
  }

  // The run's default max_tokens gives way to a constrained answer's shortest length (the mask then
  // always closes in time); a request's own max_tokens does not.
  const maxTokens = Math.min(request.maxTokens ?? Math.max(call.sampling.maxTokens, constraint?.minTokens ?? 0), room);
  const toolSyntax = request.tools.length > 0 && request.toolChoice !== "none";
  const base: SamplingParams = {
    maxTokens,
    temperature: request.temperature ?? call.sampling.temperature,
    topP: request.topP ?? call.sampling.topP,
    stopIds: tokenizer.stopIds,
    topLogprobs: request.logprobs ? request.topLogprobs : 0,
  };
  if (constraint && maxTokens < constraint.minTokens) {
    throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `max_tokens: ${maxTokens} tokens cannot hold the shortest answer the constraint allows (${constraint.minTokens})`, { param: "max_tokens" });
  }
  if (constraint?.guided) base.guided = constraint.guided;
  sink?.start({ ...head, version: engine.version() });
  // Deterministic mode: a call that brings no seed samples with one from (episode, agent, call index).
  const episodeSeed = request.seed === undefined ? call.samplingSeed : null;
  const callIndex = store.tracker.callsOfAgent(call.episodeId, call.agentId).length;

  const generateChoice = async (index: number): Promise<ChoiceOutput> => {
    const follower = new TextFollower(tokenizer, { stops: request.stop, toolSyntax }, index, sink);
    const params: SamplingParams = { ...base };
    if (request.seed !== undefined) params.seed = request.seed + index;
    else if (episodeSeed !== null) params.seed = callSamplingSeed(episodeSeed, call.agentId, callIndex, index);
    const mask = constraint?.mask?.();
    if (mask) params.mask = mask;
    if (sink || request.stop.length > 0) params.onToken = (id) => follower.push(id);
    const result = await engine.generate(promptIds, params);
    const out = finishChoice(tokenizer, request, result, index, toolSyntax);
    follower.finish(out.choice);
    return out;
  };
  const outputs = await Promise.all(Array.from({ length: request.n }, (_, i) => generateChoice(i)));
  outputs.forEach((o, i) => record(o, i === 0 ? callId : randomUUID()));
  const completionTokens = outputs.reduce((n, o) => n + o.outputIds.length, 0);
  return {
    ...head,
    version: outputs[0]!.version,
    choices: outputs.map((o) => o.choice),
    usage: { prompt_tokens: promptIds.length, completion_tokens: completionTokens, total_tokens: promptIds.length + completionTokens },
  };
}

/** Cuts a generation at its stop string, splits off `<think>`, parses tool calls. */
function finishChoice(tokenizer: Tokenizer, request: GenerationRequest, result: GenerateResult, index: number, toolSyntax: boolean): ChoiceOutput {
  let outputIds = result.outputIds;
  let logprobs = result.logprobs;
  let finishReason: FinishReason = result.finishReason;
  const endsWithStopId = outputIds.length > 0 && tokenizer.stopIds.includes(outputIds[outputIds.length - 1]!);
  let textIds = endsWithStopId ? outputIds.slice(0, -1) : outputIds;
  let text = tokenizer.decode(textIds);
  const cut = cutAtStop(textIds, tokenizer.decode, request.stop);
  if (cut) {
    outputIds = textIds.slice(0, cut.keep);
    logprobs = logprobs.slice(0, cut.keep);
    textIds = outputIds;
    text = cut.text;
    finishReason = "stop";
  }
  const { reasoning, rest } = splitThink(text);
  const parsed = toolSyntax ? tokenizer.parseAssistant(rest) : { content: rest, toolCalls: [] };
  const calls = request.parallelToolCalls ? parsed.toolCalls : parsed.toolCalls.slice(0, 1);
  const toolCalls: ResponseToolCall[] = calls.map((c) => ({
    id: `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  const content = toolSyntax ? parsed.content.trim() : parsed.content;
  const outputText = canonicalText({
    content,
    toolCalls: toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
  });
  const reported: FinishReason = toolCalls.length > 0 ? "tool_calls" : finishReason;
  const topLogprobs = request.logprobs && request.topLogprobs > 0 ? result.topLogprobs : undefined;
  return {
    outputIds,
    logprobs,
    outputText,
    finishReason: reported,
    version: result.version,
    choice: {
      index,
      content: toolCalls.length > 0 && content.length === 0 ? null : content,
      reasoning,
      toolCalls,
      finishReason: reported,
      logprobs: request.logprobs ? tokenLogprobs(tokenizer, textIds, logprobs, topLogprobs) : null,
    },
  };
}
