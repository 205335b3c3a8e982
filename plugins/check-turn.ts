import type { Turn } from "../sdk/env/index.ts";
import type { Failure } from "./runtime.ts";

/** What a turn is checked against: the manifest's reward range and the agents the episode drives. */
export interface TurnRules {
  reward: { min: number; max: number };
  /** The agents the episode drives (the seats minus the builtin players): the only ones a turn may ask to act, and each must get a reward when it is done. */
  rewarded: readonly string[];
}

/**
 * The rule for turns where they enter from an environment: a turn that goes on asks at least one agent
 * to act, and only agents the episode seats and drives (never a built-in player); a finished turn names a
 * finite reward inside the manifest's range for every seat the episode plays. Anything else is the
 * instance's `protocol` failure, never a score (a turn asking no one used to spin the agent loop to
 * `maxTurns` and be scored as a truncated episode at the bottom of the range).
 */
export function checkTurn(turn: Turn, rules: TurnRules): Failure | null {
  if (!turn.done) {
    const asked = Object.keys(turn.observations);
    if (asked.length === 0) {
      return { kind: "protocol", message: "done: false with no observations: a turn that goes on must ask at least one agent to act (or say done: true with rewards)" };
    }
    const unknown = asked.filter((id) => !rules.rewarded.includes(id));
    if (unknown.length > 0) {
      return {
        kind: "protocol",
        message: `observations for ${unknown.map((id) => `'${id}'`).join(", ")}, which ${unknown.length === 1 ? "is" : "are"} not an agent this episode drives (its agents: ${rules.rewarded.map((id) => `'${id}'`).join(", ") || "none"})`,
      };
    }
    return null;
  }
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
