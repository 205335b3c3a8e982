import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { z } from "zod";
import { createRng } from "../../hub/scheduler/rng.ts";

/**
 * TEST DOUBLE of a vLLM OpenAI-compatible server, for CI where no GPU is: `/v1/completions` in
 * token-id mode, `/v1/load_lora_adapter`, `/v1/unload_lora_adapter`, `/v1/models`, with vLLM's JSON
 * shapes and error bodies, and (with `devMode`, vLLM's `VLLM_SERVER_DEV_MODE=1`) the full-weight reload
 * routes `/collective_rpc {"method": "reload_weights"}` and `/reset_prefix_cache`. Its "model" is a
 * seeded hash of the context, the served model name and the loaded weights, so outputs are
 * deterministic and each adapter or reloaded weight version samples differently.
 */
export interface VllmDoubleOptions {
  /** The base model name (`--served-model-name`). Default "double-model". */
  model?: string;
  vocabSize?: number;
  /** `--max-model-len`. Default 4096. */
  maxModelLen?: number;
  /** Check that a loaded adapter's folder holds adapter_config.json, as vLLM reads it. Default false. */
  requireAdapterFiles?: boolean;
  /** Serve the dev-mode routes (`/collective_rpc`, `/reset_prefix_cache`). Default false, as vLLM. */
  devMode?: boolean;
  /**
   * The folder the server was "started from" (`vllm serve <dir>`): `reload_weights` reads it again
   * (following links, as vLLM's loader does) and fails when it holds no config.json.
   */
  weightsDir?: string;
}

export interface VllmDoubleCall {
  model: string;
  promptIds: number[];
  outputIds: number[];
  logprobs: number[];
  /** The weights generation that served (0: the start-up weights; each reload adds one). */
  weights: number;
  /** A reload happened between this request's arrival and its answer: old and new weights met in it. */
  mixedWeights: boolean;
}

export interface VllmDouble {
  app: FastifyInstance;
  /** Every completion served, in order. */
  served: VllmDoubleCall[];
  /** Raw request bodies of /v1/completions, for field-by-field checks. */
  requests: unknown[];
  adapters: Map<string, string>;
  /** Every full-weight reload, in order: the folder it read (links resolved). */
  reloads: string[];
  /** The next `n` completion requests fail with `status` (a crash, an overloaded server). */
  failNext(n: number, status?: number): void;
  /** Completions wait until the returned release function is called. */
  hold(): () => void;
  /** Streamed completions pause after their first token until the returned release function is called. */
  pauseAfterFirstToken(): () => void;
}

const CompletionRequestSchema = z.object({
  model: z.string(),
  prompt: z.union([z.array(z.number().int().min(0)), z.string(), z.array(z.string())]),
  max_tokens: z.number().int().positive().default(16),
  temperature: z.number().min(0).default(1),
  top_p: z.number().gt(0).max(1).default(1),
  seed: z.number().int().optional(),
  stop_token_ids: z.array(z.number().int()).default([]),
  logprobs: z.number().int().min(0).max(20).nullable().optional(),
  prompt_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  return_tokens_as_token_ids: z.boolean().default(false),
  skip_special_tokens: z.boolean().default(true),
  stream: z.boolean().default(false),
  n: z.number().int().default(1),
});

const LoadAdapterSchema = z.object({ lora_name: z.string().min(1), lora_path: z.string().min(1) });
const UnloadAdapterSchema = z.object({ lora_name: z.string().min(1) });

function vllmError(reply: FastifyReply, status: number, type: string, message: string, param: string | null = null) {
  return reply.code(status).send({ error: { message, type, param, code: status } });
}

function hash32(...xs: number[]): number {
  let h = 0x811c9dc5;
  for (const x of xs) {
    h = Math.imul(h ^ (x & 0xffff), 0x01000193);
    h = Math.imul(h ^ (x >>> 16), 0x01000193);
  }
  h ^= h >>> 13;
  h = Math.imul(h, 0x5bd1e995);
  return (h ^ (h >>> 15)) >>> 0;
}

function hashString(s: string): number {
  return hash32(...Array.from(s, (c) => c.charCodeAt(0)));
}

/** The double's "model": log-softmax over the vocabulary from the last two tokens and the model salt. */
function logSoftmax(salt: number, prev2: number, prev1: number, vocab: number): Float64Array {
  const logits = new Float64Array(vocab);
  let max = -Infinity;
  for (let v = 0; v < vocab; v++) {
    const x = (hash32(salt, prev2, prev1, v) / 0xffffffff) * 6;
    logits[v] = x;
    if (x > max) max = x;
  }
  let sum = 0;
  for (let v = 0; v < vocab; v++) sum += Math.exp(logits[v]! - max);
  const lse = max + Math.log(sum);
  for (let v = 0; v < vocab; v++) logits[v] = logits[v]! - lse;
  return logits;
}

