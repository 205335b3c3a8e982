import { z } from "zod";
import type { SamplingParams } from "../engine.ts";
import { ReplicaProtocolError, ReplicaRequestError, ReplicaUnavailableError } from "./errors.ts";
import type { InferenceApi, ServedGeneration } from "./inference-api.ts";
import { loraAdapterCalls } from "./lora-adapters.ts";
import { postForJson, type ReplicaHttp } from "./replica-http.ts";

/** vLLM `/v1/completions` request fields this engine sends (token-id prompt). The one home of them. */
export const VllmCompletionRequestSchema = z.object({
  model: z.string(),
  prompt: z.array(z.number().int().min(0)),
  max_tokens: z.number().int().positive(),
  temperature: z.number().min(0),
  top_p: z.number().gt(0).max(1),
  seed: z.number().int().optional(),
  stop_token_ids: z.array(z.number().int().min(0)),
  logprobs: z.number().int().min(0),
  return_tokens_as_token_ids: z.literal(true),
  skip_special_tokens: z.literal(false),
  stream: z.boolean(),
  n: z.literal(1),
  /** vLLM >= 0.10's guided decoding (`guided_json` before it, removed in 0.12). */
  structured_outputs: z.union([z.object({ json: z.unknown() }), z.object({ json_object: z.literal(true) })]).optional(),
});
export type VllmCompletionRequest = z.infer<typeof VllmCompletionRequestSchema>;

/** `prompt_logprobs`: per prompt position (null at 0), token id (as a decimal string) -> its log-prob. */
const PromptLogprobsSchema = z.array(z.record(z.string(), z.object({ logprob: z.number() }).passthrough()).nullable());

