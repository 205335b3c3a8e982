import type { PolicyRuntime, SamplingDefaults } from "../app/server-context.ts";
import type { SamplingParams } from "../engines/engine.ts";
import type { EpisodeStore } from "../episodes/episode-store.ts";
import { callSamplingSeed } from "../episodes/sampling-seed.ts";
import { promptIds, promptLength } from "../tokenizers/prompt-ids.ts";
import type { PromptSegment, RenderedPrompt, Tokenizer } from "../tokenizers/tokenizer.ts";
import { newCallId } from "./call-id.ts";
import type { Completion, CompletionChoice, CompletionMeta, CompletionSink, FinishReason } from "./completion.ts";
import { constrainDecoding, type DecodingConstraint } from "./constrain-decoding.ts";
import { conflict, HttpError } from "./errors.ts";
import { refuseSamplingReshapes } from "./sampling-reshapes.ts";
import { type ChoiceOutput, finishChoice } from "./finish-choice.ts";
import type { GenerationRequest } from "./generation-request.ts";
import { TextFollower } from "./text-follower.ts";

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

/**
 * A call's prompt: message by message (as recorded) and its length in ids. The ids the engine reads are
 * joined only once the prompt is known to fit (`promptIds`): one that overflows never is.
 */
interface Prompt {
  segments: PromptSegment[];
  headerIds: number[];
  length: number;
}

/** When the call began: wall clock for the record, monotonic for its latency. */
interface CallClock {
  startedAt: number;
  t0: number;
}

type Head = Pick<Completion, "id" | "created" | "model">;

/**
 * Serves one call of a policy agent: renders and tokenizes once (splicing the agent's earlier
 * generations), generates `n` choices, records each as a call on the same prompt, and returns the
 * completion. With a sink, text is streamed as the engine makes it.
 */
export async function completeWithPolicy(call: PolicyCall, sink?: CompletionSink): Promise<Completion> {
  const { policy, request } = call;
  refuseSamplingReshapes(request);
  const clock: CallClock = { startedAt: Date.now(), t0: performance.now() };
  const callId = newCallId(clock.startedAt);
  const prompt = toPrompt(await renderPrompt(call));
  const head: Head = { id: `${call.idPrefix ?? "chatcmpl"}-${callId}`, created: Math.floor(clock.startedAt / 1000), model: policy.name };
  const room = policy.engine.maxContext - prompt.length;
  const constraint = constrainDecoding(request, policy);
  // A context with no room for the shortest answer the constraint allows overflows like a full one.
  if (room < Math.max(1, constraint?.minTokens ?? 1)) return overflowed(call, prompt, head, callId, clock, sink);

  const base = samplingParams(call, room, constraint);
  const ids = prompt.length <= JOIN_SLICE ? promptIds(prompt) : await joinIdsSliced(prompt);
  sink?.start(metaOf(head, policy.engine.version()));
  if (request.n === 1) {
    const out = await generateChoice(call, ids, base, constraint, 0, sink);
    recordCall(call, prompt, out, callId, clock);
    return toCompletion(head, out.version, [out.choice], out.outputIds.length, prompt);
  }
  // No closure is named here: under tsx (keepNames) naming one costs an Object.defineProperty per call.
  const outputs = await Promise.all(Array.from({ length: request.n }, (_, i) => generateChoice(call, ids, base, constraint, i, sink)));
  outputs.forEach((o, i) => recordCall(call, prompt, o, i === 0 ? callId : newCallId(clock.startedAt), clock));
  const completionTokens = outputs.reduce((n, o) => n + o.outputIds.length, 0);
  return toCompletion(head, outputs[0]!.version, outputs.map((o) => o.choice), completionTokens, prompt);
}

/** The head with the version that made the completion, as one literal (a spread of `head` would take V8's slow path on every call). */
function metaOf(head: Head, version: number): CompletionMeta {
  return { id: head.id, created: head.created, model: head.model, version };
}