/** Samples with temperature and top-p from raw log-probs; temperature 0 is greedy. */
function sampleToken(lp: Float64Array, temperature: number, topP: number, rand: () => number): number {
  const ids = Array.from(lp.keys()).sort((a, b) => lp[b]! - lp[a]!);
  if (temperature === 0) return ids[0]!;
  const weights = ids.map((id) => Math.exp(lp[id]! / temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  let keep = 0;
  let mass = 0;
  while (keep < ids.length && mass < topP * total) mass += weights[keep++]!;
  let r = rand() * mass;
  for (let k = 0; k < keep; k++) {
    r -= weights[k]!;
    if (r <= 0) return ids[k]!;
  }
  return ids[keep - 1]!;
}

export function buildVllmDouble(opts: VllmDoubleOptions = {}): VllmDouble {
  const baseModel = opts.model ?? "double-model";
  const vocab = opts.vocabSize ?? 256;
  const maxModelLen = opts.maxModelLen ?? 4096;
  const served: VllmDoubleCall[] = [];
  const requests: unknown[] = [];
  const adapters = new Map<string, string>();
  const reloads: string[] = [];
  let weights = 0;
  let failures: { n: number; status: number } = { n: 0, status: 500 };
  const holds = new Set<Promise<void>>();
  let streamPause: Promise<void> | null = null;
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });

  app.get("/v1/models", async () => ({
    object: "list",
    data: [baseModel, ...adapters.keys()].map((id) => ({
      id,
      object: "model",
      created: Math.floor(Date.now() / 1000),
      owned_by: "vllm",
      root: id === baseModel ? baseModel : adapters.get(id),
      parent: id === baseModel ? null : baseModel,
    })),
  }));

  app.post("/v1/completions", async (req, reply) => {
    const arrived = weights;
    requests.push(req.body);
    await Promise.all([...holds]);
    if (failures.n > 0) {
      failures = { ...failures, n: failures.n - 1 };
      return vllmError(reply, failures.status, "InternalServerError", "the double was told to fail");
    }
    const parsed = CompletionRequestSchema.safeParse(req.body);
    if (!parsed.success) return vllmError(reply, 400, "BadRequestError", parsed.error.issues[0]?.message ?? "invalid request");
    const body = parsed.data;
    if (body.model !== baseModel && !adapters.has(body.model)) {
      return vllmError(reply, 404, "NotFoundError", `The model \`${body.model}\` does not exist.`, "model");
    }
    if (!Array.isArray(body.prompt) || body.prompt.some((x) => typeof x !== "number")) {
      return vllmError(reply, 400, "BadRequestError", "this double serves token-id prompts only");
    }
    if (body.n !== 1) return vllmError(reply, 400, "BadRequestError", "this double serves n=1 only");
    const prompt = body.prompt as number[];
    if (prompt.some((id) => id >= vocab)) return vllmError(reply, 400, "BadRequestError", `token id out of vocabulary (${vocab})`);
    if (prompt.length + body.max_tokens > maxModelLen) {
      return vllmError(
        reply,
        400,
        "BadRequestError",
        `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${prompt.length + body.max_tokens} tokens (${prompt.length} in the messages, ${body.max_tokens} in the completion). Please reduce the length of the messages or completion.`,
      );
    }
    return complete(body, prompt, reply, arrived);
  });

  async function complete(body: z.infer<typeof CompletionRequestSchema>, prompt: number[], reply: FastifyReply, arrived: number) {
    const startWeights = weights;
    const salt = hash32(hashString(body.model), weights);
    const rand = createRng(body.seed ?? hash32(...randomBytes(4)));
    const ctx = [...prompt];
    const outputIds: number[] = [];
    const logprobs: number[] = [];
    const tops: Array<Record<string, number>> = [];
    let finish: "stop" | "length" = "length";
    let stopReason: number | null = null;
    const nTop = body.logprobs ?? 0;
    while (outputIds.length < body.max_tokens) {
      const lp = logSoftmax(salt, ctx.at(-2) ?? 0, ctx.at(-1) ?? 0, vocab);
      const id = sampleToken(lp, body.temperature, body.top_p, rand);
      outputIds.push(id);
      logprobs.push(Math.max(lp[id]!, -9999));
      const top: Record<string, number> = {};
      const ranked = Array.from(lp.keys()).sort((a, b) => lp[b]! - lp[a]!).slice(0, nTop);
      for (const t of [id, ...ranked]) top[body.return_tokens_as_token_ids ? `token_id:${t}` : `<${t}>`] = Math.max(lp[t]!, -9999);
      tops.push(top);
      ctx.push(id);
      if (body.stop_token_ids.includes(id)) {
        finish = "stop";
        stopReason = id;
        break;
      }
    }
    const call: VllmDoubleCall = { model: body.model, promptIds: prompt, outputIds, logprobs, weights: startWeights, mixedWeights: false };
    served.push(call);
    const promptLogprobs =
      body.prompt_logprobs === undefined || body.prompt_logprobs === null
        ? null
        : prompt.map((id, i) => {
            if (i === 0) return null;
            const lp = logSoftmax(salt, prompt[i - 2] ?? 0, prompt[i - 1]!, vocab);
            const rank = 1 + Array.from(lp).filter((x) => x > lp[id]!).length;
            return { [String(id)]: { logprob: Math.max(lp[id]!, -9999), rank, decoded_token: `<${id}>` } };
          });
    const withLogprobs = body.logprobs !== undefined && body.logprobs !== null;
    const id = `cmpl-${randomBytes(16).toString("hex")}`;
    const created = Math.floor(Date.now() / 1000);
    if (body.stream) {
      // One chunk per token, as vLLM streams them, then the finish reason and [DONE].
      reply.hijack();
      reply.raw.writeHead(200, { "content-type": "text/event-stream" });
      const send = (data: unknown) => reply.raw.write(`data: ${JSON.stringify(data)}\n\n`);
      for (let i = 0; i < outputIds.length; i++) {
        const t = outputIds[i]!;
        send({
          id,
          object: "text_completion",
          created,
          model: body.model,
          choices: [{
            index: 0,
            text: `<${t}>`,
            logprobs: withLogprobs
              ? { text_offset: [0], token_logprobs: [logprobs[i]!], tokens: [body.return_tokens_as_token_ids ? `token_id:${t}` : `<${t}>`], top_logprobs: [tops[i]!] }
              : null,
            finish_reason: i === outputIds.length - 1 ? finish : null,
            stop_reason: i === outputIds.length - 1 ? stopReason : null,
          }],
        });
        if (i === 0 && streamPause) await streamPause;
      }
      if (weights !== arrived) call.mixedWeights = true;
      reply.raw.end("data: [DONE]\n\n");
      return reply;
    }
    if (weights !== arrived) call.mixedWeights = true;
    const pieces = outputIds.map((id) => `<${id}>`);
    const offsets: number[] = [];
    let off = 0;
    for (const p of pieces) {
      offsets.push(off);
      off += p.length;
    }
    return {
      id,
      object: "text_completion",
      created,
      model: body.model,
      choices: [
        {
          index: 0,
          text: pieces.join(""),
          logprobs: withLogprobs
            ? {
                text_offset: offsets,
                token_logprobs: logprobs,
                tokens: body.return_tokens_as_token_ids ? outputIds.map((id) => `token_id:${id}`) : pieces,
                top_logprobs: tops,
              }
            : null,
          finish_reason: finish,
          stop_reason: stopReason,
          prompt_logprobs: promptLogprobs,
        },
      ],
      usage: {
        prompt_tokens: prompt.length,
        total_tokens: prompt.length + outputIds.length,
        completion_tokens: outputIds.length,
        prompt_tokens_details: null,
      },
    };
  }

  if (opts.devMode) {
    app.post("/collective_rpc", async (req, reply) => {
      const method = (req.body as { method?: unknown } | null)?.method;
      if (method !== "reload_weights") return vllmError(reply, 400, "BadRequestError", `this double runs reload_weights only, not ${String(method)}`);
      const dir = opts.weightsDir;
      if (dir === undefined || !existsSync(join(dir, "config.json"))) {
        return vllmError(reply, 500, "InternalServerError", `reload_weights: no model in ${String(dir)}`);
      }
      reloads.push(realpathSync(dir));
      weights++;
      return { results: [null] };
    });
    app.post("/reset_prefix_cache", async (_req, reply) => reply.code(200).send());
  }

  app.post("/v1/load_lora_adapter", async (req, reply) => {
    const parsed = LoadAdapterSchema.safeParse(req.body);
    if (!parsed.success) return vllmError(reply, 400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided.");
    const { lora_name: name, lora_path: path } = parsed.data;
    if (adapters.has(name)) return vllmError(reply, 400, "InvalidUserInput", `The lora adapter '${name}' has already been loaded.`);
    if (opts.requireAdapterFiles && !existsSync(join(path, "adapter_config.json"))) {
      return vllmError(reply, 400, "BadRequestError", `Loading lora ${name} failed: No adapter found for ${path}`);
    }
    adapters.set(name, path);
    return reply.type("text/plain").send(`Success: LoRA adapter '${name}' added successfully.`);
  });

  app.post("/v1/unload_lora_adapter", async (req, reply) => {
    const parsed = UnloadAdapterSchema.safeParse(req.body);
    if (!parsed.success) return vllmError(reply, 400, "InvalidUserInput", "'lora_name' needs to be provided to unload a LoRA adapter.");
    const name = parsed.data.lora_name;
    if (!adapters.delete(name)) return vllmError(reply, 404, "NotFoundError", `The lora adapter '${name}' cannot be found.`);
    return reply.type("text/plain").send(`Success: LoRA adapter '${name}' removed successfully.`);
  });

  return {
    app,
    served,
    requests,
    adapters,
    reloads,
    failNext(n, status = 500) {
      failures = { n, status };
    },
    pauseAfterFirstToken() {
      let release!: () => void;
      streamPause = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        streamPause = null;
        release();
      };
    },
    hold() {
      let release!: () => void;
      const p = new Promise<void>((resolve) => {
        release = resolve;
      });
      holds.add(p);
      return () => {
        holds.delete(p);
        release();
      };
    },
  };
}
