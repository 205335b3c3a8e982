import { z } from "zod";
import { allZeroStep, noWeightMessage } from "./weights.ts";

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
  beta1: z.number().min(0).max(1).default(0.9).describe("Adam first-moment decay"),
  beta2: z.number().min(0).max(1).default(0.99).describe("Adam second-moment decay"),
  weightDecay: z.number().min(0).default(0).describe("Decoupled (AdamW) weight decay"),
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
    baseUrls: z.array(z.string().url()).min(1).describe("vLLM/SGLang replicas serving the policy; calls go to the least loaded"),
    model: z.string().min(1).describe("Base model name the replicas serve"),
    apiKey: z.string().optional().describe("Bearer token for the replicas"),
    maxContext: z.number().int().positive().default(32_768).describe("Longest prompt + output, tokens"),
    trainer: z.object({
      url: z.string().url().describe("The trainer service (agentjet's trainer protocol)"),
      apiKey: z.string().optional().describe("Bearer token for the trainer"),
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
      .describe("lora: each version is an adapter loaded by name; full: the trainer writes full weights and the replicas reload them one at a time, each drained of its running calls first (vLLM: VLLM_SERVER_DEV_MODE=1, started from the publish folder's current link; docs/deploy.md)"),
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
  model: z.string().min(1).describe("Model name sent to the endpoint"),
  apiKey: z.string().optional().describe("Defaults to $OPENAI_API_KEY"),
  temperature: z.number().min(0).optional().describe("Overrides the request's temperature"),
  timeoutMs: z.number().int().positive().default(120_000).describe("A call the endpoint has not answered in this long fails as unavailable (503)"),
});
export type FrozenModelConfig = z.infer<typeof FrozenModelSchema>;

export const ScheduleSchema = z.object({
  kind: z.enum(["constant", "linear", "cosine"]).describe("How the weight moves from start to end"),
  start: z.number().min(0).describe("Weight at step 0"),
  end: z.number().min(0).describe("Weight from `steps` on"),
  steps: z
    .number()
    .int()
    .positive()
    .describe(
      "Optimizer step at which the end weight is reached. Each batch is mixed with the weights of the step it is expected to train in (the steps trained so far plus the batches planned ahead of it), so a schedule follows the optimizer steps: a batch that filtering drops entirely (no step) does not move it",
    ),
});

export const EnvironmentEntrySchema = z.object({
  name: z.string().min(1).describe("Environment name in the registry"),
  version: z.string().optional().describe("Exact version; the lockfile's or the newest when absent"),
  weight: z
    .union([z.number().min(0), ScheduleSchema])
    .default(1)
    .describe(
      "Mixing weight, or a schedule: this environment's share of each batch's batchTasks groups, relative to the other environments' weights. Each scheduled batch holds exactly its quotas (largest remainder over each environment's running deficit, so a small share is not starved); a training step takes groups in the order they finish, so one step's mix can differ from the quotas by a group or two (run.deterministic trains each batch as planned), and batching.filterEqualRewards drops groups without signal whatever their environment: each step event of metrics.jsonl has the mix it trained (`trainedGroupsPerEnv`). 0 leaves the environment out of training (evaluations still play it); at every step some environment needs a positive weight. Its episodes go only to clients that announce it (name@version, and the hash unless allowDev): while no connected client can, its share waits and so does training, and the server's log and /v1/engine/status (`waiting`) say so",
    ),
  split: z.string().default("train").describe("Task split the environment draws training tasks from"),
  evalSplit: z.string().optional().describe("Split this environment's evaluations play; `eval.split` when absent (environments name their held-out splits differently)"),
  roles: z
    .record(z.string(), z.string())
    .describe(
      'Seat -> player. Keys: a role (`werewolf`), its k-th seat (`werewolf#2`) or `*` (every other seat); the most specific wins. Values: a policy (trained), a frozen model, or `@builtin` (the environment plays the seat itself)',
    ),
  options: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("Passed to the environment's data loader, e.g. `{ data: path }` for aime (relative paths resolve from the project directory)"),
  maxTurns: z.number().int().positive().default(64).describe("Environment turns an episode may take before it is cut off (scored the bottom of the reward range); a turn asks every agent whose turn it is"),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A local plugin folder to train from instead of the installed version (relative paths resolve from the project directory): a development version, hashed from its files, with `allowDev` on",
    ),
  allowDev: z
    .boolean()
    .optional()
    .describe(
      "Accept clients running a development version of this environment (`agentjet client --env-path DIR [--watch]`, a local plugin being edited) whatever its code hash; otherwise only clients announcing the pinned hash get its episodes. Default: true when `path` is set, false otherwise",
    ),
});
export type EnvironmentEntry = z.infer<typeof EnvironmentEntrySchema>;

