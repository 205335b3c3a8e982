import { REWARD_MODES, type RewardMode } from "./reward.ts";

/** Per-task settings, carried in `task.data` (the prepare hook writes them from `--option k=v`). */
export interface TaskOptions {
  /** Agent turns before the episode is evaluated as it stands (default 25, AgentJet's AppWorld cap). */
  maxSteps: number;
  /** See `RewardMode` (default `binary`). */
  reward: RewardMode;
  /** AppWorld's `timeout_seconds` for one execution (default 100, AppWorld's own). */
  executionTimeoutS: number;
}

export const DEFAULT_TASK_OPTIONS: TaskOptions = { maxSteps: 25, reward: "binary", executionTimeoutS: 100 };

function positiveInt(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === "string" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 10_000) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** Reads the options of `task.data` (an object or nothing), strings allowed as they come from the command line. */
export function readTaskOptions(data: unknown): TaskOptions {
  const d = data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  const reward = d["reward"] ?? DEFAULT_TASK_OPTIONS.reward;
  if (!REWARD_MODES.includes(reward as RewardMode)) throw new Error(`reward must be one of ${REWARD_MODES.join(", ")}, got ${JSON.stringify(reward)}`);
  return {
    maxSteps: positiveInt(d["maxSteps"], "maxSteps") ?? DEFAULT_TASK_OPTIONS.maxSteps,
    reward: reward as RewardMode,
    executionTimeoutS: positiveInt(d["executionTimeoutS"], "executionTimeoutS") ?? DEFAULT_TASK_OPTIONS.executionTimeoutS,
  };
}
