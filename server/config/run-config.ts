import { z } from "zod";

/**
 * The run config (YAML): the one home of its schema. `agentjet serve` reads the server's parts;
 * `agentjet train` reads all of it. Every field says what it does and its default.
 */

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const Name = z.string().regex(NAME, "letters, digits, '_' and '-', starting with a letter");

export const EmbeddedModelSchema = z.object({
  layers: z.number().int().min(1).max(8).default(2).describe("Transformer blocks"),
  dim: z.number().int().min(8).max(512).default(64).describe("Model width"),
  heads: z.number().int().min(1).max(16).default(4).describe("Attention heads (dim must divide by it)"),
  context: z.number().int().min(16).max(4096).default(256).describe("Longest prompt + output, tokens"),
  seed: z.number().int().default(0).describe("Weight initialisation seed"),
  mlpRatio: z.number().int().min(1).max(8).optional().describe("MLP hidden width as a multiple of dim; 4 when absent"),
  tiedOutput: z.boolean().optional().describe("Output projection shares the token embedding; true when absent"),
});

export const OptimizerSchema = z.object({
  lr: z.number().positive().default(3e-3).describe("Adam learning rate"),
  beta1: z.number().min(0).max(1).default(0.9),
  beta2: z.number().min(0).max(1).default(0.99),
  weightDecay: z.number().min(0).default(0),
  gradClip: z.number().positive().default(1).describe("Global gradient-norm clip"),
  clipEps: z.number().positive().default(0.2).describe("PPO ratio clip epsilon"),
  klCoef: z.number().min(0).default(0).describe("KL penalty to the initial (reference) weights; 0 disables"),
  epochs: z.number().int().positive().default(1).describe("Passes over each batch"),
  microBatch: z.number().int().positive().default(16).describe("Samples per gradient accumulation step"),
});

export const EngineSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("embedded"),
    model: EmbeddedModelSchema.default(EmbeddedModelSchema.parse({})),
  }),
  z.object({
    kind: z.literal("openai-tokens"),
    /** vLLM/SGLang replicas serving the policy; balanced by load. */
    baseUrls: z.array(z.string().url()).min(1),
    model: z.string().min(1),
    apiKey: z.string().optional(),
    maxContext: z.number().int().positive().default(32_768),
    trainer: z.object({
      url: z.string().url(),
      apiKey: z.string().optional(),
      timeoutMs: z.number().int().positive().default(3_600_000).describe("Per-request limit (a train step can take long)"),
    }),
    api: z.enum(["vllm", "sglang"]).default("vllm").describe("vllm: /v1/completions with token ids; sglang: native /generate"),
    replicaWeights: z
      .array(z.number().positive())
      .optional()
      .describe("Relative capacity of each baseUrl (same order); load is in-flight calls / weight. Default all 1"),
    weights: z
      .enum(["lora", "full"])
      .default("lora")
      .describe("lora: each version is an adapter loaded by name; full: the trainer pushes full weights itself"),
    adapterPrefix: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/).optional().describe("LoRA adapter names are <prefix>-v<version>; default the model name"),
    requestTimeoutMs: z.number().int().positive().default(600_000).describe("Per generation request"),
    attempts: z.number().int().positive().optional().describe("Tries per call across replicas; default one per replica"),
    verifyServedTokens: z
      .boolean()
      .default(true)
      .describe("Refuse to train a sample whose trained spans are not outputs this engine served"),
  }),
]);
export type EngineConfig = z.infer<typeof EngineSchema>;

export const PolicySchema = z.object({
  engine: EngineSchema.default({ kind: "embedded", model: EmbeddedModelSchema.parse({}) }),
  tokenizer: z.enum(["embedded", "qwen3"]).default("embedded").describe("Tokenizer and chat template"),
  optimizer: OptimizerSchema.default(OptimizerSchema.parse({})),
});
export type PolicyConfig = z.infer<typeof PolicySchema>;

export const FrozenModelSchema = z.object({
  baseUrl: z.string().url().describe("Any OpenAI-compatible endpoint"),
  model: z.string().min(1),
  apiKey: z.string().optional().describe("Defaults to $OPENAI_API_KEY"),
  temperature: z.number().min(0).optional().describe("Overrides the request's temperature"),
});
export type FrozenModelConfig = z.infer<typeof FrozenModelSchema>;

export const ScheduleSchema = z.object({
  kind: z.enum(["constant", "linear", "cosine"]),
  start: z.number().min(0),
  end: z.number().min(0),
  steps: z.number().int().positive().describe("Step at which the end share is reached"),
});