/** The completion as one literal (a spread of `head` would take V8's slow path on every call). */
function toCompletion(head: Head, version: number, choices: CompletionChoice[], completionTokens: number, prompt: Prompt): Completion {
  const usage = { prompt_tokens: prompt.length, completion_tokens: completionTokens, total_tokens: prompt.length + completionTokens };
  return { id: head.id, created: head.created, model: head.model, version, choices, usage };
}

/**
 * Renders and tokenizes the prompt (a legacy prompt as it stands), splicing the agent's earlier
 * generations: the tokenizer's own promise (or value), not wrapped in another.
 */
function renderPrompt(call: PolicyCall): RenderedPrompt | Promise<RenderedPrompt> {
  const { tokenizer } = call.policy;
  const { request } = call;
  if (request.prompt !== undefined) return renderLegacyPrompt(tokenizer, request.prompt);
  const generated = call.store.tracker.generationsOf(call.episodeId, call.agentId);
  const options = { tools: request.tools, generated, templateKwargs: request.templateKwargs };
  return tokenizer.renderChatAsync ? tokenizer.renderChatAsync(request.messages, options) : tokenizer.renderChat(request.messages, options);
}

/** A legacy prompt: its text tokenized as it stands, one user segment, no header. */
async function renderLegacyPrompt(tokenizer: Tokenizer, prompt: string): Promise<RenderedPrompt> {
  const ids = tokenizer.encodeAsync ? await tokenizer.encodeAsync(prompt) : tokenizer.encode(prompt);
  return { segments: [{ role: "user", text: prompt, ids }], headerIds: [] };
}

function toPrompt(rendered: RenderedPrompt): Prompt {
  return { segments: rendered.segments, headerIds: rendered.headerIds, length: promptLength(rendered) };
}

/** Prompts up to this many ids are joined in one go; a longer one is copied a slice at a time. */
const JOIN_SLICE = 1 << 16;

/**
 * `promptIds` of a longer prompt (hundreds of thousands of ids: a copy that would hold the event loop
 * for milliseconds), copied a slice at a time into an array of its length, the event loop let in between.
 */
