// Type-only imports from the SDK: an installed plugin lives outside this repository.
import type { EnvironmentDefinition } from "../../../sdk/env/define-environment.ts";
import type { Task } from "../../../sdk/env/protocol.ts";
import { createWerewolvesEpisode } from "./episode.ts";
import { referenceWolfReply } from "./reference-wolf.ts";
import { createRng, deriveSeed } from "./rng.ts";
import { dealRoles, PLAYERS } from "./roles.ts";

const COMPACT = "-compact";

/**
 * A task is a seed; its seats and roles are dealt from it, so the run config can bind roles to policies.
 * A `-compact` split (`train-compact`, `test-compact`) holds the same seeds as its base split, played in
 * the compact observation mode (`view: "compact"`).
 */
export function werewolvesTask(split: string, seed: number): Task {
  const roles = dealRoles(seed);
  const data = split.endsWith(COMPACT) ? { seed, view: "compact" } : { seed };
  return { id: `werewolves-${split}-${seed}`, split, data, agents: PLAYERS.map((id) => ({ id, role: roles[id]! })) };
}

export const environment: EnvironmentDefinition = {
  createEpisode: createWerewolvesEpisode,
  generateTasks({ split, seed, count }) {
    const rng = createRng(deriveSeed(seed, split.endsWith(COMPACT) ? split.slice(0, -COMPACT.length) : split));
    const seen = new Set<number>();
    const tasks: Task[] = [];
    while (tasks.length < count) {
      const s = rng.int(2 ** 31);
      if (seen.has(s)) continue;
      seen.add(s);
      tasks.push(werewolvesTask(split, s));
    }
    return tasks;
  },
  solve: referenceWolfReply,
};
