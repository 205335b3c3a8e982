import type { z } from "zod";
import { buildPrefixTree } from "../../training/prefix-tree.ts";
import type { TrainBatch, TrainMetrics } from "../../training/sample.ts";
import { describeFetchFailure } from "../../errors.ts";
import { TrainerProtocolError, TrainerRequestError, TrainerUnavailableError } from "./errors.ts";
import {
  LoadResponseSchema,
  PublishResponseSchema,
  SaveResponseSchema,
  StatusResponseSchema,
  TRAINER_PROTOCOL_HEADER,
  TRAINER_PROTOCOL_VERSION,
  TrainerErrorBodySchema,
  TrainStepResponseSchema,
  type PublishRequest,
  type PublishResponse,
  type StatusResponse,
  type WireSample,
  type WireTree,
} from "./protocol.ts";

export interface TrainerClientOptions {
  /** Base URL of the trainer service, e.g. http://127.0.0.1:8800 (no trailing /v1). */
  url: string;
  /** Sent as `Authorization: Bearer <key>` when set. */
  apiKey?: string;
  /** Per-request limit; a train step on a large batch can take minutes. Default 1 hour. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface TrainerClient {
  status(): Promise<StatusResponse>;
  /**
   * One optimizer step; refused unless the trainer is at `expectedVersion`. With `stepId`, the same call
   * made again after the trainer applied it gets that step's answer (a retry after a lost answer).
   */
  trainStep(expectedVersion: number, batch: TrainBatch, stepId?: string): Promise<TrainMetrics>;
  publish(request: PublishRequest): Promise<PublishResponse>;
  save(dir: string): Promise<{ dir: string; version: number }>;
  load(dir: string): Promise<{ dir: string; version: number }>;
}

/** The batch's samples as one token trie, for a `prefixTree` batch (the trainer may score it in one pass). */
export function toWireTree(batch: TrainBatch): WireTree {
  const tree = buildPrefixTree(batch.samples);
  return { token_ids: tree.tokenIds, parents: tree.parents, leaves: tree.leaves };
}

/** Converts a batch to wire samples field by field; ids are copied as they are, never re-derived. */
export function toWireSamples(batch: TrainBatch): WireSample[] {
  return batch.samples.map((s) => ({
    token_ids: s.tokenIds,
    loss_mask: s.lossMask.map((m) => (m ? 1 : 0)),
    logprobs: s.logprobs,
    advantage: s.advantage,
    weight: s.weight,
  }));
}

export function createTrainerClient(opts: TrainerClientOptions): TrainerClient {
  const doFetch = opts.fetch ?? fetch;
  const base = opts.url.replace(/\/+$/, "");
  const timeoutMs = opts.timeoutMs ?? 3_600_000;

  async function call<S extends z.ZodType>(method: "GET" | "POST", path: string, schema: S, body?: unknown): Promise<z.infer<S>> {
    const headers: Record<string, string> = { [TRAINER_PROTOCOL_HEADER]: String(TRAINER_PROTOCOL_VERSION) };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      throw new TrainerUnavailableError(`${method} ${base}${path}: ${describeFetchFailure(cause)}`, cause);
    }
    const spoken = res.headers.get(TRAINER_PROTOCOL_HEADER);
    if (spoken !== null && spoken !== String(TRAINER_PROTOCOL_VERSION)) {
      throw new TrainerProtocolError(`trainer speaks protocol ${spoken}, this client ${TRAINER_PROTOCOL_VERSION}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      throw new TrainerUnavailableError(`${method} ${path}: ${res.status} non-JSON answer: ${text.slice(0, 200)}`, cause);
    }
    if (!res.ok) {
      const err = TrainerErrorBodySchema.safeParse(json);
      if (err.success) throw new TrainerRequestError(res.status, err.data.error.code, err.data.error.message);
      throw new TrainerRequestError(res.status, "unknown", text.slice(0, 500));
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new TrainerProtocolError(`${method} ${path}: answer is not protocol ${TRAINER_PROTOCOL_VERSION}`, parsed.error);
    }
    return parsed.data;
  }

  return {
    async status() {
      return call("GET", "/v1/status", StatusResponseSchema);
    },
    async trainStep(expectedVersion, batch, stepId) {
      const out = await call("POST", "/v1/train_step", TrainStepResponseSchema, {
        expected_version: expectedVersion,
        samples: toWireSamples(batch),
        ...(batch.prefixTree ? { tree: toWireTree(batch) } : {}),
        ...(stepId === undefined ? {} : { step_id: stepId }),
      });
      const m = out.metrics;
      return {
        loss: m.loss,
        tokens: m.tokens,
        gradNorm: m.grad_norm,
        clipFraction: m.clip_fraction,
        ...(m.kl === undefined ? {} : { kl: m.kl }),
        version: out.version,
        durationMs: m.duration_ms,
      };
    },
    async publish(request) {
      return call("POST", "/v1/publish", PublishResponseSchema, request);
    },
    async save(dir) {
      return call("POST", "/v1/save", SaveResponseSchema, { dir });
    },
    async load(dir) {
      return call("POST", "/v1/load", LoadResponseSchema, { dir });
    },
  };
}
