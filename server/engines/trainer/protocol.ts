import { z } from "zod";

/**
 * The trainer protocol, version 1: the one home of its wire schemas (see PROTOCOL.md).
 * Wire fields are snake_case; the TS client converts to and from the domain types.
 */
export const TRAINER_PROTOCOL_VERSION = 1;
/** Sent on every request and answered on every response. */
export const TRAINER_PROTOCOL_HEADER = "x-agentjet-trainer-protocol";

const TokenId = z.number().int().min(0);
const Version = z.number().int().min(0);

export const WireSampleSchema = z
  .object({
    token_ids: z.array(TokenId).min(2),
    /** 1 where the token is trained, 0 elsewhere; same length as token_ids; index 0 must be 0. */
    loss_mask: z.array(z.union([z.literal(0), z.literal(1)])),
    /** Behaviour log-prob of each token (0 where the mask is 0); same length as token_ids. */
    logprobs: z.array(z.number().finite()),
    advantage: z.number().finite(),
    weight: z.number().finite().min(0),
  })
  .superRefine((s, ctx) => {
    const n = s.token_ids.length;
    if (s.loss_mask.length !== n) {
      ctx.addIssue({ code: "custom", path: ["loss_mask"], message: `length ${s.loss_mask.length} != token_ids length ${n}` });
    }
    if (s.logprobs.length !== n) {
      ctx.addIssue({ code: "custom", path: ["logprobs"], message: `length ${s.logprobs.length} != token_ids length ${n}` });
    }
    if (s.loss_mask[0] === 1) {
      ctx.addIssue({ code: "custom", path: ["loss_mask", 0], message: "the first token has no context and cannot be trained" });
    }
    if (!s.loss_mask.includes(1)) {
      ctx.addIssue({ code: "custom", path: ["loss_mask"], message: "no trained token" });
    }
  });
export type WireSample = z.infer<typeof WireSampleSchema>;

/** The samples as one token trie (`merging.prefixTree`); sample k is the path from its root to `leaves[k]`. */
export const WireTreeSchema = z.object({
  token_ids: z.array(TokenId),
  /** Parent node of each node (-1 for a root); a parent precedes its children. */
  parents: z.array(z.number().int().min(-1)),
  /** Per sample, the node of its last token. */
  leaves: z.array(z.number().int().min(0)),
});
export type WireTree = z.infer<typeof WireTreeSchema>;

export const TrainStepRequestSchema = z.object({
  /** The trainer refuses the step (409) unless its version equals this: no step is applied twice. */
  expected_version: Version,
  samples: z.array(WireSampleSchema).min(1),
  /** Optional: which tokens share a context; the loss stays the samples' (a service may ignore it). */
  tree: WireTreeSchema.optional(),
  /**
   * Optional: the client's id of this batch. The same step sent again (this id and this expected_version)
   * once the trainer applied it is answered with that step's answer instead of 409: a retry after a lost
   * answer (a timeout, a dropped connection) learns what happened, and nothing is applied twice.
   */
  step_id: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/).optional(),
});
export type TrainStepRequest = z.infer<typeof TrainStepRequestSchema>;

export const TrainMetricsWireSchema = z.object({
  loss: z.number(),
  tokens: z.number().int().min(0),
  grad_norm: z.number(),
  clip_fraction: z.number().min(0).max(1),
  kl: z.number().optional(),
  duration_ms: z.number().min(0),
});

export const TrainStepResponseSchema = z.object({
  version: Version,
  metrics: TrainMetricsWireSchema,
});
export type TrainStepResponse = z.infer<typeof TrainStepResponseSchema>;

export const PublishRequestSchema = z.object({
  /** The version to publish; must be the trainer's current version (409 otherwise). */
  version: Version,
  /** LoRA: the name the inference engine will know the adapter by. Ignored for full weights. */
  adapter_name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/).optional(),
  /** Inference base URLs the trainer should load the adapter into itself; empty: the caller does it. */
  load_into: z.array(z.string().url()).default([]),
});
export type PublishRequest = z.input<typeof PublishRequestSchema>;

export const PublishResponseSchema = z.discriminatedUnion("mode", [
  z.object({
    mode: z.literal("lora"),
    version: Version,
    adapter_name: z.string().min(1),
    /** Folder with adapter_config.json + adapter weights, readable by the inference engine. */
    adapter_path: z.string().min(1),
  }),
  z.object({
    mode: z.literal("full"),
    version: Version,
    /** Folder with the full weights, when the trainer wrote them to disk (SGLang reloads from it). */
    path: z.string().min(1).optional(),
  }),
]);
export type PublishResponse = z.infer<typeof PublishResponseSchema>;

export const SaveRequestSchema = z.object({ dir: z.string().min(1) });
export const SaveResponseSchema = z.object({ dir: z.string().min(1), version: Version });
export const LoadRequestSchema = z.object({ dir: z.string().min(1) });
export const LoadResponseSchema = z.object({ dir: z.string().min(1), version: Version });

export const StatusResponseSchema = z.object({
  protocol: z.literal(TRAINER_PROTOCOL_VERSION),
  version: Version,
  mode: z.enum(["lora", "full"]),
  model: z.string(),
  busy: z.boolean(),
  steps: z.number().int().min(0),
  tokens_trained: z.number().int().min(0),
});
export type StatusResponse = z.infer<typeof StatusResponseSchema>;

export const TrainerErrorCodeSchema = z.enum([
  "invalid_request",
  "version_conflict",
  "busy",
  "not_found",
  "publish_failed",
  "internal",
]);
export type TrainerErrorCode = z.infer<typeof TrainerErrorCodeSchema>;

export const TrainerErrorBodySchema = z.object({
  error: z.object({ code: TrainerErrorCodeSchema, message: z.string(), param: z.string().nullable().default(null) }),
});
export type TrainerErrorBody = z.infer<typeof TrainerErrorBodySchema>;
