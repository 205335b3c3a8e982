import type { RunEvent } from "../train/events.ts";

/** The mean of one reward part (the environment's `env`, a reward model, a judge) over an environment's training episodes. */
export interface RewardPartRow {
  env: string;
  part: string;
  episodes: number;
  mean: number;
  /** Mean over the first and last quarter of those episodes. */
  first: number;
  last: number;
}

/** Reward parts of the training episodes scored by reward models or judges (manifest `rewardModels`). */
export function rewardPartRows(events: readonly RunEvent[]): RewardPartRow[] {
  const series = new Map<string, number[]>();
  for (const e of events) {
    if (e.type !== "episode-end" || e.purpose !== "train" || !e.rewardParts) continue;
    for (const [part, v] of Object.entries(e.rewardParts)) {
      const key = `${e.env}\u0000${part}`;
      const list = series.get(key) ?? [];
      list.push(v);
      series.set(key, list);
    }
  }
  const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return [...series.entries()].map(([key, xs]) => {
    const [env, part] = key.split("\u0000") as [string, string];
    const q = Math.max(1, Math.floor(xs.length / 4));
    return { env, part, episodes: xs.length, mean: mean(xs), first: mean(xs.slice(0, q)), last: mean(xs.slice(-q)) };
  });
}
