import type { AppWorldEvaluation } from "./appworld-client.ts";

/**
 * How an episode's test results become its reward, all in [0, 1]:
 * - `binary` (default): 1 when every test passes, else 0;
 * - `partial`: the fraction of tests passed;
 * - `agentjet`: AgentJet's shaping (1 + 0.5r when r = 1, else 0.5r, r the pass fraction) divided by 1.5.
 */
export type RewardMode = "binary" | "partial" | "agentjet";
export const REWARD_MODES: readonly RewardMode[] = ["binary", "partial", "agentjet"];

export function passFraction(e: AppWorldEvaluation): number {
  return e.num_tests > 0 ? e.passes.length / e.num_tests : e.success ? 1 : 0;
}

export function computeReward(e: AppWorldEvaluation, mode: RewardMode): number {
  const r = passFraction(e);
  if (mode === "binary") return e.success ? 1 : 0;
  if (mode === "partial") return r;
  return (r >= 1 ? 1 + 0.5 * r : 0.5 * r) / 1.5;
}
