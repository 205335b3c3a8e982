import type { EpisodeEndEvent, RunEvent } from "../train/events.ts";

/** Training rewards of one environment's code version (a hot swap under `--watch` starts a new one). */
export interface CodeVersionRow {
  env: string;
  /** The code hash; "unknown" for episodes whose client did not report it. */
  hash: string;
  dev: boolean;
  episodes: number;
  meanReward: number;
  /** Steps trained when its first and last episode ended. */
  firstStep: number;
  lastStep: number;
}

/** Training episodes' rewards split by (environment, code hash), in the order the versions first ran. */
export function rewardsByCodeVersion(events: readonly RunEvent[]): CodeVersionRow[] {
  const rows = new Map<string, CodeVersionRow & { total: number }>();
  for (const e of events) {
    if (e.type !== "episode-end" || e.purpose !== "train") continue;
    const hash = (e as EpisodeEndEvent).code?.hash ?? "unknown";
    const key = `${e.env}\u0000${hash}`;
    let row = rows.get(key);
    if (!row) {
      row = { env: e.env, hash, dev: e.code?.dev ?? false, episodes: 0, meanReward: 0, total: 0, firstStep: e.step, lastStep: e.step };
      rows.set(key, row);
    }
    row.episodes += 1;
    row.total += e.reward;
    row.meanReward = row.total / row.episodes;
    row.lastStep = e.step;
  }
  return [...rows.values()].map(({ total: _total, ...row }) => row);
}
