import type { PoolEntry } from "./sample-pool.ts";

/** The pooled units of one episode (one per trained agent), in arrival order. */
export interface PooledEpisode {
  episodeId: string;
  taskId: string;
  env: string;
  /** Its GRPO group (`groupKey`). */
  group: string;
  clientId: string | null;
  /** Arrival of the episode's first unit. */
  seq: number;
  entries: PoolEntry[];
}

/**
 * The order of a pool's episodes: `arrival` (oldest first), or `planned` (deterministic mode: by group,
 * then episode id, then agent; the same whichever episode happened to end first).
 */
export type PoolOrder = "arrival" | "planned";

/** Entries to episodes, in `order` (default oldest first). */
export function groupEpisodes(entries: readonly PoolEntry[], order: PoolOrder = "arrival"): PooledEpisode[] {
  const byId = new Map<string, PooledEpisode>();
  for (const e of entries) {
    const ep = byId.get(e.episodeId);
    if (ep) ep.entries.push(e);
    else byId.set(e.episodeId, { episodeId: e.episodeId, taskId: e.taskId, env: e.env, group: e.group, clientId: e.clientId, seq: e.seq, entries: [e] });
  }
  const episodes = [...byId.values()];
  if (order === "arrival") return episodes.sort((a, b) => a.seq - b.seq);
  for (const ep of episodes) ep.entries.sort((a, b) => compareText(a.agentId, b.agentId));
  return episodes.sort((a, b) => compareText(a.group, b.group) || compareText(a.episodeId, b.episodeId));
}

/** Code-unit order (not the locale's), so that the planned order is the same on every machine. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Episodes per GRPO group (never per bare task id), each list oldest first; groups in order of their first episode. */
export function groupByGroup(episodes: readonly PooledEpisode[]): Map<string, PooledEpisode[]> {
  const out = new Map<string, PooledEpisode[]>();
  for (const ep of episodes) {
    const list = out.get(ep.group);
    if (list) list.push(ep);
    else out.set(ep.group, [ep]);
  }
  return out;
}

/**
 * True when every unit of the group that has something to train earned the same reward (no GRPO signal).
 * A unit without samples (its agent made no trainable call) counts toward the group's size, never toward
 * its signal: its reward does not come from anything the policy did.
 */
export function hasEqualRewards(episodes: readonly PooledEpisode[]): boolean {
  let first: number | undefined;
  for (const ep of episodes) {
    for (const e of ep.entries) {
      if (e.sampleCount === 0) continue;
      if (first === undefined) first = e.reward;
      else if (Math.abs(e.reward - first) > 1e-12) return false;
    }
  }
  return true;
}
