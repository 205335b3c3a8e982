import type { StrategyOptions } from "./batching-strategies.ts";
import { groupByGroup, groupEpisodes, hasEqualRewards } from "./group-entries.ts";
import type { PoolEntry } from "./sample-pool.ts";

export interface StalledGroup {
  group: string;
  env: string;
  taskId: string;
  episodeIds: string[];
}

/**
 * The groups to drop from a pool that is full, with nothing running and no batch ready (a pool in that
 * state never trains again: new episodes wait for room, and none that runs can complete a group), oldest
 * first, until `need` episodes are freed: groups short of `groupSize` (a client-driven member that was
 * aborted; a caller's unique group id), then, under `valid-tasks`, complete groups whose rewards are all
 * equal (they never make a batch valid). Only `tasks` and `valid-tasks` wait for whole groups.
 */
export function stalledGroups(entries: readonly PoolEntry[], options: Pick<StrategyOptions, "strategy" | "groupSize">, need: number): StalledGroup[] {
  if (options.strategy !== "tasks" && options.strategy !== "valid-tasks") return [];
  const groups = [...groupByGroup(groupEpisodes(entries, "arrival")).values()];
  const short = groups.filter((g) => g.length < options.groupSize);
  const useless = options.strategy === "valid-tasks" ? groups.filter((g) => g.length >= options.groupSize && hasEqualRewards(g)) : [];
  const out: StalledGroup[] = [];
  let freed = 0;
  for (const g of [...short, ...useless]) {
    if (freed >= need) break;
    out.push({ group: g[0]!.group, env: g[0]!.env, taskId: g[0]!.taskId, episodeIds: g.map((e) => e.episodeId) });
    freed += g.length;
  }
  return out;
}
