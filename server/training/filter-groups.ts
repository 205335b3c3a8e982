import { groupByGroup, groupEpisodes, hasEqualRewards, type PoolOrder } from "./group-entries.ts";
import type { PoolEntry } from "./sample-pool.ts";

export interface DroppedGroup {
  /** The group's identity (`groupKey`), its environment and task. */
  group: string;
  env: string;
  taskId: string;
  episodes: number;
  reward: number;
}

export interface FilterResult {
  kept: PoolEntry[];
  dropped: DroppedGroup[];
}

/** Dynamic filtering: a group whose rewards are all equal carries no signal. Kept entries come in `order`. */
export function filterEqualRewardGroups(entries: readonly PoolEntry[], enabled: boolean, order: PoolOrder = "arrival"): FilterResult {
  if (!enabled) return { kept: [...entries], dropped: [] };
  const kept: PoolEntry[] = [];
  const dropped: DroppedGroup[] = [];
  for (const [group, episodes] of groupByGroup(groupEpisodes(entries, order))) {
    if (hasEqualRewards(episodes)) {
      const first = episodes[0]!;
      dropped.push({ group, env: first.env, taskId: first.taskId, episodes: episodes.length, reward: first.entries[0]!.reward });
    } else {
      for (const ep of episodes) kept.push(...ep.entries);
    }
  }
  return { kept, dropped };
}
