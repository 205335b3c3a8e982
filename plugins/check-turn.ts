import type { Turn } from "../sdk/env/index.ts";
import type { Failure } from "./runtime.ts";

/** What a finished turn is checked against: the manifest's reward range and the seats the episode plays. */
export interface TurnRules {
  reward: { min: number; max: number };
  /** Agents that must each get a reward when the episode is done (the seats minus the builtin players). */
  rewarded: readonly string[];
}

/**
 * The rule for rewards where they enter from an environment: a finished turn names a finite reward
 * inside the manifest's range for every seat the episode plays. Anything else is the instance's
 * `protocol` failure, never a score.
 */
export function checkTurn(turn: Turn, rules: TurnRules): Failure | null {
  if (!turn.done) return null;
  const rewards = turn.rewards ?? {};
  const missing = rules.rewarded.filter((id) => !Object.hasOwn(rewards, id));
  if (missing.length > 0) {
    return { kind: "protocol", message: `done without a reward for ${missing.map((id) => `'${id}'`).join(", ")}` };
  }
  const { min, max } = rules.reward;
  for (const [agentId, reward] of Object.entries(rewards)) {
    if (!Number.isFinite(reward) || reward < min || reward > max) {
      return { kind: "protocol", message: `reward ${reward} for '${agentId}' is outside the declared range [${min}, ${max}]` };
    }
  }
  return null;
}