export const VllmCompletionResponseSchema = z.object({
  id: z.string(),
  object: z.literal("text_completion"),
  created: z.number(),
  model: z.string(),
  choices: z
    .array(
      z.object({
        index: z.number(),
        text: z.string(),
        logprobs: z
          .object({
            text_offset: z.array(z.number()),
            token_logprobs: z.array(z.number().nullable()),
            tokens: z.array(z.string()),
            top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullable(),
          })
          .nullable(),
        finish_reason: z.string().nullable(),
        stop_reason: z.union([z.number(), z.string()]).nullable().optional(),
        prompt_logprobs: PromptLogprobsSchema.nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() }),
});
export type VllmCompletionResponse = z.infer<typeof VllmCompletionResponseSchema>;

const TOKEN_ID = /^token_id:(\d+)$/;

/** "token_id:123" -> 123; anything else means the server was not asked for, or ignored, token ids. */
export function parseTokenId(token: string): number | undefined {
  const m = TOKEN_ID.exec(token);
  return m ? Number(m[1]) : undefined;
}

export function buildVllmRequest(model: string, promptIds: readonly number[], params: SamplingParams): VllmCompletionRequest {
  return {
    model,
    prompt: [...promptIds],
    max_tokens: params.maxTokens,
    temperature: params.temperature,
    top_p: params.topP,
    ...(params.seed === undefined ? {} : { seed: params.seed }),
    stop_token_ids: [...params.stopIds],
    logprobs: params.topLogprobs ?? 0,
    return_tokens_as_token_ids: true,
    skip_special_tokens: false,
    stream: params.onToken !== undefined,
    n: 1,
    ...(params.guided === undefined
      ? {}
      : { structured_outputs: params.guided.kind === "json_schema" ? { json: params.guided.schema } : { json_object: true as const } }),
  };
}

/** One `stream: true` chunk: the tokens it adds (as "token_id:N"), and the finish reason on the last. */
const VllmStreamChunkSchema = z.object({
  model: z.string().optional(),
  choices: z.array(
    z.object({
      logprobs: z
        .object({
          tokens: z.array(z.string()),
          token_logprobs: z.array(z.number().nullable()),
          top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullable().optional(),
        })
        .nullable()
        .optional(),
      finish_reason: z.string().nullable().optional(),
    }),
  ),
});

/** Generation with `stream: true`: each token goes to `onToken` as the replica sends it. */
async function generateStreaming(http: ReplicaHttp, url: string, request: VllmCompletionRequest, params: SamplingParams): Promise<ServedGeneration> {
  const out: ServedGeneration = { outputIds: [], logprobs: [], finishReason: "length" };
  const tops: Array<Array<{ id: number; logprob: number }>> = [];
  const k = params.topLogprobs ?? 0;
  let finish: string | null = null;
  const onData = (data: string): boolean => {
    if (data === "[DONE]") return true;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch (cause) {
      throw new ReplicaProtocolError(url, "a stream chunk is not JSON", { cause });
    }
    const chunk = VllmStreamChunkSchema.safeParse(json);
    if (!chunk.success) throw new ReplicaProtocolError(url, "not a vLLM completion chunk", { cause: chunk.error });
    if (chunk.data.model !== undefined) out.servedModel = chunk.data.model;
    const choice = chunk.data.choices[0];
    if (!choice) return false;
    const lp = choice.logprobs;
    for (let i = 0; i < (lp?.tokens.length ?? 0); i++) {
      const id = parseTokenId(lp!.tokens[i]!);
      const l = lp!.token_logprobs[i];
      if (id === undefined) throw new ReplicaProtocolError(url, `token ${JSON.stringify(lp!.tokens[i])} is not "token_id:N"`);
      if (l === null || l === undefined) throw new ReplicaProtocolError(url, `no log-prob for output token ${out.outputIds.length}`);
      out.outputIds.push(id);
      out.logprobs.push(l);
      if (k > 0) {
        const step = lp!.top_logprobs?.[i] ?? {};
        tops.push(
          Object.entries(step)
            .flatMap(([tok, logprob]) => {
              const t = parseTokenId(tok);
              return t === undefined ? [] : [{ id: t, logprob }];
            })
            .sort((a, b) => b.logprob - a.logprob)
            .slice(0, k),
        );
      }
      if (params.onToken?.(id, l) === true) {
        finish = "stop";
        return true;
      }
    }
    if (choice.finish_reason) finish = choice.finish_reason;
    return false;
  };
  try {
    await http.postStream(url, "/v1/completions", request, onData);
  } catch (e) {
    // Tokens already streamed cannot be taken back: no retry on another replica.
    if (e instanceof ReplicaUnavailableError && out.outputIds.length > 0) {
      throw new ReplicaProtocolError(url, `the stream broke after ${out.outputIds.length} tokens`, { cause: e });
    }
    throw e;
  }
  if (finish !== "stop" && finish !== "length") throw new ReplicaProtocolError(url, `finish_reason ${String(finish)}`);
  out.finishReason = finish;
  if (k > 0) out.topLogprobs = tops;
  return out;
}

export function parseVllmResponse(url: string, json: unknown, topLogprobs: number): ServedGeneration {
  const parsed = VllmCompletionResponseSchema.safeParse(json);
  if (!parsed.success) throw new ReplicaProtocolError(url, "not a vLLM completion response", { cause: parsed.error });
  const choice = parsed.data.choices[0]!;
  const lp = choice.logprobs;
  if (!lp) throw new ReplicaProtocolError(url, "no logprobs in the answer");
  if (lp.tokens.length !== lp.token_logprobs.length) throw new ReplicaProtocolError(url, "tokens and token_logprobs differ in length");
  const outputIds: number[] = [];
  const logprobs: number[] = [];
  for (let i = 0; i < lp.tokens.length; i++) {
    const id = parseTokenId(lp.tokens[i]!);
    const l = lp.token_logprobs[i];
    if (id === undefined) throw new ReplicaProtocolError(url, `token ${JSON.stringify(lp.tokens[i])} is not "token_id:N" (return_tokens_as_token_ids unsupported?)`);
    if (l === null || l === undefined) throw new ReplicaProtocolError(url, `no log-prob for output token ${i}`);
    outputIds.push(id);
    logprobs.push(l);
  }
  if (choice.finish_reason !== "stop" && choice.finish_reason !== "length") {
    throw new ReplicaProtocolError(url, `finish_reason ${String(choice.finish_reason)}`);
  }
  const out: ServedGeneration = { outputIds, logprobs, finishReason: choice.finish_reason, servedModel: parsed.data.model };
  if (topLogprobs > 0) {
    out.topLogprobs = (lp.top_logprobs ?? []).map((step) =>
      Object.entries(step ?? {})
        .flatMap(([tok, logprob]) => {
          const id = parseTokenId(tok);
          return id === undefined ? [] : [{ id, logprob }];
        })
        .sort((a, b) => b.logprob - a.logprob)
        .slice(0, topLogprobs),
    );
  }
  return out;
}

export function parseVllmPromptLogprobs(url: string, json: unknown, ids: readonly number[]): number[] {
  const parsed = VllmCompletionResponseSchema.safeParse(json);
  if (!parsed.success) throw new ReplicaProtocolError(url, "not a vLLM completion response", { cause: parsed.error });
  const rows = parsed.data.choices[0]!.prompt_logprobs;
  if (!rows || rows.length !== ids.length) throw new ReplicaProtocolError(url, "prompt_logprobs missing or of the wrong length");
  return ids.map((id, i) => {
    if (i === 0) return 0;
    const entry = rows[i]?.[String(id)] ?? rows[i]?.[`token_id:${id}`];
    if (!entry) throw new ReplicaProtocolError(url, `no prompt log-prob for token ${id} at ${i}`);
    return entry.logprob;
  });
}

export function createVllmApi(http: ReplicaHttp): InferenceApi {
  return {
    async score(baseUrl, model, ids) {
      const body = { ...buildVllmRequest(model, ids, { maxTokens: 1, temperature: 0, topP: 1, stopIds: [] }), prompt_logprobs: 0 };
      const json = await postForJson(http, baseUrl, "/v1/completions", body);
      return parseVllmPromptLogprobs(baseUrl, json, ids);
    },
    async generate(baseUrl, model, promptIds, params) {
      const request = buildVllmRequest(model, promptIds, params);
      if (request.stream) return generateStreaming(http, baseUrl, request, params);
      const json = await postForJson(http, baseUrl, "/v1/completions", request);
      return parseVllmResponse(baseUrl, json, params.topLogprobs ?? 0);
    },
    ...loraAdapterCalls(http, "/v1"),
    async reloadWeights(baseUrl, path) {
      if (path === undefined) return; // the trainer pushed the weights itself
      // The replica was started from the publish folder's `current` link, now pointing at `path`: vLLM's
      // dev-mode RPC re-reads it, then the prefix cache (KV of the old weights) is dropped.
      try {
        await http.post(baseUrl, "/collective_rpc", { method: "reload_weights" });
      } catch (e) {
        if (e instanceof ReplicaRequestError && e.status === 404) {
          throw new ReplicaRequestError(baseUrl, 404, `no /collective_rpc to reload ${String(path)}: start vLLM with VLLM_SERVER_DEV_MODE=1`);
        }
        throw e;
      }
      await http.post(baseUrl, "/reset_prefix_cache", {});
    },
  };
}