export const BatchingSchema = z.object({
  strategy: z
    .enum(["episodes", "tasks", "valid-tasks", "any-client", "all-clients"])
    .default("tasks")
    .describe(
      "When a batch is ready: episodes: batchTasks x groupSize episodes; tasks: batchTasks complete groups; valid-tasks: batchTasks complete groups whose rewards differ; any-client / all-clients: one / every active client agreed to sync (the whole pool)",
    ),
  batchTasks: z.number().int().positive().default(8).describe("Tasks (GRPO groups) per training batch"),
  groupSize: z.number().int().positive().default(8).describe("Episodes per task; advantages are relative within a group"),
  maxCachedEpisodes: z.number().int().positive().default(4096).describe("Warns and stops scheduling past it"),
  filterEqualRewards: z.boolean().default(true).describe("Drop groups whose rewards are all equal"),
  infraRetries: z.number().int().min(0).default(2).describe("Retries of an infrastructure-failed episode"),
  clientIdleS: z.number().positive().default(600).describe("all-clients: a client drops out after this idle"),
});

export const MergingSchema = z.object({
  match: z
    .enum(["text", "token"])
    .default("text")
    .describe("How a call is found to extend an earlier one: by rendered text (then confirmed by token ids) or by token ids"),
  ignoreTools: z
    .boolean()
    .default(true)
    .describe("Compare tool definitions as canonical JSON (key order ignored) instead of as sent; differing definitions always start a new sample"),
  overflow: z
    .enum(["drop", "keep"])
    .default("drop")
    .describe(
      "Calls that overflowed the context: an overflowed call generates nothing, so neither setting trains on it; `drop` counts it as an overflow, `keep` passes it on like any call (counted as empty)",
    ),
  prefixTree: z
    .boolean()
    .default(true)
    .describe(
      "Train on prefix tries: samples that share a prefix (retried calls, n > 1 branches of one prompt) compute it once, each token attending only to its own root-to-leaf path, so loss, gradients and step equal the flat samples' (to float rounding). The embedded engine puts the samples that share a prefix in one trie, split where they share least when a trie would cost more than 2 full-context samples (attention entries plus per-token work); a trainer service gets the trie as the train request's optional `tree`. Steps report the tokens computed (`treeTokens`); false trains every sample flat",
    ),
});

export const AdvantageSchema = z.object({
  eps: z.number().positive().default(1e-6).describe("Added to the group's reward std before dividing"),
  baseline: z.enum(["sample", "episode"]).default("episode").describe("Mean/std over episodes or samples"),
  lossWeight: z.enum(["none", "per-episode"]).default("none").describe("per-episode: 1/N for N samples"),
});

export const SamplingSchema = z.object({
  temperature: z.number().min(0).default(1).describe("Sampling temperature of trained policies (a request's own wins)"),
  topP: z.number().gt(0).max(1).default(1).describe("Nucleus sampling mass"),
  maxTokens: z.number().int().positive().default(16).describe("Tokens a call may generate when the request does not say (clipped to the room left in the context; raised to the shortest answer a `response_format` allows)"),
  overflow: z
    .enum(["length", "error"])
    .default("length")
    .describe("A prompt that does not fit the context: answer finish_reason length (AgentJet's way) or OpenAI's 400 context_length_exceeded"),
});

export const WarmStartSchema = z.object({
  steps: z.number().int().min(0).default(0).describe("Supervised steps before RL (0 skips the stage); the run's `run.steps` count RL steps only"),
  batch: z.number().int().positive().default(16).describe("Demonstrations per supervised step"),
  source: z
    .enum(["solver", "jsonl", "checkpoint"])
    .default("solver")
    .describe(
      "solver: the environments' reference solver (`solve`) plays the policies' seats on `split`; jsonl: conversations from `path`; checkpoint: another run's weights (`path`, a run directory or a checkpoint folder) with no supervised steps",
    ),
  split: z.string().default("train").describe("solver: the split whose tasks are demonstrated"),
  tasks: z.number().int().positive().default(2000).describe("solver: tasks demonstrated per environment (the first N of the split)"),
  path: z
    .string()
    .optional()
    .describe('jsonl: one `{"messages": [{"role", "content"}...], "policy"?: name}` per line (every assistant message is trained on); checkpoint: the weights to start from. Relative to the project directory'),
  lr: z.number().positive().default(3e-3).describe("Adam learning rate of the supervised steps (the policy's optimizer otherwise)"),
  logEvery: z.number().int().positive().default(50).describe("A `warm-start` progress event every K supervised steps"),
});
export type WarmStartConfig = z.infer<typeof WarmStartSchema>;