export const EnvironmentEntrySchema = z.object({
  name: z.string().min(1).describe("Environment name in the registry"),
  version: z.string().optional().describe("Exact version; the lockfile's or the newest when absent"),
  weight: z.union([z.number().min(0), ScheduleSchema]).default(1).describe("Mixing weight, or a schedule"),
  split: z.string().default("train"),
  /** Role -> policy name, frozen model name, or "@builtin" (the environment plays it itself). */
  roles: z.record(z.string(), z.string()),
  /** Passed to the environment's data loader (e.g. { data: path } for aime). */
  options: z.record(z.string(), z.unknown()).default({}),
  maxTurns: z.number().int().positive().default(64),
});
export type EnvironmentEntry = z.infer<typeof EnvironmentEntrySchema>;

export const BatchingSchema = z.object({
  strategy: z.enum(["episodes", "tasks", "valid-tasks", "any-client", "all-clients"]).default("tasks"),
  batchTasks: z.number().int().positive().default(8),
  groupSize: z.number().int().positive().default(8),
  maxCachedEpisodes: z.number().int().positive().default(4096).describe("Warns and stops scheduling past it"),
  filterEqualRewards: z.boolean().default(true).describe("Drop groups whose rewards are all equal"),
  infraRetries: z.number().int().min(0).default(2).describe("Retries of an infrastructure-failed episode"),
  clientIdleS: z.number().positive().default(600).describe("all-clients: a client drops out after this idle"),
});

export const MergingSchema = z.object({
  match: z.enum(["text", "token"]).default("text"),
  ignoreTools: z.boolean().default(true),
  overflow: z.enum(["drop", "keep"]).default("drop").describe("What to do with calls that overflowed the context"),
  prefixTree: z.boolean().default(false).describe("Pack diverging timelines' shared prefix once"),
});

export const AdvantageSchema = z.object({
  eps: z.number().positive().default(1e-6),
  baseline: z.enum(["sample", "episode"]).default("episode").describe("Mean/std over episodes or samples"),
  lossWeight: z.enum(["none", "per-episode"]).default("none").describe("per-episode: 1/N for N samples"),
});

export const SamplingSchema = z.object({
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).default(1),
  maxTokens: z.number().int().positive().default(16),
});

export const RunConfigSchema = z.object({
  run: z
    .object({
      dir: z.string().default("runs/latest").describe("Run directory (config, run.db, metrics, checkpoints)"),
      seed: z.number().int().default(0),
      steps: z.number().int().positive().default(20).describe("Optimizer steps to run"),
      checkpointEvery: z.number().int().positive().default(5),
    })
    .default({ dir: "runs/latest", seed: 0, steps: 20, checkpointEvery: 5 }),
  server: z
    .object({
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(0).max(65535).default(8700),
      keySecret: z.string().optional().describe("HMAC secret for episode keys; $AGENTJET_KEY_SECRET, else random"),
      idleTimeoutS: z.number().positive().default(120).describe("Claimed episodes idle this long are reclaimed"),
      syncTimeoutS: z.number().positive().default(60).describe("How long in-flight episodes may finish before a weight update abandons them"),
      bodyLimitBytes: z.number().int().positive().default(4 * 1024 * 1024),
    })
    .default({ host: "127.0.0.1", port: 8700, idleTimeoutS: 120, syncTimeoutS: 60, bodyLimitBytes: 4 * 1024 * 1024 }),
  policies: z.record(Name, PolicySchema).refine((p) => Object.keys(p).length > 0, "at least one policy"),
  frozen: z.record(Name, FrozenModelSchema).default({}),
  environments: z.array(EnvironmentEntrySchema).min(1),
  sampling: SamplingSchema.default(SamplingSchema.parse({})),
  batching: BatchingSchema.default(BatchingSchema.parse({})),
  merging: MergingSchema.default(MergingSchema.parse({})),
  advantage: AdvantageSchema.default(AdvantageSchema.parse({})),
  clients: z
    .object({
      local: z.number().int().min(0).default(1).describe("Clients `agentjet train` starts in-process"),
      concurrency: z.number().int().positive().default(8).describe("Episodes per client at once"),
    })
    .default({ local: 1, concurrency: 8 }),
  eval: z
    .object({
      every: z.number().int().min(0).default(0).describe("Evaluate every K steps; 0 disables"),
      split: z.string().default("test"),
      tasks: z.number().int().positive().default(16),
    })
    .default({ every: 0, split: "test", tasks: 16 }),
});
export type RunConfig = z.infer<typeof RunConfigSchema>;
