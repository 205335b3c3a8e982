import { z } from "zod";
import type { SamplingParams } from "../engine.ts";
import { ReplicaProtocolError } from "./errors.ts";
import type { InferenceApi, ServedGeneration } from "./inference-api.ts";
import { loraAdapterCalls } from "./lora-adapters.ts";
import { postForJson, type ReplicaHttp } from "./replica-http.ts";

/** SGLang's native `/generate` with `input_ids`: token-in, token-out, log-probs per output token. */
export function buildSglangRequest(model: string, baseModel: string, promptIds: readonly number[], params: SamplingParams) {
  return {
    input_ids: [...promptIds],
    sampling_params: {
      max_new_tokens: params.maxTokens,
      temperature: params.temperature,
      top_p: params.topP,
      stop_token_ids: [...params.stopIds],
      skip_special_tokens: false,
      // Keeps the matched stop token in the output, as the Engine contract says.
      no_stop_trim: true,
      ...(params.seed === undefined ? {} : { sampling_seed: params.seed }),
      ...(params.guided === undefined
        ? {}
        : { json_schema: JSON.stringify(params.guided.kind === "json_schema" ? params.guided.schema : { type: "object" }) }),
    },
    return_logprob: true,
    top_logprobs_num: params.topLogprobs ?? 0,
    stream: false,
    ...(model === baseModel ? {} : { lora_path: model }),
  };
}

const LogprobTriple = z.tuple([z.number().nullable(), z.number().int().min(0), z.string().nullable()]);

export const SglangGenerateResponseSchema = z.object({
  text: z.string(),
  meta_info: z.object({
    finish_reason: z.object({ type: z.string() }).passthrough().nullable(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    output_token_logprobs: z.array(LogprobTriple),
    output_top_logprobs: z.array(z.array(LogprobTriple).nullable()).optional(),
    input_token_logprobs: z.array(LogprobTriple).optional(),
  }),
});

export function parseSglangResponse(url: string, json: unknown, topLogprobs: number): ServedGeneration {
  const parsed = SglangGenerateResponseSchema.safeParse(json);
  if (!parsed.success) throw new ReplicaProtocolError(url, "not an SGLang /generate response", { cause: parsed.error });
  const meta = parsed.data.meta_info;
  const outputIds: number[] = [];
  const logprobs: number[] = [];
  for (const [i, [lp, id]] of meta.output_token_logprobs.entries()) {
    if (lp === null) throw new ReplicaProtocolError(url, `no log-prob for output token ${i}`);
    outputIds.push(id);
    logprobs.push(lp);
  }
  const type = meta.finish_reason?.type;
  if (type !== "stop" && type !== "length") throw new ReplicaProtocolError(url, `finish_reason ${String(type)}`);
  const out: ServedGeneration = { outputIds, logprobs, finishReason: type };
  if (topLogprobs > 0) {
    out.topLogprobs = (meta.output_top_logprobs ?? []).map((step) =>
      (step ?? []).flatMap(([logprob, id]) => (logprob === null ? [] : [{ id, logprob }])).slice(0, topLogprobs),
    );
  }
  return out;
}

export function parseSglangInputLogprobs(url: string, json: unknown, ids: readonly number[]): number[] {
  const parsed = SglangGenerateResponseSchema.safeParse(json);
  if (!parsed.success) throw new ReplicaProtocolError(url, "not an SGLang /generate response", { cause: parsed.error });
  const rows = parsed.data.meta_info.input_token_logprobs;
  if (!rows || rows.length !== ids.length) throw new ReplicaProtocolError(url, "input_token_logprobs missing or of the wrong length");
  return rows.map(([lp, id], i) => {
    if (id !== ids[i]) throw new ReplicaProtocolError(url, `input token ${i} is ${id}, sent ${ids[i]}`);
    return i === 0 ? 0 : (lp ?? 0);
  });
}

export function createSglangApi(http: ReplicaHttp, baseModel: string): InferenceApi {
  return {
    async score(baseUrl, model, ids) {
      const body = { ...buildSglangRequest(model, baseModel, ids, { maxTokens: 1, temperature: 0, topP: 1, stopIds: [] }), logprob_start_len: 0 };
      const json = await postForJson(http, baseUrl, "/generate", body);
      return parseSglangInputLogprobs(baseUrl, json, ids);
    },
    async generate(baseUrl, model, promptIds, params) {
      const json = await postForJson(http, baseUrl, "/generate", buildSglangRequest(model, baseModel, promptIds, params));
      const served = parseSglangResponse(baseUrl, json, params.topLogprobs ?? 0);
      // Not streamed: the tokens reach `onToken` once the answer is complete (a stop string still cuts).
      if (params.onToken) {
        const stopAt = served.outputIds.findIndex((id, i) => params.onToken!(id, served.logprobs[i]!) === true);
        if (stopAt !== -1) {
          served.outputIds = served.outputIds.slice(0, stopAt + 1);
          served.logprobs = served.logprobs.slice(0, stopAt + 1);
          if (served.topLogprobs) served.topLogprobs = served.topLogprobs.slice(0, stopAt + 1);
          served.finishReason = "stop";
        }
      }
      return served;
    },
    ...loraAdapterCalls(http, ""),
    async reloadWeights(baseUrl, path) {
      if (path !== undefined) await http.post(baseUrl, "/update_weights_from_disk", { model_path: path });
    },
  };
}
