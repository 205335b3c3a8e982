import { groupByTask, groupEpisodes, hasEqualRewards } from "./group-entries.ts";
import type { PoolEntry } from "./sample-pool.ts";

export interface DroppedGroup {
  taskId: string;
  episodes: number;
  reward: number;
}

export interface FilterResult {
  kept: PoolEntry[];
  dropped: DroppedGroup[];
}

/** Dynamic filtering: a group (a task within the batch) whose rewards are all equal carries no signal. */
export function filterEqualRewardGroups(entries: readonly PoolEntry[], enabled: boolean): FilterResult {
  if (!enabled) return { kept: [...entries], dropped: [] };
  const kept: PoolEntry[] = [];
  const dropped: DroppedGroup[] = [];
  for (const [taskId, episodes] of groupByTask(groupEpisodes(entries))) {
    if (hasEqualRewards(episodes)) {
      dropped.push({ taskId, episodes: episodes.length, reward: episodes[0]!.entries[0]!.reward });
    } else {
      for (const ep of episodes) kept.push(...ep.entries);
    }
  }
  return { kept, dropped };
}
