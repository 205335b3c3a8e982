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
});

export const RunEventSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("start"),
    time: z.string(),
    runDir: z.string(),
    steps: z.number().int(),
    resumedFrom: z.number().int().optional(),
    policies: z.array(z.string()),
    environments: z.array(z.string()),
  }),
  z.object({
    type: z.literal("step"),
    time: z.string(),
    step: z.number().int(),
    version: z.number().int(),
    durationMs: z.number(),
    episodesPerS: z.number(),
    perEnv: z.record(z.string(), PerEnvSchema),
    perRole: z.record(z.string(), PerRoleSchema).optional(),
    perPolicy: z.record(z.string(), PerPolicySchema),
    filteredGroups: z.number().int(),
    failures: z.record(z.string(), z.number().int()),
    /** Groups failed for good since the last step, and their ended episodes dropped from the pool (never trained). */
    failedGroups: z.object({ groups: z.number().int(), episodes: z.number().int() }).optional(),
    merging: z.object({ callTokens: z.number().int(), sampleTokens: z.number().int() }),
  }),
  z.object({
    type: z.literal("eval"),
    time: z.string(),
    step: z.number().int(),
    env: z.string(),
    split: z.string(),
    episodes: z.number().int(),
    meanReward: z.number(),
    success: z.number(),
  }),
  z.object({
    type: z.literal("checkpoint"),
    time: z.string(),
    step: z.number().int(),
    version: z.number().int(),
    path: z.string(),
  }),
  z.object({
    type: z.literal("episode-end"),
    time: z.string(),
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
  }),
  z.object({ type: z.literal("log"), time: z.string(), level: z.enum(["info", "warn", "error"]), message: z.string() }),
  z.object({
    type: z.literal("end"),
    time: z.string(),
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
