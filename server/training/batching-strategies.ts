import { groupByGroup, groupEpisodes, hasEqualRewards, type PoolOrder, type PooledEpisode } from "./group-entries.ts";
import type { PoolEntry } from "./sample-pool.ts";

export type StrategyName = "episodes" | "tasks" | "valid-tasks" | "any-client" | "all-clients";

export interface StrategyOptions {
  strategy: StrategyName;
  batchTasks: number;
  groupSize: number;
  /** Which episodes and groups come first (default `arrival`; deterministic mode: `planned`). */
  order?: PoolOrder;
}

/** The clients' side of a sync decision (`any-client`, `all-clients`). */
export interface ClientsView {
  active: readonly string[];
  agreed: ReadonlySet<string>;
}

export type BatchSelection =
  | { ready: false; reason: string }
  /** `take`: the pooled units of the episodes that go into the step (before dynamic filtering). */
  | { ready: true; take: PoolEntry[] };

/**
 * Decides, for one policy's pool, whether a batch is ready and which episodes it holds:
 * - `episodes` (C1): >= batchTasks x groupSize episodes; the oldest that many.
 * - `tasks` (C2): batchTasks tasks with >= groupSize episodes each; the first complete tasks, the oldest
 *   groupSize episodes of each.
 * - `valid-tasks` (C3): like `tasks`, counting only complete groups whose rewards are not all equal; the
 *   complete all-equal groups come along so that the filter drops (and counts) them.
 * - `any-client` (C4): an active client agreed to sync; the whole pool.
 * - `all-clients` (C5): every active client (at least one) agreed; the whole pool.
 */
export function selectBatch(entries: readonly PoolEntry[], options: StrategyOptions, clients: ClientsView): BatchSelection {
  const order = options.order ?? "arrival";
  const episodes = groupEpisodes(entries, order);
  const { batchTasks, groupSize } = options;
  switch (options.strategy) {
    case "episodes": {
      const need = batchTasks * groupSize;
      if (episodes.length < need) return { ready: false, reason: `${episodes.length}/${need} episodes` };
      return { ready: true, take: flatten(episodes.slice(0, need)) };
    }
    case "tasks": {
      const groups = completeGroups(episodes, groupSize, order);
      if (groups.length < batchTasks) return { ready: false, reason: `${groups.length}/${batchTasks} complete tasks` };
      return { ready: true, take: flatten(groups.slice(0, batchTasks).flat()) };
    }
    case "valid-tasks": {
      const groups = completeGroups(episodes, groupSize, order);
      const valid = groups.filter((g) => !hasEqualRewards(g));
      if (valid.length < batchTasks) return { ready: false, reason: `${valid.length}/${batchTasks} valid tasks` };
      const chosen = new Set(valid.slice(0, batchTasks));
      return { ready: true, take: flatten(groups.filter((g) => chosen.has(g) || hasEqualRewards(g)).flat()) };
    }
    case "any-client":
    case "all-clients": {
      const agreedActive = clients.active.filter((c) => clients.agreed.has(c));
      const ok =
        options.strategy === "any-client"
          ? agreedActive.length > 0
          : clients.active.length > 0 && agreedActive.length === clients.active.length;
      if (!ok) return { ready: false, reason: `${agreedActive.length}/${clients.active.length} active clients agreed` };
      if (episodes.length === 0) return { ready: false, reason: "clients agreed but the pool is empty" };
      return { ready: true, take: flatten(episodes) };
    }
  }
}

/** Groups whose first groupSize episodes have ended: in the order those groups completed, or (`planned`) by group. */
function completeGroups(episodes: readonly PooledEpisode[], groupSize: number, order: PoolOrder): PooledEpisode[][] {
  const groups: PooledEpisode[][] = [];
  for (const list of groupByGroup(episodes).values()) {
    if (list.length >= groupSize) groups.push(list.slice(0, groupSize));
  }
  return order === "planned" ? groups : groups.sort((a, b) => a[a.length - 1]!.seq - b[b.length - 1]!.seq);
}

function flatten(episodes: readonly PooledEpisode[]): PoolEntry[] {
  return episodes.flatMap((e) => e.entries);
}
