import { z } from "zod";
import { RunStatusSchema } from "./campaign.ts";

/** What `agentjet sweep --json` prints, one JSON object per line. */

const FinalSchema = z.object({
  /** Held-out success of the last evaluation, mean over environments (null: not evaluated). */
  greedy: z.number().nullable(),
  sampled: z.number().nullable(),
  /** Mean training reward over the last quarter of steps (null: no step ran). */
  reward: z.number().nullable(),
  steps: z.number().int(),
});
export type FinalMetrics = z.infer<typeof FinalSchema>;

const SpreadSchema = z.object({ mean: z.number(), std: z.number(), min: z.number(), max: z.number(), n: z.number().int() });
export type Spread = z.infer<typeof SpreadSchema>;

/** What names one config of the sweep: its key, its label and its parameter values. */
const ConfigNameShape = { configKey: z.string(), label: z.string(), params: z.record(z.string(), z.unknown()) };

export const RunSummarySchema = z.object({
  id: z.string(),
  ...ConfigNameShape,
  seed: z.number().int(),
  status: RunStatusSchema,
  exitCode: z.number().int().nullable(),
  runDir: z.string(),
  final: FinalSchema.nullable(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const ConfigSummarySchema = z.object({
  ...ConfigNameShape,
  runs: z.array(z.string()),
  seeds: z.array(z.number().int()),
  /** Runs of it that are done: the statistics are over these. */
  done: z.number().int(),
  greedy: SpreadSchema.nullable(),
  sampled: SpreadSchema.nullable(),
  reward: SpreadSchema.nullable(),
});
export type ConfigSummary = z.infer<typeof ConfigSummarySchema>;

/** `summary.json` of a campaign directory, and `sweep-end`'s `summary`. */
export const SweepSummarySchema = z.object({
  name: z.string(),
  campaignDir: z.string(),
  time: z.string(),
  counts: z.record(RunStatusSchema, z.number().int()),
  runs: z.array(RunSummarySchema),
  /** Best first (see `best.by`). */
  configs: z.array(ConfigSummarySchema),
  /** The config with the highest mean greedy success (else sampled, else final reward); null when no run is done. */
  best: z.object({ ...ConfigNameShape, by: z.enum(["greedy", "sampled", "reward"]), mean: z.number() }).nullable(),
  report: z.string(),
});
export type SweepSummary = z.infer<typeof SweepSummarySchema>;

/** A sweep event named `name`: the time it was written, then its own fields. */
function event<E extends string, S extends z.ZodRawShape>(name: E, shape: S) {
  return z.object({ event: z.literal(name), time: z.string(), ...shape });
}

export const SweepEventSchema = z.discriminatedUnion("event", [
  event("sweep-start", {
    name: z.string(),
    campaignDir: z.string(),
    runs: z.number().int(),
    /** Runs this start will launch (a resume skips the done ones). */
    toRun: z.number().int(),
    parallel: z.number().int(),
    resumed: z.boolean(),
  }),
  event("run-start", {
    id: z.string(),
    params: z.record(z.string(), z.unknown()),
    seed: z.number().int(),
    runDir: z.string(),
    /** fresh: from step 0 (a run directory without a checkpoint is emptied first); resume: `train --resume`. */
    mode: z.enum(["fresh", "resume"]),
    pid: z.number().int(),
  }),
  event("run-end", {
    id: z.string(),
    status: RunStatusSchema,
    exitCode: z.number().int().nullable(),
    durationMs: z.number(),
    final: FinalSchema.nullable(),
    /** failed: the last lines the run wrote on standard error. */
    error: z.string().optional(),
  }),
  event("sweep-end", { reason: z.enum(["done", "failed", "interrupted"]), summary: SweepSummarySchema.nullable() }),
  event("log", { message: z.string() }),
  event("error", { code: z.string(), message: z.string() }),
]);
export type SweepEvent = z.infer<typeof SweepEventSchema>;

/** Distributes Omit over the union, so an event is written without its `time`. */
export type SweepEventInput = SweepEvent extends infer E ? (E extends SweepEvent ? Omit<E, "time"> : never) : never;
