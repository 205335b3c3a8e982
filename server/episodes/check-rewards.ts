import type { Episode } from "./episode.ts";

/** An environment's declared reward range (its manifest's `reward`). */
export interface RewardRange {
  min: number;
  max: number;
}

/**
 * The rule for rewards where an episode ends (the `end` route, the swarm's end frame): a finite reward
 * for every agent bound to a policy, each reward inside the environment's declared range when the
 * server knows it. Returns why the rewards are refused, or null. A reward for an id that is no agent
 * of the episode is kept, not refused: an environment reports every seat's reward, its built-in players'
 * too (Werewolves), and a misspelt trained agent's id is refused as that agent's missing reward.
 */
export function checkRewards(episode: Pick<Episode, "agents" | "env">, rewards: Record<string, number>, range: RewardRange | undefined): string | null {
  const missing = Object.entries(episode.agents)
    .filter(([agentId, b]) => b.kind === "policy" && !Object.hasOwn(rewards, agentId))
    .map(([agentId]) => `'${agentId}'`);
  if (missing.length > 0) return `no reward for ${missing.join(", ")}, which ${missing.length === 1 ? "is" : "are"} trained`;
  for (const [agentId, reward] of Object.entries(rewards)) {
    if (!Number.isFinite(reward)) return `reward ${reward} for '${agentId}' is not a finite number`;
    if (range && (reward < range.min || reward > range.max)) {
      return `reward ${reward} for '${agentId}' is outside ${episode.env}'s declared range [${range.min}, ${range.max}]`;
    }
  }
  return null;
}
