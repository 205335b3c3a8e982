import { mkdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import type { z } from "zod";
import {
  LoadRequestSchema,
  PublishRequestSchema,
  SaveRequestSchema,
  TRAINER_PROTOCOL_HEADER,
  TRAINER_PROTOCOL_VERSION,
  TrainStepRequestSchema,
  type PublishResponse,
  type StatusResponse,
  type TrainerErrorBody,
  type TrainerErrorCode,
  type TrainStepResponse,
  type WireSample,
  type WireTree,
} from "../../server/engines/trainer/protocol.ts";

/**
 * TEST DOUBLE of a GPU trainer service: speaks trainer protocol v1 exactly, validates every field,
 * records what it received and moves the version on, but trains nothing. It stands in for
 * `server/engines/torch-trainer/` where no GPU is.
 */
export interface TrainerDoubleOptions {
  mode?: "lora" | "full";
  model?: string;
  /** Starting version. Default 0. */
  version?: number;
  /**
   * Where publishes are written: LoRA adapter_config.json only; full weights `v<N>/config.json` with the
   * `current` link repointed at it, as the reference service does. Default: nothing is written.
   */
  publishDir?: string;
  /** Require `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
}

export interface TrainerDoubleRecord {
  /** The steps applied (a step answered again by its `step_id` is counted in `replays`, not here). */
  trainSteps: Array<{ expectedVersion: number; samples: WireSample[]; tree?: WireTree }>;
  replays: number;
  publishes: PublishResponse[];
  saves: string[];
  loads: string[];
}

export interface TrainerDouble {
  app: FastifyInstance;
  received: TrainerDoubleRecord;
  version(): number;
}

const SAVE_FILE = "trainer-double.json";

function sendError(reply: FastifyReply, status: number, code: TrainerErrorCode, message: string, param: string | null = null) {
  const body: TrainerErrorBody = { error: { code, message, param } };
  return reply.code(status).send(body);
}

export function buildTrainerDouble(opts: TrainerDoubleOptions = {}): TrainerDouble {
  const mode = opts.mode ?? "lora";
  const model = opts.model ?? "trainer-double";
  let version = opts.version ?? 0;
  let steps = 0;
  let tokensTrained = 0;
  /** The last step applied with a `step_id`: sent again (same id and expected version), its answer comes back. */
  let lastStep: { stepId: string; expectedVersion: number; answer: TrainStepResponse } | null = null;
  const received: TrainerDoubleRecord = { trainSteps: [], replays: 0, publishes: [], saves: [], loads: [] };
  const app = Fastify({ logger: false, bodyLimit: 256 * 1024 * 1024 });

  app.addHook("onRequest", async (req, reply) => {
    reply.header(TRAINER_PROTOCOL_HEADER, String(TRAINER_PROTOCOL_VERSION));
    const spoken = req.headers[TRAINER_PROTOCOL_HEADER];
    if (spoken !== undefined && spoken !== String(TRAINER_PROTOCOL_VERSION)) {
      return sendError(reply, 400, "invalid_request", `protocol ${String(spoken)} is not ${TRAINER_PROTOCOL_VERSION}`);
    }
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(reply, 401, "invalid_request", "missing or wrong api key");
    }
  });

  function parse<S extends z.ZodType>(schema: S, body: unknown, reply: FastifyReply): z.infer<S> | undefined {
    const r = schema.safeParse(body);
    if (r.success) return r.data;
    const issue = r.error.issues[0];
    void sendError(reply, 400, "invalid_request", issue?.message ?? "invalid body", issue ? issue.path.join(".") : null);
    return undefined;
  }

  /** Refuses a request made for another version than the trainer's: 409 `version_conflict` on `param`. */
  function versionConflict(reply: FastifyReply, wanted: string, param: string) {
    return sendError(reply, 409, "version_conflict", `trainer is at ${version}, ${wanted}`, param);
  }

  app.get("/v1/status", async () => {
    const body: StatusResponse = { protocol: TRAINER_PROTOCOL_VERSION, version, mode, model, busy: false, steps, tokens_trained: tokensTrained };
    return body;
  });

  app.post("/v1/train_step", async (req, reply) => {
    const body = parse(TrainStepRequestSchema, req.body, reply);
    if (!body) return reply;
    if (lastStep && body.step_id === lastStep.stepId && body.expected_version === lastStep.expectedVersion && lastStep.answer.version === version) {
      received.replays += 1;
      return lastStep.answer;
    }
    if (body.expected_version !== version) return versionConflict(reply, `step expects ${body.expected_version}`, "expected_version");
    received.trainSteps.push({ expectedVersion: body.expected_version, samples: body.samples, ...(body.tree ? { tree: body.tree } : {}) });
    // At the behaviour policy the PPO ratio is 1, so the clipped loss is the token-mean of -A*w.
    let tokens = 0;
    let sum = 0;
    for (const s of body.samples) {
      for (const m of s.loss_mask) {
        tokens += m;
        sum -= m * s.advantage * s.weight;
      }
    }
    version += 1;
    steps += 1;
    tokensTrained += tokens;
    const out: TrainStepResponse = {
      version,
      metrics: { loss: tokens ? sum / tokens : 0, tokens, grad_norm: 0, clip_fraction: 0, kl: 0, duration_ms: 0 },
    };
    lastStep = body.step_id === undefined ? null : { stepId: body.step_id, expectedVersion: body.expected_version, answer: out };
    return out;
  });

  app.post("/v1/publish", async (req, reply) => {
    const body = parse(PublishRequestSchema, req.body, reply);
    if (!body) return reply;
    if (body.version !== version) return versionConflict(reply, `cannot publish ${body.version}`, "version");
    let out: PublishResponse;
    if (mode === "full") {
      out = { mode, version };
      if (opts.publishDir !== undefined) {
        const path = join(opts.publishDir, `v${version}`);
        await mkdir(path, { recursive: true });
        await writeFile(join(path, "config.json"), JSON.stringify({ model_type: "trainer-double", version }));
        const tmp = join(opts.publishDir, `current.tmp-${version}`);
        await symlink(`v${version}`, tmp);
        await rename(tmp, join(opts.publishDir, "current"));
        out = { mode, version, path };
      }
    } else {
      const name = body.adapter_name ?? `${model}-v${version}`;
      const path = join(opts.publishDir ?? "/nonexistent/trainer-double", name);
      if (opts.publishDir !== undefined) {
        await mkdir(path, { recursive: true });
        await writeFile(join(path, "adapter_config.json"), JSON.stringify({ peft_type: "LORA", base_model_name_or_path: model, r: 8 }));
      }
      out = { mode, version, adapter_name: name, adapter_path: path };
      for (const url of body.load_into) {
        const res = await fetch(`${url.replace(/\/+$/, "")}/v1/load_lora_adapter`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ lora_name: name, lora_path: path }),
        }).catch((e: unknown) => e as Error);
        if (res instanceof Error || !res.ok) {
          return sendError(reply, 502, "publish_failed", `loading into ${url} failed`, "load_into");
        }
      }
    }
    received.publishes.push(out);
    return out;
  });

  app.post("/v1/save", async (req, reply) => {
    const body = parse(SaveRequestSchema, req.body, reply);
    if (!body) return reply;
    await mkdir(body.dir, { recursive: true });
    await writeFile(join(body.dir, SAVE_FILE), JSON.stringify({ version, steps, tokensTrained }));
    received.saves.push(body.dir);
    return { dir: body.dir, version };
  });

  app.post("/v1/load", async (req, reply) => {
    const body = parse(LoadRequestSchema, req.body, reply);
    if (!body) return reply;
    const text = await readFile(join(body.dir, SAVE_FILE), "utf8").catch(() => undefined);
    if (text === undefined) return sendError(reply, 404, "not_found", `no checkpoint in ${body.dir}`, "dir");
    const saved = JSON.parse(text) as { version: number; steps: number; tokensTrained: number };
    version = saved.version;
    lastStep = null;
    steps = saved.steps;
    tokensTrained = saved.tokensTrained;
    received.loads.push(body.dir);
    return { dir: body.dir, version };
  });

  return { app, received, version: () => version };
}