async function joinIdsSliced(prompt: Prompt): Promise<number[]> {
  const out = new Array<number>(prompt.length);
  let at = 0;
  for (const part of [...prompt.segments.map((s) => s.ids), prompt.headerIds]) {
    for (let start = 0; start < part.length; start += COPY_SLICE) {
      const end = Math.min(start + COPY_SLICE, part.length);
      copyInto(out, at, part, start, end);
      at += end - start;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return out;
}

/** Ids copied per turn of `joinIdsSliced`. */
const COPY_SLICE = 1 << 14;

/** `out[at..) = ids[from..to)`: a small function of its own, compiled early (an async loop may run long before it is). */
function copyInto(out: number[], at: number, ids: ArrayLike<number>, from: number, to: number): void {
  for (let i = from; i < to; i++) out[at + i - from] = ids[i]!;
}

/** A prompt that leaves no room: OpenAI's 400 `context_length_exceeded`, or (by default) empty choices that finish for `length`, recorded as an overflow. */
function overflowed(call: PolicyCall, prompt: Prompt, head: Head, callId: string, clock: CallClock, sink: CompletionSink | undefined): Completion {
  const { engine } = call.policy;
  if (call.sampling.overflow === "error") {
    throw new HttpError(
      400,
      "context_length_exceeded",
      `This model's maximum context length is ${engine.maxContext} tokens. However, your messages resulted in ${prompt.length} tokens.`,
      { param: "messages" },
    );
  }
  const version = engine.version();
  recordCall(call, prompt, { outputIds: [], logprobs: [], outputText: "", finishReason: "overflow", version }, callId, clock);
  sink?.start(metaOf(head, version));
  const choices = Array.from({ length: call.request.n }, (_, index): CompletionChoice => ({
    index,
    content: "",
    reasoning: null,
    toolCalls: [],
    finishReason: "length",
    logprobs: call.request.logprobs ? [] : null,
  }));
  return toCompletion(head, version, choices, 0, prompt);
}

/** The sampling parameters every choice shares; `room`: the context left after the prompt. */
function samplingParams(call: PolicyCall, room: number, constraint: DecodingConstraint | null): SamplingParams {
  const { request, sampling } = call;
  // The run's default max_tokens gives way to a constrained answer's shortest length (the mask then
  // always closes in time); a request's own max_tokens does not.
  const maxTokens = Math.min(request.maxTokens ?? Math.max(sampling.maxTokens, constraint?.minTokens ?? 0), room);
  if (constraint && maxTokens < constraint.minTokens) {
    throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `max_tokens: ${maxTokens} tokens cannot hold the shortest answer the constraint allows (${constraint.minTokens})`, {
      param: "max_tokens",
    });
  }
  const base: SamplingParams = {
    maxTokens,
    temperature: request.temperature ?? sampling.temperature,
    topP: request.topP ?? sampling.topP,
    stopIds: call.policy.tokenizer.stopIds,
    topLogprobs: request.logprobs ? request.topLogprobs : 0,
  };
  if (constraint?.guided) base.guided = constraint.guided;
  return base;
}

/** A choice's own copy of the parameters every choice shares (`samplingParams`' fields), as one literal: `{ ...base }` took V8's slow path. */
function choiceParams(base: SamplingParams): SamplingParams {
  const params: SamplingParams = { maxTokens: base.maxTokens, temperature: base.temperature, topP: base.topP, stopIds: base.stopIds };
  if (base.topLogprobs !== undefined) params.topLogprobs = base.topLogprobs;
  if (base.guided) params.guided = base.guided;
  return params;
}

/** Generates choice `index` of the prompt (its ids): its seed and mask, stop strings and streaming as tokens come, then the finished choice. */
async function generateChoice(
  call: PolicyCall,
  promptIds: readonly number[],
  base: SamplingParams,
  constraint: DecodingConstraint | null,
  index: number,
  sink: CompletionSink | undefined,
): Promise<ChoiceOutput> {
  const { request } = call;
  const { tokenizer, engine } = call.policy;
  const toolSyntax = request.tools.length > 0 && request.toolChoice !== "none";
  const params = choiceParams(base);
  if (request.seed !== undefined) params.seed = request.seed + index;
  else if (call.samplingSeed !== null) {
    // Deterministic mode: a call that brings no seed samples with one from (episode, agent, call index).
    const callIndex = call.store.tracker.callsOfAgent(call.episodeId, call.agentId).length;
    params.seed = callSamplingSeed(call.samplingSeed, call.agentId, callIndex, index);
  }
  const mask = constraint?.mask?.();
  if (mask) params.mask = mask;
  // Only a stream or stop strings need the text while it is made.
  const follower =
    sink || request.stop.length > 0 ? new TextFollower(tokenizer, { stops: request.stop, toolSyntax, parallelToolCalls: request.parallelToolCalls }, index, sink) : null;
  if (follower) params.onToken = (id) => follower.push(id);
  const result = await engine.generate(promptIds, params);
  const out = finishChoice(tokenizer, request, result, index, toolSyntax, follower?.streamedCalls);
  follower?.finish(out.choice);
  return out;
}

/** Records one choice as a call of the agent; an episode that ended or was reclaimed while the engine ran records nothing (409). */
function recordCall(
  call: PolicyCall,
  prompt: Prompt,
  out: Pick<ChoiceOutput, "outputIds" | "logprobs" | "outputText" | "version"> & { finishReason: FinishReason | "overflow" },
  callId: string,
  clock: CallClock,
): void {
  const { store } = call;
  if (!store.isCurrent(call.episodeId, call.attempt)) throw conflict(`episode '${call.episodeId}' closed during the call`);
  store.tracker.record({
    callId,
    episodeId: call.episodeId,
    agentId: call.agentId,
    policy: call.policy.name,
    trainable: true,
    seq: store.tracker.callsOfAgent(call.episodeId, call.agentId).length,
    messages: call.rawMessages,
    tools: call.rawTools,
    segments: prompt.segments,
    headerIds: prompt.headerIds,
    outputIds: out.outputIds,
    outputLogprobs: out.logprobs,
    outputText: out.outputText,
    finishReason: out.finishReason,
    version: out.version,
    startedAt: clock.startedAt,
    latencyMs: performance.now() - clock.t0,
  });
  store.touch(call.episodeId);
}
