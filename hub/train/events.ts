import { z } from "zod";

/**
 * The events of a training run: one home for what `metrics.jsonl` holds, what `--json` prints (one line
 * each) and what the report reads.
 */

const PerEnvSchema = z.object({
  episodes: z.number().int(),
  meanReward: z.number(),
  /** Share of episodes whose reward reached the environment's top reward. */
  success: z.number(),
});

/** Trained agents of one role in one environment (`<env>/<role>`), e.g. werewolves/werewolf. */
const PerRoleSchema = z.object({
  agents: z.number().int(),
  meanReward: z.number(),
  success: z.number(),
});

const PerPolicySchema = z.object({
  samples: z.number().int(),
  meanReward: z.number(),
  loss: z.number(),
  tokens: z.number().int(),
  gradNorm: z.number(),
  trainMs: z.number(),
  /** With `merging.prefixTree`: the tokens the step computed as prefix tries (shared prefixes once), against `tokens`. */
  treeTokens: z.number().int().optional(),
});

/**
 * The event format this code writes (the `start` event's `format`). 2: a failed evaluation is an
 * `eval-failed` event. A session whose start has no format (1) said so only in a log line's words, which
 * the report parses as a fallback for those sessions alone.
 */
export const EVENTS_FORMAT = 2;

/** An event of type `type`: the time it was written, then its own fields. */
function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ type: z.literal(type), time: z.string(), ...shape });
}

export const RunEventSchema = z.discriminatedUnion("type", [
  event("start", {
    runDir: z.string(),
    steps: z.number().int(),
    resumedFrom: z.number().int().optional(),
    policies: z.array(z.string()),
    environments: z.array(z.string()),
    /** The event format of this session (EVENTS_FORMAT); absent in runs written before it was recorded (1). */
    format: z.number().int().optional(),
  }),
  event("step", {
    step: z.number().int(),
    version: z.number().int(),
    durationMs: z.number(),
    episodesPerS: z.number(),
    perEnv: z.record(z.string(), PerEnvSchema),
    perRole: z.record(z.string(), PerRoleSchema).optional(),
    perPolicy: z.record(z.string(), PerPolicySchema),
    filteredGroups: z.number().int(),
    /** Groups trained on (after filtering); absent in runs written before it was recorded. */
    trainedGroups: z.number().int().optional(),
    /**
     * Groups trained on per environment (after filtering): the mix the step trained, to set against the
     * mixing weights (`perEnv` counts the episodes that finished since the last step, trained or not);
     * absent in runs written before it was recorded.
     */
    trainedGroupsPerEnv: z.record(z.string(), z.number().int()).optional(),
    failures: z.record(z.string(), z.number().int()),
    /** Groups failed for good since the last step, and their ended episodes dropped from the pool (never trained). */
    failedGroups: z.object({ groups: z.number().int(), episodes: z.number().int() }).optional(),
    merging: z.object({ callTokens: z.number().int(), sampleTokens: z.number().int() }),
  }),
  event("eval", {
    step: z.number().int(),
    env: z.string(),
    split: z.string(),
    ...PerEnvSchema.shape,
    /** greedy: temperature 0; sampled: at `temperature`. Absent in runs written before both were measured. */
    mode: z.enum(["greedy", "sampled"]).optional(),
    temperature: z.number().optional(),
    /** init: the weights before the warm-start; rl: from the first RL step's weights on. */
    stage: z.enum(["init", "rl"]).optional(),
    /** Episodes that failed for infrastructure reasons (not scored). */
    failed: z.number().int().optional(),
    /** The most common final reply of the trained agents and its share of episodes. */
    topAnswer: z.string().optional(),
    topAnswerShare: z.number().optional(),
    /** One answer for most inputs while most are wrong: the policy collapsed. */
    collapsed: z.boolean().optional(),
    perRole: z.record(z.string(), z.object({ agents: z.number().int(), success: z.number() })).optional(),
    /** Decisions the environment counted (werewolves): asked of every seat, invalid replies, legal fallbacks. */
    decisions: z
      .object({
        total: z.number().int(),
        invalid: z.number().int(),
        fallbacks: z.number().int(),
        /** The same per role of the seats asked (the environment's `info.byRole`). */
        byRole: z.record(z.string(), z.object({ total: z.number().int(), invalid: z.number().int(), fallbacks: z.number().int() })).optional(),
      })
      .optional(),
  }),
  /** An evaluation that was due but threw: no `eval` event of that step follows. The log says it in words too; readers take this. */
  event("eval-failed", {
    step: z.number().int(),
    error: z.string(),
    /** The error's stable code (`AJ_ERR_...`), when it has one. */
    code: z.string().optional(),
  }),
  event("warm-start", {
    policy: z.string(),
    step: z.number().int(),
    steps: z.number().int(),
    /** Mean negative log-likelihood of the demonstrations' tokens in the batches since the last event. */
    loss: z.number(),
    /** Share of those demonstrations whose every token has probability above one half (greedy replays them). */
    demoMatch: z.number(),
    demos: z.number().int(),
    elapsedMs: z.number(),
  }),
  event("checkpoint", { step: z.number().int(), version: z.number().int(), path: z.string() }),
  event("episode-end", {
    /** Steps trained when it ended (its batch trains step + 1). */
    step: z.number().int(),
    env: z.string(),
    taskId: z.string(),
    purpose: z.enum(["train", "eval"]),
    episodeId: z.string(),
    clientId: z.string(),
    attempt: z.number().int(),
    /** Mean reward of its trained agents (every agent's when none is trained). */
    reward: z.number(),
    /** The environment code it ran with (hash, and whether a development version); absent from clients that do not say. */
    code: z.object({ hash: z.string(), dev: z.boolean() }).optional(),
    /** Reward parts (`env` and each reward model or judge of the manifest's rewardModels), mean over its trained agents. */
    rewardParts: z.record(z.string(), z.number()).optional(),
  }),
  event("log", { level: z.enum(["info", "warn", "error"]), message: z.string() }),
  event("end", {
    reason: z.enum(["done", "interrupted", "failed"]),
    step: z.number().int(),
    /** Failures and failed groups after the last step (no step event carries them), so the run's totals add up. */
    failures: z.record(z.string(), z.number().int()).optional(),
    failedGroups: z.object({ groups: z.number().int(), episodes: z.number().int() }).optional(),
  }),
]);
export type RunEvent = z.infer<typeof RunEventSchema>;
export type StepEvent = Extract<RunEvent, { type: "step" }>;
export type EvalEvent = Extract<RunEvent, { type: "eval" }>;
export type EpisodeEndEvent = Extract<RunEvent, { type: "episode-end" }>;
export type WarmStartEvent = Extract<RunEvent, { type: "warm-start" }>;