export const RunConfigSchema = z.object({
  run: z
    .object({
      dir: z.string().default("runs/latest").describe("Run directory (config, run.db, metrics, checkpoints)"),
      seed: z.number().int().default(0).describe("Seeds task order and sampling"),
      steps: z.number().int().positive().default(20).describe("Optimizer steps each policy runs; the run ends when every policy has them (a policy that gets there first trains no further while the others catch up)"),
      checkpointEvery: z.number().int().positive().default(5).describe("Write a checkpoint every K steps (and always at the end or on Ctrl-C)"),
      deterministic: z
        .boolean()
        .default(false)
        .describe(
          "The same config and seed train the same episodes in the same batches and give the same weights (bit for bit on the embedded engine; `--deterministic`): each batch is played to its end before it trains and the next starts, every policy call samples with a seed from (run.seed, episode, call), batches are ordered by group, evaluation waits for its step. Slower (clients idle at each batch's tail). Needs a pool-decided strategy (episodes, tasks, valid-tasks); frozen models are external and not seeded",
        ),
      init: z
        .string()
        .optional()
        .describe("Start every policy from this checkpoint's weights (a run directory, a checkpoint folder or a policy folder; `--from`): version 0, a fresh optimizer, the KL reference set to these weights"),
    })
    .default({ dir: "runs/latest", seed: 0, steps: 20, checkpointEvery: 5, deterministic: false }),
  server: z
    .object({
      host: z
        .string()
        .default("127.0.0.1")
        .describe("Address the server listens on. Beyond loopback (e.g. 0.0.0.0 for remote clients) the tokens must be set first (server.auth, the environment or <run.dir>/tokens.json)"),
      port: z.number().int().min(0).max(65535).default(8700).describe("0 picks a free port"),
      keySecret: z.string().optional().describe("HMAC secret for episode keys; $AGENTJET_KEY_SECRET, else random"),
      idleTimeoutS: z.number().positive().default(120).describe("Claimed episodes idle this long are reclaimed"),
      syncTimeoutS: z.number().positive().default(60).describe("How long in-flight episodes may finish before a weight update abandons them"),
      bodyLimitBytes: z.number().int().positive().default(4 * 1024 * 1024).describe("Largest request body"),
      auth: z
        .object({
          adminToken: z
            .string()
            .min(16)
            .optional()
            .describe("Token of the admin routes (configure, start and stop the engine; read recorded episodes and calls), accepted wherever a client token is; else $AGENTJET_ADMIN_TOKEN, else <run.dir>/tokens.json, else generated into it"),
          clientTokens: z
            .array(z.string().min(16))
            .optional()
            .describe("Tokens swarm clients present (begin, claim, end and abort episodes; connect to /swarm); else $AGENTJET_CLIENT_TOKEN, else <run.dir>/tokens.json, else one generated with the admin token"),
        })
        .default({})
        .describe("Control-plane tokens (Authorization: Bearer <token>); the OpenAI routes use episode keys instead"),
      allowedHosts: z
        .array(z.string().min(1))
        .default([])
        .describe("Host names, besides localhost, 127.0.0.0/8 and ::1, that requests arriving on a loopback address may name in Host (guards against DNS rebinding)"),
      maxRegisteredEpisodes: z
        .number()
        .int()
        .positive()
        .default(4096)
        .describe("Registered-but-unclaimed episodes at most; POST /v1/episodes past it answers 429"),
    })
    .default({
      host: "127.0.0.1",
      port: 8700,
      idleTimeoutS: 120,
      syncTimeoutS: 60,
      bodyLimitBytes: 4 * 1024 * 1024,
      auth: {},
      allowedHosts: [],
      maxRegisteredEpisodes: 4096,
    }),
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
  warmStart: WarmStartSchema.optional().describe("A supervised stage before RL (a policy that can already do the format learns from RL; one that cannot collapses)"),
  eval: z
    .object({
      every: z.number().int().min(0).default(0).describe("Evaluate every K steps (and at step 0, before and after the warm-start); 0 disables"),
      split: z.string().default("test").describe("Split evaluated (an environment's `evalSplit` overrides it); eval episodes never enter a batch"),
      tasks: z.number().int().positive().default(16).describe("Tasks per evaluation, one episode each, per environment and mode"),
      modes: z
        .array(z.enum(["greedy", "sampled"]))
        .min(1)
        .default(["greedy", "sampled"])
        .describe("greedy: temperature 0; sampled: at `temperature`. Success of each is reported side by side"),
      temperature: z.number().min(0).optional().describe("Temperature of the sampled evaluation; `sampling.temperature` when absent"),
    })
    .default({ every: 0, split: "test", tasks: 16, modes: ["greedy", "sampled"] }),
}).superRefine((c, ctx) => {
  const zero = allZeroStep(c.environments.map((e) => e.weight));
  if (zero !== null) ctx.addIssue({ code: "custom", path: ["environments"], message: noWeightMessage(zero) });
  if (c.run.deterministic && (c.batching.strategy === "any-client" || c.batching.strategy === "all-clients")) {
    ctx.addIssue({
      code: "custom",
      path: ["batching", "strategy"],
      message: `run.deterministic needs a strategy the pool decides (episodes, tasks or valid-tasks): '${c.batching.strategy}' syncs when clients agree, which depends on timing`,
    });
  }
});
export type RunConfig = z.infer<typeof RunConfigSchema>;

